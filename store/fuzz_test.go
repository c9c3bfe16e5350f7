package store

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecodeStored: decodeStored never panics on arbitrary bytes, and whatever
// it accepts re-encodes to the same bytes once normalised (decode → encode →
// decode is stable, and for inputs that passed checkStorable, encode → decode
// is exact).
func FuzzDecodeStored(f *testing.F) {
	for _, s := range goldenRecords() {
		f.Add(appendStored(nil, &s))
	}
	f.Add([]byte{})
	f.Add([]byte{recordFormat})
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeStored(b)
		if err != nil {
			return
		}
		if err := checkStorable("K", &s); err != nil {
			t.Fatalf("decoded record is not storable: %v", err)
		}
		enc := appendStored(nil, &s)
		if len(enc) != encodedSize(&s) {
			t.Fatalf("encodedSize = %d, encoding has %d bytes", encodedSize(&s), len(enc))
		}
		s2, err := decodeStored(enc)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !reflect.DeepEqual(normalize(s), normalize(s2)) {
			t.Fatalf("decode → encode → decode changed the record:\n%+v\n%+v", s, s2)
		}
		if enc2 := appendStored(nil, &s2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable")
		}
	})
}
