package model

import (
	"fmt"
	"reflect"
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

// BenchmarkDecodeAny: a create payload through DecodeAny, the create and
// update path's one decoding of the body.
func BenchmarkDecodeAny(b *testing.B) {
	body := mustJSONf(validPayload())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeAny(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeAnyStd is BenchmarkDecodeAny through CheckJSON and
// encoding/json alone (decodeAnyStd): what the strict decoder saves.
func BenchmarkDecodeAnyStd(b *testing.B) {
	body := mustJSONf(validPayload())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeAnyStd(body); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeAnyStd is DecodeAny through CheckJSON and encoding/json alone, the
// reference the one-pass decoder must agree with.
func decodeAnyStd(b []byte) (any, error) {
	if err := CheckJSON(b); err != nil {
		return nil, err
	}
	return decodeStd(b)
}

// decodeCases are bodies for DecodeAny beyond checkJSONCases: every kind of
// value, escapes, numbers as written, whitespace everywhere.
var decodeCases = []string{
	` { "a" : [ 1 , -0 , 1.5e3 , 2E-2 , 0.0 , 12345678901234567890123 ] , "b" : { } , "c" : [ ] , "d" : null , "e" : true , "f" : false } `,
	"\t\r\n{\"url\":\"https://x.org/\\u00e9\\n\\t\\\"\\\\\\/\",\"metadata\":{\"k\\u0020\":\"\\ud83d\\ude00 😀 é \u2028\"}}\n",
	`"top string"`, `12`, `-1.0e+5`, `true`, `null`, `[]`, `{}`, `[[],[{}],{"a":[]}]`,
	`{"a":{"b":{"c":{"d":{"e":[{"f":"g"}]}}}}}`,
	`{"a":1,"b":{"a":2,"b":{"a":3}},"c":[{"a":1},{"a":1}]}`,
	`{"x":"\u0000\u001f"}`, `{"x\u0000":1,"x":2}`, `{"":1,"\u0000":2}`, `{"":1,"":2}`,
	`[` + strings.Repeat(`{"a":[`, 7) + `1` + strings.Repeat(`]}`, 7) + `]`,
	`[` + strings.Repeat(`{"a":[`, 8) + `1` + strings.Repeat(`]}`, 8) + `]`,
	`{"a":1,"b":[` + strings.Repeat("[", 16) + strings.Repeat("]", 16) + `],"a":2}`,
	`{"a":1,"a":2,"b":` + strings.Repeat("[", 17) + strings.Repeat("]", 17) + `}`,
	`{"url":1,"metadata":"x",}`, `[1,2`, `{"a" 1}`, `nul`, `01`, `{"a":"\x"}`,
	`[1,]`, `{"a":1,}`, `"\u12"`, `"\u12g4"`, `"\q"`, `-`, `-a`, `1.`, `1e`, `1e+`, `.5`, `+1`, `tru`, `nulll`, `truex`,
	"\"a\tb\"", "\"a\x01\"", `{} x`, `[1 2]`, `{"a" "b"}`, `{1:2}`, `{"a":1 "b":2}`, `[`, `{`, `"abc`, `"abc\`,
	"\ufeff{}", `[-0.0e-0,0E+1,1.25]`, `{"a":[1,{"b":"\u00e9\ud83d\ude00"}],"c":"\/\b\f"}`, `{"dup":1,"x":[1,],"dup":2}`,
	`{"x":[1,],"dup":1,"dup":2}`, `{"dup":1,"dup":2} x`,
}

func TestDecodeAnyAgrees(t *testing.T) {
	var bodies []string
	for _, c := range checkJSONCases {
		bodies = append(bodies, c.body)
	}
	bodies = append(bodies, decodeCases...)
	bodies = append(bodies, string(mustJSONf(validPayload())), "{\"a\":\"\xff\"}", "")
	for _, b := range bodies {
		checkDecodeAgrees(t, []byte(b))
	}
}

func checkDecodeAgrees(t *testing.T, b []byte) {
	t.Helper()
	got, gerr := DecodeAny(b)
	want, werr := decodeAnyStd(b)
	if errText(gerr) != errText(werr) || fmt.Sprintf("%T", gerr) != fmt.Sprintf("%T", werr) {
		t.Fatalf("DecodeAny(%q): error %v, encoding/json: %v", b, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeAny(%q) = %#v, encoding/json: %#v", b, got, want)
	}
}

// FuzzDecodeAny: the one-pass decoder and encoding/json agree on any bytes,
// values and errors alike.
func FuzzDecodeAny(f *testing.F) {
	for _, c := range checkJSONCases {
		f.Add([]byte(c.body))
	}
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeAgrees(t, b)
	})
}
