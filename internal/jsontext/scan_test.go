package jsontext

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestNextStop checks the eight-byte scan against the byte table: for every
// byte value in every position among plain bytes, and for random words, the
// first stop byte it finds is the table's.
func TestNextStop(t *testing.T) {
	want := func(b []byte, j int) int {
		for ; j < len(b); j++ {
			if strStop[b[j]] {
				return j
			}
		}
		return j
	}
	for pos := range 11 {
		for c := range 256 {
			w := []byte("abcdefghijk")
			w[pos] = byte(c)
			if got, want := nextStop(w, 0), want(w, 0); got != want {
				t.Errorf("nextStop(%q) = %d, want %d", w, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("ab\"\\\x00\x1f\x20\x7f\x80\xff~")
	for range 100000 {
		w := make([]byte, rng.IntN(20))
		for i := range w {
			w[i] = alphabet[rng.IntN(len(alphabet))]
		}
		j := rng.IntN(len(w) + 1)
		if got, want := nextStop(w, j), want(w, j); got != want {
			t.Fatalf("nextStop(%q, %d) = %d, want %d", w, j, got, want)
		}
	}
}

// FuzzScanner: Skip accepts exactly what json.Valid accepts (but for nesting
// deeper than MaxDepth), and a string decodes as encoding/json decodes it:
// with Replace always, without it whenever it does not refuse.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, `"\ud83d\ude00 \ud800 \udc00x"`,
		"\"\xff\xc3\"", `[1,]`, `{"a" 1}`, `"\u12"`, `01`, `-`, `[[[[]]]]`, ` "é" `, `{"\u0061":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, replace := range []bool{true, false} {
			s := Scanner{B: b, Replace: replace}
			end, ok := s.Skip(s.Space(0), 0)
			accepted := ok && s.Space(end) == len(b)
			valid := json.Valid(b)
			if accepted && !valid {
				t.Fatalf("Skip (Replace %v) accepted %q, which json.Valid refuses", replace, b)
			}
			if replace && valid && !accepted && countNest(b) < MaxDepth {
				t.Fatalf("Skip refused %q, which json.Valid accepts", b)
			}
			if !replace && valid && !accepted && utf8.Valid(b) && countNest(b) < MaxDepth {
				t.Fatalf("Skip (strict) refused valid UTF-8 %q, which json.Valid accepts", b)
			}
			i := s.Space(0)
			if i >= len(b) || b[i] != '"' {
				continue
			}
			var want string
			werr := json.Unmarshal(b[i:], &want)
			got, e, ok := s.String(i)
			if ok && s.Space(e) == len(b) {
				if werr != nil || string(got) != want {
					t.Fatalf("String(%q) (Replace %v) = %q, encoding/json %q, %v", b, replace, got, want, werr)
				}
			} else if replace && werr == nil {
				t.Fatalf("String(%q) refused, encoding/json gives %q", b, want)
			}
			arena := make([]byte, 0, len(b)+8)
			got2, e2, ok2 := s.AppendString(arena, i)
			if ok2 != ok || (ok && (e2 != e || string(got2) != string(got))) {
				t.Fatalf("AppendString(%q) = %q, %d, %v; String %q, %d, %v", b, got2, e2, ok2, got, e, ok)
			}
		}
	})
}

func countNest(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '[' || c == '{' {
			n++
		}
	}
	return n
}
