package handlev

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendTargetURL(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            *URLError // nil: accepted
	}{
		{"plain", "https://example.org/a?b=c#d", "https://example.org/a?b=c#d", nil},
		{"scheme case", "HTTPS://Example.org/X", "https://Example.org/X", nil},
		{"port", "https://example.org:8443/x", "https://example.org:8443/x", nil},
		{"port 65535", "https://a.org:65535/", "https://a.org:65535/", nil},
		{"port leading zeros", "https://a.org:0080/", "https://a.org:80/", nil},
		{"port 1", "http://a.org:1", "http://a.org:1", nil},
		{"ipv6", "http://[::1]:8080/x", "http://[::1]:8080/x", nil},
		{"ipv4", "http://192.0.2.1/x", "http://192.0.2.1/x", nil},
		{"trailing dot", "https://a.org./", "https://a.org./", nil},
		{"underscore", "https://_dmarc.a.org/", "https://_dmarc.a.org/", nil},
		{"IDN", "https://bücher.example/", "https://xn--bcher-kva.example/", nil},
		{"punycode kept", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/", nil},
		{"RTL IDN", "https://\u05d0\u05d1.org/", "https://xn--4dbc.org/", nil},
		{"path non-ASCII and bidi encoded", "https://a.org/\u202e", "https://a.org/%E2%80%AE", nil},

		{"RLO in host", "https://\u202eevil.org/", "", errURLHostHidden},
		{"ZWJ in host", "https://e\u200dvil.org/", "", errURLHostHidden},
		{"zero-width space in host", "https://e\u200bvil.org/", "", errURLHostHidden},
		{"soft hyphen in host", "https://e\u00advil.org/", "", errURLHostHidden},
		{"BOM in host", "https://ex\ufeffample.org/", "", errURLHostHidden},
		{"LRI in host", "https://e\u2066vil.org/", "", errURLHostHidden},
		{"variation selector in host", "https://e\ufe0fvil.org/", "", errURLHostHidden},
		{"bidi mix refused by IDNA", "https://a\u05d0.org/", "", errURLHostIDNA},
		{"bad punycode", "https://xn--bogus-.org/", "", errURLHostIDNA},
		{"punycode hiding ZWJ", "https://xn--evil-576a.org/", "", errURLHostIDNA},
		{"zone id", "https://[fe80::1%25eth0]/", "", errURLHostZone},
		{"raw zone id", "https://[fe80::1%eth0]/", "", errURLHostZone},
		{"bad ipv6", "https://[:::1]/", "", errURLHostIPv6},
		{"ipv4 in brackets", "https://[192.0.2.1]/", "", errURLHostIPv6},
		{"IPvFuture", "https://[v1.x]/", "", errURLHostIPv6},
		{"unclosed bracket", "https://[::1/", "", errURLHostIPv6},
		{"junk after bracket", "https://[::1]x/", "", errURLHostIPv6},
		{"empty port", "https://a.org:/", "", errURLPortEmpty},
		{"port too big", "https://a.org:99999/", "", errURLPortRange},
		{"port 65536", "https://a.org:65536/", "", errURLPortRange},
		{"port zero", "https://a.org:0/", "", errURLPortRange},
		{"port long digits", "https://a.org:0000000000000000000080/", "https://a.org:80/", nil},
		{"port not a number", "https://a.org:80a/", "", errURLPortChar},
		{"ipv6 empty port", "https://[::1]:/", "", errURLPortEmpty},
		{"ipv6 port too big", "https://[::1]:70000/", "", errURLPortRange},
		{"empty host", "https:///x", "", errURLHostEmpty},
		{"empty label", "https://a..org/", "", errURLHostLabel},
		{"leading dot", "https://.a.org/", "", errURLHostLabel},
		{"label too long", "https://" + strings.Repeat("a", 64) + ".org/", "", errURLHostLabel},
		{"host too long", "https://" + strings.Repeat("a.", 127) + "org/", "", errURLHostLong},
		{"short IPv4", "http://127.1/", "", errURLHostIPv4},
		{"hex IPv4", "http://0x7f.0.0.1/", "", errURLHostIPv4},
		{"number host", "http://2130706433/", "", errURLHostIPv4},
		{"bad IPv4", "http://999.0.0.1/", "", errURLHostIPv4},
		{"javascript", "javascript:alert(1)", "", errURLScheme},
		{"relative", "/local", "", errURLScheme},
		{"protocol relative", "//a.org/", "", errURLScheme},
		{"ftp", "ftp://a.org/", "", errURLScheme},
		{"backslash", "https://a.org\\@b.org/", "", errURLUserinfo},
		{"percent in host", "https://%65xample.org/", "", errURLHostChar},
		{"invalid UTF-8 host", "https://\xff.example/", "", errURLHostUTF8},
		{"too long", "https://a.org/" + strings.Repeat("a", MaxTargetURL), "", errURLLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendTargetURL([]byte("x:"), []byte(tc.in))
			if tc.err == nil {
				if err != nil || string(got) != "x:"+tc.want {
					t.Fatalf("AppendTargetURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				if err := CheckTargetURL([]byte(tc.in)); err != nil {
					t.Errorf("CheckTargetURL(%q) = %v, want nil", tc.in, err)
				}
				return
			}
			if err != tc.err || string(got) != "x:" {
				t.Fatalf("AppendTargetURL(%q) = %q, %v; want %v", tc.in, got, err, tc.err)
			}
			var ue *URLError
			err = CheckTargetURL([]byte(tc.in))
			if !errors.As(err, &ue) || ue != tc.err || !errors.Is(err, ErrTargetURL) {
				t.Errorf("CheckTargetURL(%q) = %v, want %v wrapping ErrTargetURL", tc.in, err, tc.err)
			}
		})
	}
}

