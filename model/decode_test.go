package model

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkJSONCases are bodies whose CheckJSON verdict must not depend on the
// path taken (checkShape for valid JSON, checkTokens otherwise).
var checkJSONCases = []struct{ name, body string }{
	{"valid payload", string(mustJSONf(validPayload()))},
	{"duplicate top-level", `{"url":"a","url":"b"}`},
	{"duplicate nested", `{"m":{"a":1,"b":[{"x":1}],"a":2}}`},
	{"same key in sibling objects", `[{"a":1},{"a":2}]`},
	{"escaped duplicate", `{"a":1,"\u0061":2}`},
	{"escaped quote in key", `{"a\"b":1,"a\"b":2}`},
	{"string values are not keys", `{"a":"a","b":"a"}`},
	{"key-like string in array", `{"a":["a","a"]}`},
	{"many keys then duplicate", "{" + manyKeys(40) + `,"k7":0}`},
	{"many distinct keys", "{" + manyKeys(40) + "}"},
	{"depth 16", strings.Repeat("[", 16) + strings.Repeat("]", 16)},
	{"depth 17", strings.Repeat("[", 17) + strings.Repeat("]", 17)},
	{"duplicate then syntax error", `{"a":1,"a":2,}`},
	{"syntax error then duplicate", `{"a":1,,"a":2}`},
	{"two values", `{} {}`},
	{"scalar", `"x"`},
	{"lone surrogate keys", `{"\ud800":1,"\ud801":2}`},
	{"lone surrogate value", `{"a":["\udc00"]}`},
	{"lone surrogate then syntax error", `{"a":"\ud800",}`},
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCheckJSONPathsAgree(t *testing.T) {
	for _, c := range checkJSONCases {
		t.Run(c.name, func(t *testing.T) {
			got, want := errText(CheckJSON([]byte(c.body))), errText(checkTokens([]byte(c.body)))
			if got != want {
				t.Errorf("CheckJSON(%q) = %q, checkTokens = %q", c.body, got, want)
			}
		})
	}
}

// FuzzCheckJSON: the fast path (checkShape) and the token walk give the same
// verdict on any bytes.
func FuzzCheckJSON(f *testing.F) {
	for _, c := range checkJSONCases {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return // checked before either path
		}
		got, want := errText(CheckJSON(b)), errText(checkTokens(b))
		if got != want {
			t.Fatalf("CheckJSON(%q) = %q, checkTokens = %q", b, got, want)
		}
	})
}

func BenchmarkCheckJSON(b *testing.B) {
	body := mustJSONf(validPayload())
	b.Run("CheckJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			CheckJSON(body)
		}
	})
	b.Run("tokens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			checkTokens(body)
		}
	})
}
