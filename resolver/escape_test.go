package resolver

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// escapeByRune is appendEscaped written the plain way, one character at a
// time: the reference the run-copying appendEscaped must match.
func escapeByRune(s []byte, attr bool) []byte {
	var dst []byte
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		switch {
		case r == '&':
			dst = append(dst, "&amp;"...)
		case r == '<':
			dst = append(dst, "&lt;"...)
		case r == '>':
			dst = append(dst, "&gt;"...)
		case r == '"' && attr:
			dst = append(dst, "&#34;"...)
		case r == '\'' && attr:
			dst = append(dst, "&#39;"...)
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f,
			r == utf8.RuneError && size <= 1, r >= 0x80 && r <= 0x9f, r == 0xfffe, r == 0xffff:
			dst = append(dst, "\uFFFD"...)
		default:
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}

func TestAppendEscapedMatchesReference(t *testing.T) {
	var inputs [][]byte
	for c := range 256 {
		inputs = append(inputs, []byte{byte(c)}, []byte{'a', byte(c), 'b'})
	}
	inputs = append(inputs, []byte("https://example.org/a?b=1&c=<2>#\"x\"'y'"), []byte("ü\u0085\ufffe\uffff\xe2\x82"), []byte("\xf0\x9f\x98\x80 emoji"))
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := []byte("aZ09&<>\"'\t\n\r\x00\x7f\xc2\x85\xe2\x82\xac\xef\xbf\xbe\xff/:?=")
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		for _, attr := range []bool{false, true} {
			want := escapeByRune(in, attr)
			if got := appendEscaped([]byte("pre"), in, attr); !bytes.Equal(got, append([]byte("pre"), want...)) {
				t.Fatalf("appendEscaped(%q, attr=%v) = %q, want %q", in, attr, got[3:], want)
			}
			if got := appendEscaped(nil, string(in), attr); !bytes.Equal(got, want) {
				t.Fatalf("appendEscaped(string %q, attr=%v) = %q, want %q", in, attr, got, want)
			}
		}
	}
}
