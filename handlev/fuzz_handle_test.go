package handlev

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"testing"
	"unicode/utf8"
)

// handleSeeds returns the proxy paths of testdata/handle_paths.txt.
func handleSeeds(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/handle_paths.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seeds [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		seeds = append(seeds, bytes.Clone(line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return seeds
}

func FuzzDecodePath(f *testing.F) {
	for _, s := range handleSeeds(f) {
		f.Add(s)
	}
	n := testNamer(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := DecodePath(nil, raw)
		if err != nil {
			if len(h) != 0 {
				t.Fatalf("DecodePath(%q) = %q with error %v; want nothing appended", raw, h, err)
			}
			var he *HandleError
			if !errors.As(err, &he) && err != ErrEmpty && err != ErrTooLong {
				t.Fatalf("DecodePath(%q) error %v is neither *HandleError nor a sentinel", raw, err)
			}
			if he != nil && (he.Offset < 0 || he.Offset >= len(raw)) {
				t.Fatalf("DecodePath(%q) error offset %d out of range", raw, he.Offset)
			}
			return
		}
		if len(h) == 0 || len(h) > MaxHandleLen || !utf8.Valid(h) || controlAt(h) >= 0 || dotSegment(h) >= 0 {
			t.Fatalf("DecodePath(%q) = %q: empty, too long, invalid UTF-8, control byte or dot segment", raw, h)
		}
		// With spare room in dst, the same result is appended.
		h2, err := DecodePath(append(make([]byte, 0, 8+len(raw)), "prefix:"...), raw)
		if err != nil || string(h2[len("prefix:"):]) != string(h) {
			t.Fatalf("DecodePath(%q) into a used dst = %q, %v; want %q", raw, h2, err, h)
		}
		// Whatever decodes is a valid input to the namer.
		if key, _, err := n.AppendKey(nil, h); err == nil {
			checkKey(t, n, h, key)
		} else if !errors.Is(err, ErrPrefixNotServed) &&
			!(err == ErrTooLong && bytes.IndexByte(h, '/') < 0) { // "0.NA/" pushed it over
			t.Fatalf("AppendKey(%q) from DecodePath(%q) error %v; want only ErrPrefixNotServed", h, raw, err)
		}
	})
}

func FuzzAppendKey(f *testing.F) {
	for _, s := range handleSeeds(f) {
		if h, err := DecodePath(nil, s); err == nil {
			f.Add(h)
		}
		f.Add(s)
	}
	n := testNamer(f)
	f.Fuzz(func(t *testing.T, h []byte) {
		key, _, err := n.AppendKey(nil, h)
		if err != nil {
			if len(key) != 0 {
				t.Fatalf("AppendKey(%q) = %q with error %v; want nothing appended", h, key, err)
			}
			return
		}
		checkKey(t, n, h, key)
	})
}

// checkKey asserts the properties of key = AppendKey(h).
func checkKey(t *testing.T, n *Namer, h, key []byte) {
	t.Helper()
	_, form, _ := n.AppendKey(nil, h)
	if !utf8.Valid(key) {
		t.Fatalf("AppendKey(%q) = %q: invalid UTF-8", h, key)
	}
	for _, c := range key {
		if 'a' <= c && c <= 'z' {
			t.Fatalf("AppendKey(%q) = %q: lower-case ASCII left", h, key)
		}
	}
	again, form2, err := n.AppendKey(nil, key)
	if err != nil || !bytes.Equal(again, key) || form2 != form {
		t.Fatalf("AppendKey(%q) = %q, %v, %v; want the key itself, %v (from %q)", key, again, form2, err, form, h)
	}
	prefix, ns, id, form3 := n.Split(key)
	if form3 != form || !n.Served(prefix) {
		t.Fatalf("Split(%q) = %q, %q, %q, %v; want form %v and a served prefix", key, prefix, ns, id, form3, form)
	}
	if form != FormOther && (bytes.IndexByte(ns, '-') >= 0 || bytes.IndexByte(id, '-') >= 0 || len(ns) == 0 || len(id) == 0) {
		t.Fatalf("Split(%q) = %q, %q, %q, %v: dashes left or empty part", key, prefix, ns, id, form3)
	}
	alt, ok := n.AppendAltKey(nil, key)
	if ok != (form != FormOther && !(form == FormFull && string(ns) == n.svcKey)) {
		t.Fatalf("AppendAltKey(%q) ok = %v for form %v", key, ok, form)
	}
	if ok {
		_, altForm, err := n.AppendKey(nil, alt)
		back, ok2 := n.AppendAltKey(nil, alt)
		if err != nil || altForm == form || altForm == FormOther || !ok2 || !bytes.Equal(back, key) {
			t.Fatalf("AppendAltKey(%q) = %q (form %v, %v); its alt %q, %v; want the key back", key, alt, altForm, err, back, ok2)
		}
	}
}
