package handlev

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestDecodePath(t *testing.T) {
	long := strings.Repeat("A", MaxHandleLen-len("21.T1/"))
	tests := []struct {
		name string
		raw  string
		want string
		err  error
	}{
		{"plain", "21.T12345/svc/K7Q/4XJ2-9MPA-C", "21.T12345/svc/K7Q/4XJ2-9MPA-C", nil},
		{"case kept", "21.t12345/Svc/k7q/abc", "21.t12345/Svc/k7q/abc", nil},
		{"escaped slash", "21.T1%2Fabc%2fdef", "21.T1/abc/def", nil},
		{"plus literal", "21.T1/a+b", "21.T1/a+b", nil},
		{"space escape", "21.T1/a%20b", "21.T1/a b", nil},
		{"utf8 escaped", "21.T1/%C3%A9t%C3%A9", "21.T1/été", nil},
		{"utf8 raw", "21.T1/été", "21.T1/été", nil},
		{"hdl scheme", "hdl:21.T1/abc", "21.T1/abc", nil},
		{"HDL scheme upper", "HDL:21.T1/abc", "21.T1/abc", nil},
		{"doi scheme", "doi:10.1000/182", "10.1000/182", nil},
		{"doi scheme escaped colon", "doi%3A10.1000/182", "10.1000/182", nil},
		{"info hdl", "info:hdl/21.T1/abc", "21.T1/abc", nil},
		{"info doi mixed case", "Info:DOI/10.1000/182", "10.1000/182", nil},
		{"urn hdl colon", "urn:hdl:21.T1:abc", "21.T1/abc", nil},
		{"urn hdl slash", "urn:hdl:21.T1/a:b", "21.T1/a:b", nil},
		{"urn hdl only first colon", "URN:HDL:21.T1:a:b/c", "21.T1/a:b/c", nil},
		{"scheme stripped once", "hdl:doi:10.1/x", "doi:10.1/x", nil},
		{"slashless", "abc", "abc", nil},
		{"dots inside segment", "21.T1/a..b/.c/d.", "21.T1/a..b/.c/d.", nil},
		{"at limit", "21.T1/" + long, "21.T1/" + long, nil},
		{"at limit with scheme", "hdl:21.T1/" + long, "21.T1/" + long, nil},

		{"empty", "", "", ErrEmpty},
		{"only scheme", "hdl:", "", ErrEmpty},
		{"only urn scheme", "urn:hdl:", "", ErrEmpty},
		{"too long", "21.T1/" + long + "B", "", ErrTooLong},
		{"10kB", strings.Repeat("x", 10<<10), "", ErrTooLong},
		{"10kB escaped", strings.Repeat("%41", 10<<10), "", ErrTooLong},
		{"percent at end", "21.T1/abc%", "", ErrBadEscape},
		{"percent one digit", "21.T1/abc%4", "", ErrBadEscape},
		{"percent non-hex", "21.T1/%zz", "", ErrBadEscape},
		{"percent half hex", "21.T1/%4g", "", ErrBadEscape},
		{"invalid utf8 escaped", "21.T1/%FF", "", ErrInvalidUTF8},
		{"invalid utf8 raw", "21.T1/\xc3", "", ErrInvalidUTF8},
		{"overlong utf8", "21.T1/%C0%AF", "", ErrInvalidUTF8},
		{"surrogate utf8", "21.T1/%ED%A0%80", "", ErrInvalidUTF8},
		{"nul escaped", "21.T1/a%00b", "", ErrControl},
		{"nul raw", "21.T1/a\x00b", "", ErrControl},
		{"newline", "21.T1/a%0Ab", "", ErrControl},
		{"del", "21.T1/a%7Fb", "", ErrControl},
		{"dotdot", "21.T1/../etc/passwd", "", ErrDotSegment},
		{"dot", "21.T1/./x", "", ErrDotSegment},
		{"escaped dotdot", "21.T1/%2E%2E/x", "", ErrDotSegment},
		{"escaped slash dotdot", "21.T1%2F..%2Fx", "", ErrDotSegment},
		{"trailing dotdot", "21.T1/x/..", "", ErrDotSegment},
		{"leading dotdot", "..", "", ErrDotSegment},
		{"dotdot after scheme", "hdl:../x", "", ErrDotSegment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePath(nil, []byte(tt.raw))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("DecodePath(%.60q) = %.60q, %v; want error %v", tt.raw, got, err, tt.err)
				}
				if len(got) != 0 {
					t.Errorf("DecodePath(%.60q) returned %q with error; want dst unchanged", tt.raw, got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("DecodePath(%.60q) = %.60q, %v; want %.60q", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestDecodePathAppends(t *testing.T) {
	dst := []byte("keep:")
	got, err := DecodePath(dst, []byte("hdl:21.T1/a%2Fb"))
	if err != nil || string(got) != "keep:21.T1/a/b" {
		t.Fatalf("DecodePath(%q, …) = %q, %v; want %q", "keep:", got, err, "keep:21.T1/a/b")
	}
	got, err = DecodePath(dst, []byte("21.T1/%zz"))
	if err == nil || string(got) != "keep:" {
		t.Fatalf("DecodePath(%q, bad) = %q, %v; want %q and an error", "keep:", got, err, "keep:")
	}
}

func TestDecodePathErrorDetail(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		err    error
		offset int
		b      byte
	}{
		{"bad escape offset", "21.T1/ab%zz", ErrBadEscape, 8, '%'},
		{"nul escaped offset", "21.T1/%41%00", ErrControl, 9, 0},
		{"nul raw offset", "a\x00", ErrControl, 1, 0},
		{"tab offset", "%41%41\t", ErrControl, 6, '\t'},
		{"utf8 offset after escapes", "%41%42%FF", ErrInvalidUTF8, 6, 0xff},
		{"dot segment offset after scheme", "hdl:21.T1/%2E.", ErrDotSegment, 10, '.'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodePath(nil, []byte(tt.raw))
			var he *HandleError
			if !errors.As(err, &he) || !errors.Is(err, tt.err) {
				t.Fatalf("DecodePath(%q) error = %v; want *HandleError wrapping %v", tt.raw, err, tt.err)
			}
			if he.Offset != tt.offset || he.Byte != tt.b {
				t.Errorf("DecodePath(%q) error = {Offset:%d Byte:%#x}; want {Offset:%d Byte:%#x}", tt.raw, he.Offset, he.Byte, tt.offset, tt.b)
			}
			if !strings.Contains(err.Error(), "offset") {
				t.Errorf("DecodePath(%q) error text %q does not name the offset", tt.raw, err)
			}
		})
	}
}

func TestHandleErrorText(t *testing.T) {
	_, err := DecodePath(nil, []byte("21.T1/a%00"))
	if got, want := err.Error(), "handlev: control byte in handle 0x00 at offset 7"; got != want {
		t.Errorf("error text = %q; want %q", got, want)
	}
}

func TestDecodePathAllocs(t *testing.T) {
	dst := make([]byte, 0, MaxHandleLen+maxSchemeLen)
	raw := []byte("info:hdl/21.T12345%2Fsvc/K7Q/4XJ2-9MPA-C%C3%A9")
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if _, err = DecodePath(dst[:0], raw); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("DecodePath allocs = %v; want 0", allocs)
	}
}

func testNamer(t testing.TB) *Namer {
	t.Helper()
	n, err := NewNamer(NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345", Extra: []string{"10.1000", "0.NA"}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNewNamer(t *testing.T) {
	tests := []struct {
		name string
		cfg  NamerConfig
		err  error
	}{
		{"production only", NamerConfig{Prefix: "21.12345"}, nil},
		{"numeric prefix", NamerConfig{Prefix: "123"}, nil},
		{"test prefix", NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"}, nil},
		{"lower t", NamerConfig{Prefix: "21.t12345"}, nil},
		{"deep prefix", NamerConfig{Prefix: "21.T1.2.3"}, nil},
		{"extras", NamerConfig{Prefix: "21.1", Extra: []string{"10.1000", "0.NA", "abc"}}, nil},
		{"svc", NamerConfig{Prefix: "21.1", Svc: "Pid4Cat"}, nil},

		{"missing prefix", NamerConfig{}, ErrBadPrefix},
		{"slash in prefix", NamerConfig{Prefix: "21.1/x"}, ErrBadPrefix},
		{"letters in prefix", NamerConfig{Prefix: "21.ABC"}, ErrBadPrefix},
		{"T first segment", NamerConfig{Prefix: "T21.1"}, ErrBadPrefix},
		{"T third segment", NamerConfig{Prefix: "21.1.T2"}, ErrBadPrefix},
		{"T without digits", NamerConfig{Prefix: "21.T"}, ErrBadPrefix},
		{"TT", NamerConfig{Prefix: "21.TT1"}, ErrBadPrefix},
		{"empty segment", NamerConfig{Prefix: "21..1"}, ErrBadPrefix},
		{"trailing dot", NamerConfig{Prefix: "21.1."}, ErrBadPrefix},
		{"leading dot", NamerConfig{Prefix: ".21"}, ErrBadPrefix},
		{"bad test prefix", NamerConfig{Prefix: "21.1", TestPrefix: "21.X1"}, ErrBadPrefix},
		{"same prefixes", NamerConfig{Prefix: "21.T1", TestPrefix: "21.t1"}, ErrBadPrefix},
		{"extra duplicates production", NamerConfig{Prefix: "21.1", Extra: []string{"21.1"}}, ErrBadPrefix},
		{"extra with slash", NamerConfig{Prefix: "21.1", Extra: []string{"10.1000/x"}}, ErrBadPrefix},
		{"empty extra", NamerConfig{Prefix: "21.1", Extra: []string{""}}, ErrBadPrefix},
		{"svc with slash", NamerConfig{Prefix: "21.1", Svc: "a/b"}, ErrBadSvc},
		{"svc with dash", NamerConfig{Prefix: "21.1", Svc: "a-b"}, ErrBadSvc},
		{"svc too long", NamerConfig{Prefix: "21.1", Svc: strings.Repeat("s", 33)}, ErrBadSvc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := NewNamer(tt.cfg)
			if !errors.Is(err, tt.err) || (err == nil) != (n != nil) {
				t.Fatalf("NewNamer(%+v) = %v, %v; want error %v", tt.cfg, n, err, tt.err)
			}
		})
	}
}

func TestNamerAccessors(t *testing.T) {
	n, err := NewNamer(NamerConfig{Prefix: "21.12345", TestPrefix: "21.t12345", Extra: []string{"10.abc"}})
	if err != nil {
		t.Fatal(err)
	}
	if n.Prefix() != "21.12345" || n.TestPrefix() != "21.T12345" || n.Svc() != "svc" {
		t.Errorf("Prefix, TestPrefix, Svc = %q, %q, %q; want %q, %q, %q", n.Prefix(), n.TestPrefix(), n.Svc(), "21.12345", "21.T12345", "svc")
	}
	for _, p := range []string{"21.12345", "21.t12345", "21.T12345", "10.ABC", "10.abc"} {
		if !n.Served([]byte(p)) {
			t.Errorf("Served(%q) = false; want true", p)
		}
	}
	for _, p := range []string{"", "21.1234", "0.NA", "21.12345/", "10"} {
		if n.Served([]byte(p)) {
			t.Errorf("Served(%q) = true; want false", p)
		}
	}
	n2, _ := NewNamer(NamerConfig{Prefix: "21.1"})
	if n2.TestPrefix() != "" {
		t.Errorf("TestPrefix() = %q without one configured; want \"\"", n2.TestPrefix())
	}
}

func TestAppendKey(t *testing.T) {
	n := testNamer(t)
	tests := []struct {
		name string
		h    string
		want string
		form Form
	}{
		{"full", "21.T12345/svc/K7Q/4XJ2-9MPA-C", "21.T12345/SVC/K7Q/4XJ29MPAC", FormFull},
		{"full lower", "21.t12345/svc/k7q/4xj2-9mpa-c", "21.T12345/SVC/K7Q/4XJ29MPAC", FormFull},
		{"full svc upper", "21.12345/SVC/K7Q/4XJ2-9MPA-C", "21.12345/SVC/K7Q/4XJ29MPAC", FormFull},
		{"full dashes in ns", "21.12345/svc/K-7Q/AB-CD", "21.12345/SVC/K7Q/ABCD", FormFull},
		{"full custom slashes", "21.T12345/svc/K7Q/a-b/c.d/e", "21.T12345/SVC/K7Q/AB/C.D/E", FormFull},
		{"short", "21.T12345/K7Q/4XJ2-9MPA-C", "21.T12345/K7Q/4XJ29MPAC", FormShort},
		{"short lower", "21.12345/k7q/4xj2-9mpa-c", "21.12345/K7Q/4XJ29MPAC", FormShort},
		{"short custom slashes", "21.12345/K7Q/a/b", "21.12345/K7Q/A/B", FormShort},
		{"short long ns", "21.12345/ABCDEFGHIJKLMNOP/x", "21.12345/ABCDEFGHIJKLMNOP/X", FormShort},
		{"other one segment", "21.12345/abc", "21.12345/ABC", FormOther},
		{"other svc only", "21.12345/svc/abc", "21.12345/SVC/ABC", FormOther},
		{"other svc trailing slash", "21.12345/svc/abc/", "21.12345/SVC/ABC/", FormOther},
		{"other empty ns", "21.12345//x-y", "21.12345//X-Y", FormOther},
		{"other ns too long", "21.12345/ABCDEFGHIJKLMNOPQ/x-y", "21.12345/ABCDEFGHIJKLMNOPQ/X-Y", FormOther},
		{"other ns punctuation", "21.12345/a.b/x-y", "21.12345/A.B/X-Y", FormOther},
		{"other id dashes only", "21.12345/K7Q/--", "21.12345/K7Q/--", FormOther},
		{"other ns dashed svc", "21.12345/s-vc/K7Q/x-y", "21.12345/S-VC/K7Q/X-Y", FormOther},
		{"other non-ascii ns", "21.12345/é/x-y", "21.12345/é/X-Y", FormOther},
		{"extra prefix exact", "10.1000/abc-def/x-y", "10.1000/ABC-DEF/X-Y", FormOther},
		{"extra prefix svc shape", "10.1000/svc/K7Q/x-y", "10.1000/SVC/K7Q/X-Y", FormOther},
		{"non-ascii not folded", "21.12345/K7Q/ébc-d", "21.12345/K7Q/éBCD", FormShort},
		{"non-ascii sharp s", "10.1000/straße", "10.1000/STRAßE", FormOther},
		{"slashless", "abc", "0.NA/ABC", FormOther},
		{"slashless prefix", "21.t12345", "0.NA/21.T12345", FormOther},
		{"0.NA explicit", "0.na/21.T12345", "0.NA/21.T12345", FormOther},
		{"slashless at limit", strings.Repeat("x", MaxHandleLen-len("0.NA/")), "0.NA/" + strings.Repeat("X", MaxHandleLen-len("0.NA/")), FormOther},
		{"plus", "21.12345/K7Q/a+b", "21.12345/K7Q/A+B", FormShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, form, err := n.AppendKey(nil, []byte(tt.h))
			if err != nil || string(got) != tt.want || form != tt.form {
				t.Fatalf("AppendKey(%q) = %q, %v, %v; want %q, %v", tt.h, got, form, err, tt.want, tt.form)
			}
			again, form2, err := n.AppendKey(nil, got)
			if err != nil || !bytes.Equal(again, got) || form2 != form {
				t.Errorf("AppendKey(%q) (a key) = %q, %v, %v; want itself, %v", got, again, form2, err, form)
			}
			ks, fs, err := n.Key(tt.h)
			if err != nil || ks != tt.want || fs != tt.form {
				t.Errorf("Key(%q) = %q, %v, %v; want %q, %v", tt.h, ks, fs, err, tt.want, tt.form)
			}
		})
	}
}

func TestAppendKeyErrors(t *testing.T) {
	n, err0 := NewNamer(NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345", Extra: []string{"10.1000"}})
	if err0 != nil {
		t.Fatal(err0)
	}
	tests := []struct {
		name   string
		h      string
		err    error
		prefix string // for ErrPrefixNotServed
	}{
		{"empty", "", ErrEmpty, ""},
		{"too long", "21.12345/" + strings.Repeat("x", MaxHandleLen), ErrTooLong, ""},
		{"10kB", strings.Repeat("x", 10<<10), ErrTooLong, ""},
		// Found by FuzzAppendKey: "0.NA/" made the key too long to be a key.
		{"slashless key too long", strings.Repeat("1", MaxHandleLen-len("0.NA/")+1), ErrTooLong, ""},
		{"unknown prefix", "21.T1/svc/K7Q/a/b", ErrPrefixNotServed, "21.T1"},
		{"unknown prefix case kept", "21.t999/x", ErrPrefixNotServed, "21.t999"},
		{"slashless not served", "21.T12345", ErrPrefixNotServed, "0.NA"},
		{"empty prefix", "/abc", ErrPrefixNotServed, ""},
		{"prefix of prefix", "21.1234/K7Q/x", ErrPrefixNotServed, "21.1234"},
		{"nul", "21.12345/a\x00b", ErrControl, ""},
		{"control", "21.12345/a\rb", ErrControl, ""},
		{"invalid utf8", "21.12345/a\xffb", ErrInvalidUTF8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := n.AppendKey([]byte("x"), []byte(tt.h))
			if !errors.Is(err, tt.err) || string(got) != "x" {
				t.Fatalf("AppendKey(%.40q) = %q, %v; want %q, error %v", tt.h, got, err, "x", tt.err)
			}
			if tt.err == ErrPrefixNotServed {
				var pe *PrefixError
				if !errors.As(err, &pe) || pe.Prefix != tt.prefix {
					t.Errorf("AppendKey(%q) error = %#v; want *PrefixError{Prefix: %q}", tt.h, err, tt.prefix)
				}
			}
		})
	}
	// Served when configured.
	n2, err := NewNamer(NamerConfig{Prefix: "21.1", Extra: []string{"0.NA"}})
	if err != nil {
		t.Fatal(err)
	}
	if k, f, err := n2.Key("21.T12345"); err != nil || k != "0.NA/21.T12345" || f != FormOther {
		t.Errorf("Key(%q) with 0.NA served = %q, %v, %v; want %q, other", "21.T12345", k, f, err, "0.NA/21.T12345")
	}
}

func TestCustomSvc(t *testing.T) {
	n, err := NewNamer(NamerConfig{Prefix: "21.1", Svc: "pid"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		h    string
		want string
		form Form
	}{
		{"21.1/Pid/K7Q/a-b", "21.1/PID/K7Q/AB", FormFull},
		{"21.1/svc/K7Q/a-b", "21.1/SVC/K7Q/AB", FormShort}, // "svc" is an ordinary ns here (this Namer's svc segment is another)
		{"21.1/pid/x", "21.1/PID/X", FormOther},
	}
	for _, tt := range tests {
		got, form, err := n.AppendKey(nil, []byte(tt.h))
		if err != nil || string(got) != tt.want || form != tt.form {
			t.Errorf("AppendKey(%q) = %q, %v, %v; want %q, %v", tt.h, got, form, err, tt.want, tt.form)
		}
	}
	if got := n.Full("21.1", "k7q", "ab-c"); got != "21.1/pid/K7Q/AB-C" {
		t.Errorf("Full = %q; want %q", got, "21.1/pid/K7Q/AB-C")
	}
}

func TestAppendAltKey(t *testing.T) {
	n := testNamer(t)
	tests := []struct {
		name string
		key  string
		want string
		ok   bool
	}{
		{"short to full", "21.T12345/K7Q/4XJ29MPAC", "21.T12345/SVC/K7Q/4XJ29MPAC", true},
		{"full to short", "21.T12345/SVC/K7Q/4XJ29MPAC", "21.T12345/K7Q/4XJ29MPAC", true},
		{"custom slashes", "21.12345/K7Q/A/B", "21.12345/SVC/K7Q/A/B", true},
		{"full custom slashes", "21.12345/SVC/K7Q/A/B", "21.12345/K7Q/A/B", true},
		{"full ns is svc", "21.12345/SVC/SVC/X", "", false},
		{"other", "21.12345/ABC", "", false},
		{"svc only", "21.12345/SVC/ABC", "", false},
		{"extra", "10.1000/K7Q/ABC", "", false},
		{"0.NA", "0.NA/ABC", "", false},
		{"not served", "21.1/K7Q/ABC", "", false},
		{"no slash", "ABC", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := n.AppendAltKey([]byte("x:"), []byte(tt.key))
			want := "x:" + tt.want
			if ok != tt.ok || string(got) != want {
				t.Fatalf("AppendAltKey(%q) = %q, %v; want %q, %v", tt.key, got, ok, want, tt.ok)
			}
			if !ok {
				return
			}
			back, ok := n.AppendAltKey(nil, got[2:])
			if !ok || string(back) != tt.key {
				t.Errorf("AppendAltKey(%q) = %q, %v; want %q, true", got[2:], back, ok, tt.key)
			}
			k, _, err := n.AppendKey(nil, got[2:])
			if err != nil || !bytes.Equal(k, got[2:]) {
				t.Errorf("AppendKey(%q) = %q, %v; want an alt key to be a key", got[2:], k, err)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	n := testNamer(t)
	tests := []struct {
		key            string
		prefix, ns, id string
		form           Form
		nilNS          bool
	}{
		{"21.T12345/SVC/K7Q/4XJ29MPAC", "21.T12345", "K7Q", "4XJ29MPAC", FormFull, false},
		{"21.T12345/K7Q/A/B", "21.T12345", "K7Q", "A/B", FormShort, false},
		{"21.12345/ABC", "21.12345", "", "ABC", FormOther, true},
		{"10.1000/K7Q/ABC", "10.1000", "", "K7Q/ABC", FormOther, true},
		{"ABC", "ABC", "", "", FormOther, true},
	}
	for _, tt := range tests {
		p, ns, id, form := n.Split([]byte(tt.key))
		if string(p) != tt.prefix || string(ns) != tt.ns || string(id) != tt.id || form != tt.form || (ns == nil) != tt.nilNS {
			t.Errorf("Split(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tt.key, p, ns, id, form, tt.prefix, tt.ns, tt.id, tt.form)
		}
	}
}

func TestFull(t *testing.T) {
	n := testNamer(t)
	if got, want := n.Full("21.t12345", "k7q", "4xj2-9mpa-c"), "21.T12345/svc/K7Q/4XJ2-9MPA-C"; got != want {
		t.Errorf("Full(%q, %q, %q) = %q; want %q", "21.t12345", "k7q", "4xj2-9mpa-c", got, want)
	}
	k, form, err := n.Key(n.Full("21.T12345", "K7Q", "4XJ2-9MPA-C"))
	if err != nil || form != FormFull || k != "21.T12345/SVC/K7Q/4XJ29MPAC" {
		t.Errorf("Key(Full(…)) = %q, %v, %v; want the full key", k, form, err)
	}
}

func TestCheckNamespace(t *testing.T) {
	n := testNamer(t)
	for _, tt := range []struct {
		ns string
		ok bool
	}{{"K7Q", true}, {"SVC", false}, {"k7q", false}, {"", false}} {
		if err := n.CheckNamespace(tt.ns); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBadNamespace)) {
			t.Errorf("CheckNamespace(%q) = %v; want ok=%v", tt.ns, err, tt.ok)
		}
	}
}

func TestFormString(t *testing.T) {
	for f, want := range map[Form]string{FormOther: "other", FormFull: "full", FormShort: "short", 9: "Form(9)"} {
		if f.String() != want {
			t.Errorf("Form(%d).String() = %q; want %q", uint8(f), f.String(), want)
		}
	}
}

func TestAppendKeyAllocs(t *testing.T) {
	n := testNamer(t)
	dst := make([]byte, 0, MaxHandleLen+8)
	for _, h := range []string{"21.t12345/svc/k7q/4xj2-9mpa-c", "21.12345/K7Q/4XJ2-9MPA-C", "10.1000/abc", "abc"} {
		hb := []byte(h)
		allocs := testing.AllocsPerRun(100, func() {
			key, _, err := n.AppendKey(dst[:0], hb)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := n.AppendAltKey(key[len(key):], key); ok && len(key) == 0 {
				t.Fatal("unreachable")
			}
		})
		if allocs != 0 {
			t.Errorf("AppendKey(%q) + AppendAltKey allocs = %v; want 0", h, allocs)
		}
	}
}

// TestNamespaceOf: a full-form key under the production or test prefix
// yields its namespace key prefix, the one NamespaceKey builds; short forms
// and the extra prefixes yield nil.
func TestNamespaceOf(t *testing.T) {
	n, err := NewNamer(NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345", Extra: []string{"10.1000"}})
	if err != nil {
		t.Fatal(err)
	}
	nsk, err := n.NamespaceKey("21.12345", "ab")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, handle, want string
	}{
		{"full", "21.12345/svc/AB/X-1", nsk},
		{"id with slash", "21.12345/svc/AB/x/y", nsk},
		{"test prefix", "21.T12345/svc/CD/Y", "21.T12345/SVC/CD/"},
		{"short form", "21.12345/X-1", ""},
		{"extra prefix", "10.1000/svc/AB/X", ""},
	}
	for _, c := range cases {
		key, _, err := n.Key(c.handle)
		if err != nil {
			t.Fatalf("%s: Key(%q): %v", c.name, c.handle, err)
		}
		if got := string(n.NamespaceOf([]byte(key))); got != c.want {
			t.Errorf("%s: NamespaceOf(%q) = %q, want %q", c.name, key, got, c.want)
		}
	}
}
