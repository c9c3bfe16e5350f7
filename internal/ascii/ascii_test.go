package ascii

import (
	"strings"
	"testing"
)

func TestLowerUpper(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		wantLower, wantUpper := b, b
		if 'A' <= b && b <= 'Z' {
			wantLower = b + 32
		}
		if 'a' <= b && b <= 'z' {
			wantUpper = b - 32
		}
		if got := Lower(b); got != wantLower {
			t.Errorf("Lower(%#x) = %#x, want %#x", b, got, wantLower)
		}
		if got := Upper(b); got != wantUpper {
			t.Errorf("Upper(%#x) = %#x, want %#x", b, got, wantUpper)
		}
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		a, b               string
		equal, prefix, suf bool
	}{
		{"", "", true, true, true},
		{"URL", "url", true, true, true},
		{"Url.Landing", "URL.", false, true, false},
		{"hs_admin", "HS_ADMIN", true, true, true},
		{"URL", "URL.", false, false, false},
		{"application/ld+JSON", "+json", false, false, true},
		{"hdl:21.T1/x", "HDL:", false, true, false},
		{"[", "{", false, false, false},      // 0x5B and 0x7B differ by 0x20 but are not letters
		{"@", "`", false, false, false},      // likewise 0x40 and 0x60
		{"K", "\u212a", false, false, false}, // Kelvin sign: Unicode folding only
		{"é", "É", false, false, false},      // non-ASCII letters do not fold
		{"é", "é", true, true, true},
		{"ab", "abc", false, false, false},
	}
	for _, tt := range tests {
		if got := EqualFold(tt.a, tt.b); got != tt.equal {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.equal)
		}
		if got := EqualFold([]byte(tt.a), tt.b); got != tt.equal {
			t.Errorf("EqualFold([]byte %q, %q) = %v, want %v", tt.a, tt.b, got, tt.equal)
		}
		if got := EqualFold(tt.a, []byte(tt.b)); got != tt.equal {
			t.Errorf("EqualFold(%q, []byte %q) = %v, want %v", tt.a, tt.b, got, tt.equal)
		}
		if got := HasPrefixFold(tt.a, tt.b); got != tt.prefix {
			t.Errorf("HasPrefixFold(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.prefix)
		}
		if got := HasSuffixFold([]byte(tt.a), tt.b); got != tt.suf {
			t.Errorf("HasSuffixFold(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.suf)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	a, b := []byte("Application/JSON"), "application/json"
	n := testing.AllocsPerRun(100, func() {
		if !EqualFold(a, b) || !HasPrefixFold(a, "APPLICATION/") || !HasSuffixFold(b, a[11:]) {
			t.Fatal("fold failed")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzEqualFold checks EqualFold against strings.EqualFold, which agrees with
// ASCII folding on ASCII text; on other text EqualFold must be the bytewise
// comparison of the ASCII-lowered inputs.
func FuzzEqualFold(f *testing.F) {
	for _, s := range [][2]string{{"URL", "url"}, {"URL.meta", "Url.Meta"}, {"[", "{"}, {"K", "\u212a"}, {"hx--", "HX--"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got := EqualFold(a, b)
		if isASCII(a) && isASCII(b) {
			if want := strings.EqualFold(a, b); got != want {
				t.Fatalf("EqualFold(%q, %q) = %v, strings.EqualFold = %v", a, b, got, want)
			}
		} else {
			lower := func(s string) string {
				out := []byte(s)
				for i := range out {
					out[i] = Lower(out[i])
				}
				return string(out)
			}
			if want := lower(a) == lower(b); got != want {
				t.Fatalf("EqualFold(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
		if got != EqualFold([]byte(a), b) || got != EqualFold(b, []byte(a)) {
			t.Fatalf("EqualFold(%q, %q) depends on the argument types or order", a, b)
		}
		if HasPrefixFold(a, b) != (len(a) >= len(b) && EqualFold(a[:len(b)], b)) {
			t.Fatalf("HasPrefixFold(%q, %q) disagrees with EqualFold", a, b)
		}
	})
}