func TestAppendTargetURLAllocs(t *testing.T) {
	in := []byte("https://user@landing.example.org:8443/item/42?q=ä#frag")
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { AppendTargetURL(dst, in) }); n != 0 {
		t.Errorf("AppendTargetURL allocates %v times for an ASCII host", n)
	}
	bad := []byte("https://a.org:99999/")
	if n := testing.AllocsPerRun(100, func() { CheckTargetURL(bad) }); n != 0 {
		t.Errorf("CheckTargetURL allocates %v times for a refused URL", n)
	}
}

// FuzzAppendTargetURL: whatever goes in, an accepted URL comes out as an
// absolute http(s) URL of printable ASCII, is its own canonical form, and
// CheckTargetURL agrees; a refused one leaves dst alone.
func FuzzAppendTargetURL(f *testing.F) {
	for _, s := range []string{
		"https://example.org/a?b=c#d", "https://bücher.example/straße?q=ä#x#y", "http://[::1]:80/%zz",
		"https://\u202eevil.org/", "https://e\u200dvil.org/", "https://[fe80::1%25eth0]/", "https://a.org:/",
		"https://a.org:99999/", "http://127.1/", "https://xn--bcher-kva.example:0080/", "HTTP://u:p@A.ORG.:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := AppendTargetURL([]byte("x:"), []byte(in))
		if err != nil {
			var ue *URLError
			if string(out) != "x:" || !errors.As(err, &ue) {
				t.Fatalf("AppendTargetURL(%q) = %q, %v: refused but wrote, or not a *URLError", in, out, err)
			}
			if CheckTargetURL([]byte(in)) == nil {
				t.Fatalf("CheckTargetURL(%q) accepts what AppendTargetURL refuses (%v)", in, err)
			}
			return
		}
		out = out[2:]
		if !bytes.HasPrefix(out, []byte("http://")) && !bytes.HasPrefix(out, []byte("https://")) {
			t.Fatalf("AppendTargetURL(%q) = %q: not http(s)", in, out)
		}
		for _, c := range out {
			if c <= ' ' || c >= 0x7f {
				t.Fatalf("AppendTargetURL(%q) = %q: byte %#x", in, out, c)
			}
		}
		if len(out) > MaxTargetURL || !utf8.Valid(out) {
			t.Fatalf("AppendTargetURL(%q): %d bytes", in, len(out))
		}
		again, err := AppendTargetURL(nil, out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q → %q → %q (%v)", in, out, again, err)
		}
		if err := CheckTargetURL([]byte(in)); err != nil {
			t.Fatalf("CheckTargetURL(%q) = %v, but AppendTargetURL accepts it", in, err)
		}
	})
}
