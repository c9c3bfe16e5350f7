package page

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"pidnode/handlev"
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
			mode := escText
			if attr {
				mode = escAttr
			}
			if got := appendEscaped([]byte("pre"), in, mode); !bytes.Equal(got, append([]byte("pre"), want...)) {
				t.Fatalf("appendEscaped(%q, attr=%v) = %q, want %q", in, attr, got[3:], want)
			}
			if got := appendEscaped(nil, string(in), mode); !bytes.Equal(got, want) {
				t.Fatalf("appendEscaped(string %q, attr=%v) = %q, want %q", in, attr, got, want)
			}
		}
	}
}

// TestAppendShown: characters that are invisible or reorder text come out as
// visible escapes; everything else as AppendText writes it.
func TestAppendShown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://a.org/x", "https://a.org/x"},
		{"https://\u202eevil.org/", `https://<span class="esc">\u202E</span>evil.org/`},
		{"e\u200dvil \u200b\u2066\ufeff", `e<span class="esc">\u200D</span>vil <span class="esc">\u200B</span><span class="esc">\u2066</span><span class="esc">\uFEFF</span>`},
		{"tag \U000E0041", `tag <span class="esc">\U000E0041</span>`},
		{"<ü> \u05d0", "&lt;ü&gt; \u05d0"},
	}
	for _, tc := range tests {
		if got := string(appendShown(nil, tc.in)); got != tc.want {
			t.Errorf("appendShown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestValuesPageIsolatesData: on the ?noredirect page a URL with a bidi
// override is neither a link nor able to reorder its cell: the override is
// shown escaped, and the type and data cells are isolated left-to-right.
func TestValuesPageIsolatesData(t *testing.T) {
	vs := []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://\u202eevil.org/gro.elgoog")},
		{Index: 2, Type: "URL\u202e", Data: []byte("https://a.org/\u2067x")},
	}
	page := string(AppendValues(nil, &Record{Handle: "21.T1/X", Path: []byte("21.T1/X"), Values: vs}, nil))
	for _, want := range []string{
		`<td class="d" dir="ltr">https://<span class="esc">\u202E</span>evil.org/gro.elgoog</td>`,
		`<td class="t" dir="ltr">URL<span class="esc">\u202E</span></td>`,
		`<a href="https://a.org/%E2%81%A7x">https://a.org/<span class="esc">\u2067</span>x</a>`,
		`<link rel="stylesheet" href="` + StylePath + `" />`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("values page lacks %q:\n%s", want, page)
		}
	}
	if want := "td.t,td.d,.v{unicode-bidi:isolate}"; !strings.Contains(style, want) {
		t.Errorf("the pages' style sheet lacks %q", want)
	}
	for _, bad := range []string{"\u202e", "\u2067"} {
		if strings.Contains(page, bad) {
			t.Errorf("values page holds %U raw", []rune(bad)[0])
		}
	}
}

func TestAppendHTML(t *testing.T) {
	tests := []struct{ in, attr, text string }{
		{`<a href="x">&'`, "&lt;a href=&#34;x&#34;&gt;&amp;&#39;", `&lt;a href="x"&gt;&amp;'`},
		{"a\x00b\x1bc\td\n", "a\uFFFDb\uFFFDc\td\n", "a\uFFFDb\uFFFDc\td\n"},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8", "bad \uFFFD\uFFFD utf8"},
		{"c1 \u0085 ok ü€😀", "c1 \uFFFD ok ü€😀", "c1 \uFFFD ok ü€😀"},
		{"cut \xe2\x82", "cut \uFFFD\uFFFD", "cut \uFFFD\uFFFD"},
	}
	for _, tc := range tests {
		if got := string(AppendHTML(nil, tc.in)); got != tc.attr {
			t.Errorf("AppendHTML(%q) = %q, want %q", tc.in, got, tc.attr)
		}
		if got := string(AppendText(nil, []byte(tc.in))); got != tc.text {
			t.Errorf("AppendText(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}
