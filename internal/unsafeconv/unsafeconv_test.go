package unsafeconv

import (
	"testing"
	"unsafe"
)

func TestString(t *testing.T) {
	for _, b := range [][]byte{nil, {}, []byte("a"), []byte("20.1000/xyz")} {
		s := String(b)
		if s != string(b) {
			t.Errorf("String(%q) = %q, want %q", b, s, b)
		}
		if len(b) > 0 && unsafe.StringData(s) != &b[0] {
			t.Errorf("String(%q) copied the bytes", b)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, s := range []string{"", "a", "20.1000/xyz"} {
		b := Bytes(s)
		if string(b) != s {
			t.Errorf("Bytes(%q) = %q, want %q", s, b, s)
		}
		if len(s) > 0 && &b[0] != unsafe.StringData(s) {
			t.Errorf("Bytes(%q) copied the bytes", s)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	b := []byte("20.1000/xyz")
	var s string
	if n := testing.AllocsPerRun(100, func() { s = String(b); b = Bytes(s) }); n != 0 {
		t.Errorf("String and Bytes allocate %v times, want 0", n)
	}
}
