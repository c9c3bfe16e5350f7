package stdjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// std is what encoding/json writes for x: json.Marshal (escapeHTML), or an
// Encoder with SetEscapeHTML(false) without its newline.
func std(t *testing.T, x any, escapeHTML bool) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var strs = []string{
	"", "a", "plain ascii", `"quoted" \ back\slash /`, "<b>&amp;</b>", "\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x20\x7f",
	"\u0080\u009f\u00a0é日本😀", "\u2028\u2029 \u2027\u202a", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate bytes",
	"trailing \xe2\x82", strings.Repeat("x<", 100),
}

func TestAppendString(t *testing.T) {
	for _, s := range strs {
		for _, esc := range []bool{false, true} {
			want, _ := std(t, s, esc)
			if got := AppendString([]byte("pre"), s, esc); string(got) != "pre"+string(want) {
				t.Errorf("AppendString(%q, %v) = %s, want %s", s, esc, got[3:], want)
			}
		}
	}
	// Every single byte and every rune near the escaped ones.
	for c := 0; c < 256; c++ {
		for _, esc := range []bool{false, true} {
			s := string([]byte{'a', byte(c), 'b'})
			want, _ := std(t, s, esc)
			if got := AppendString(nil, s, esc); !bytes.Equal(got, want) {
				t.Errorf("AppendString(%q, %v) = %s, want %s", s, esc, got, want)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, esc := range []bool{false, true} {
			want, _ := std(t, s, esc)
			if got := AppendString(nil, s, esc); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q, %v) = %s, want %s", s, esc, got, want)
			}
		}
	})
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 3, 11, 9, 43, 14, 0, time.UTC),
		time.Date(2026, 3, 11, 9, 43, 14, 120000000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 11, 9, 43, 14, 1, time.FixedZone("X", -5*3600-30*60)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("Y", 24*3600)),
	} {
		want, err := std(t, tm, true)
		got, ok := AppendTime(nil, tm)
		if ok != (err == nil) || ok && !bytes.Equal(got, want) {
			t.Errorf("AppendTime(%v) = %s, %v; encoding/json: %s, %v", tm, got, ok, want, err)
		}
	}
}

// randValue is a random generic JSON value as json.Decoder with UseNumber
// gives them, with strings from strs and numbers of every JSON form.
func randValue(r *rand.Rand, depth int) any {
	nums := []json.Number{"0", "-0", "1", "-12", "1.5", "1e3", "1E+3", "-2.5e-7", "12345678901234567890123", ""}
	k := r.IntN(7)
	if depth > 4 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return strs[r.IntN(len(strs))]
	case 3:
		return nums[r.IntN(len(nums))]
	case 4, 5:
		m := map[string]any{}
		for i := r.IntN(20); i > 0; i-- {
			m[strs[r.IntN(len(strs))]+string(rune('a'+r.IntN(26)))] = randValue(r, depth+1)
		}
		if r.IntN(10) == 0 {
			return map[string]any(nil)
		}
		return m
	default:
		var a []any
		if r.IntN(10) != 0 {
			a = []any{}
		}
		for i := r.IntN(5); i > 0; i-- {
			a = append(a, randValue(r, depth+1))
		}
		return a
	}
}

func TestAppendValue(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000; i++ {
		x := randValue(r, 0)
		for _, esc := range []bool{false, true} {
			want, err := std(t, x, esc)
			got, ok := AppendValue([]byte("pre"), x, esc)
			if err != nil || !ok {
				t.Fatalf("value %#v: ok %v, encoding/json: %v", x, ok, err)
			}
			if !bytes.Equal(got[3:], want) {
				t.Fatalf("AppendValue(%#v, %v) =\n%s\nwant\n%s", x, esc, got[3:], want)
			}
		}
	}
}

// TestAppendValueRefuses: what encoding/json would encode otherwise, or not
// at all, is left to it.
func TestAppendValueRefuses(t *testing.T) {
	for _, x := range []any{
		1.5, 3, json.Number("01"), json.Number("1."), json.Number("abc"), []string{"a"},
		map[string]string{"a": "b"}, []any{1}, map[string]any{"a": []any{"x", float64(2)}},
	} {
		if _, ok := AppendValue(nil, x, true); ok {
			t.Errorf("AppendValue(%#v) accepted it", x)
		}
	}
}
