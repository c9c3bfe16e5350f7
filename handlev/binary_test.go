package handlev

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// unhex decodes spec-style hex with spaces for reading.
func codecHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// docs/handle-protocol.md §3.5.
const (
	vectorValueHex = "00000001 3B9ACA00 00 00015180 0E 00000003 55524C 0000001E " +
		"687474703A2F2F6578616D706C652E6F72672F783F613D3126623D3C323E 00000000"
	vectorAdminHex = "0FFF 00000008 302E4E412F313233 000000C8"
)

func vectorValue() Value {
	return Value{Index: 1, Type: TypeURL, Data: []byte("http://example.org/x?a=1&b=<2>"),
		TTLType: TTLRelative, TTL: 86400, Timestamp: 1000000000, Perm: PermDefault}
}

func TestBinaryVectorValue(t *testing.T) {
	want := codecHex(t, vectorValueHex)
	v := vectorValue()
	if got := AppendValue(nil, &v); !bytes.Equal(got, want) {
		t.Fatalf("AppendValue = %X\nwant           %X", got, want)
	}
	dec, n, err := DecodeValue(want)
	if err != nil || n != len(want) {
		t.Fatalf("DecodeValue = n %d err %v, want n %d", n, err, len(want))
	}
	if !dec.Equal(&v) {
		t.Fatalf("DecodeValue = %+v, want %+v", dec, v)
	}
}

func TestBinaryVectorAdmin(t *testing.T) {
	want := codecHex(t, vectorAdminHex)
	a := Admin{Mask: AdminAll, Handle: "0.NA/123", Index: 200}
	if got := AppendAdmin(nil, a); !bytes.Equal(got, want) {
		t.Fatalf("AppendAdmin = %X, want %X", got, want)
	}
	got, err := DecodeAdmin(want)
	if err != nil || got != a {
		t.Fatalf("DecodeAdmin = %+v, %v; want %+v", got, err, a)
	}
	// Legacy servers appended two bytes; the reference decoder accepts them.
	if got, err := DecodeAdmin(append(bytes.Clone(want), 0, 0)); err != nil || got != a {
		t.Fatalf("DecodeAdmin(legacy) = %+v, %v; want %+v", got, err, a)
	}
}

func TestBinaryNoAliasing(t *testing.T) {
	v := Value{Index: 7, Type: "X-CUSTOM", Data: []byte("payload"), Refs: []Ref{{"1/2", 3}}, Perm: PermDefault}
	b := AppendValues(nil, []Value{v, v})
	vs, n, err := decodeValuesOwned(b)
	if err != nil || n != len(b) || len(vs) != 2 {
		t.Fatalf("decodeValuesOwned = %d values, n %d, err %v", len(vs), n, err)
	}
	for i := range b {
		b[i] = 0xAA
	}
	for i := range vs {
		if !vs[i].Equal(&v) {
			t.Fatalf("value %d changed after input was overwritten: %+v", i, vs[i])
		}
	}
	// Appending to one value's Data must not overwrite the next one's.
	vs[0].Data = append(vs[0].Data, "XXXXXXXX"...)
	if !vs[1].Equal(&v) {
		t.Fatalf("append to vs[0].Data changed vs[1]: %q", vs[1].Data)
	}
	// DecodeAdmin's Handle must not alias its input either.
	ab := codecHex(t, vectorAdminHex)
	a, err := DecodeAdmin(ab)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ab {
		ab[i] = 'Z'
	}
	if want := (Admin{Mask: AdminAll, Handle: "0.NA/123", Index: 200}); a != want {
		t.Fatalf("DecodeAdmin result changed after its input was overwritten: %+v, want %+v", a, want)
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		v    Value
	}{
		{"vector", vectorValue()},
		{"empty", Value{}},
		{"absolute ttl", Value{Index: 2, Type: "BLOB", Data: []byte{0, 1, 2, 0xFF}, TTLType: TTLAbsolute, TTL: 2000000000, Perm: PermAdminRead | PermAdminWrite}},
		{"max timestamp", Value{Index: -1, Type: "T", Timestamp: 0xFFFFFFFF, TTL: -5}},
		{"admin", Value{Index: 100, Type: TypeAdmin, Data: AppendAdmin(nil, Admin{AdminAll, "0.NA/123", 200}), TTL: 86400, Perm: PermDefault}},
		{"vlist+refs", Value{Index: 3, Type: TypeVList, Data: AppendVList(nil, []Ref{{"0.NA/123", 300}, {"", -1}}), Refs: []Ref{{"123/ref", 1}, {"123/ü", 2}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendValue([]byte("prefix"), &tt.v)[len("prefix"):]
			got, n, err := DecodeValue(append(b, "trailing"...))
			if err != nil || n != len(b) {
				t.Fatalf("DecodeValue: n %d (want %d), err %v", n, len(b), err)
			}
			if !got.Equal(&tt.v) {
				t.Fatalf("DecodeValue(AppendValue(%+v)) = %+v", tt.v, got)
			}
		})
	}
	var all []Value
	for _, tt := range tests {
		all = append(all, tt.v)
	}
	b := AppendValues(nil, all)
	vs, n, err := decodeValuesOwned(b)
	if err != nil || n != len(b) || len(vs) != len(all) {
		t.Fatalf("decodeValuesOwned: %d values, n %d/%d, err %v", len(vs), n, len(b), err)
	}
	for i := range all {
		if !vs[i].Equal(&all[i]) {
			t.Errorf("decodeValuesOwned[%d] = %+v, want %+v", i, vs[i], all[i])
		}
	}
	if vs, n, err := decodeValuesOwned(AppendValues(nil, nil)); err != nil || n != 4 || len(vs) != 0 {
		t.Errorf("decodeValuesOwned(empty) = %v, %d, %v", vs, n, err)
	}
}

func TestBinaryVList(t *testing.T) {
	refs := []Ref{{"0.NA/123", 300}, {"123/x", 1}}
	b := AppendVList(nil, refs)
	got, err := DecodeVList(b)
	if err != nil || len(got) != 2 || got[0] != refs[0] || got[1] != refs[1] {
		t.Fatalf("DecodeVList = %v, %v", got, err)
	}
	if got, err := DecodeVList(AppendVList(nil, nil)); err != nil || got != nil {
		t.Fatalf("DecodeVList(empty) = %v, %v", got, err)
	}
	if _, err := DecodeVList(append(b, 0)); !errors.Is(err, ErrTrailingData) {
		t.Fatalf("DecodeVList(trailing) err = %v, want ErrTrailingData", err)
	}
}

func codecBE32(x uint32) []byte { return binary.BigEndian.AppendUint32(nil, x) }

func TestBinaryDecodeErrors(t *testing.T) {
	good := codecHex(t, vectorValueHex)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	head := good[:14] // index, timestamp, ttl type, ttl, permission
	tests := []struct {
		name   string
		in     []byte
		want   error
		offset int
		what   string
	}{
		{"empty", nil, ErrTruncated, 0, "value index"},
		{"short index", good[:3], ErrTruncated, 0, "value index"},
		{"short timestamp", good[:6], ErrTruncated, 4, "value timestamp"},
		{"no ttl type", good[:8], ErrTruncated, 8, "value ttl type"},
		{"bad ttl type", cat(good[:8], []byte{2}, good[9:]), ErrBadTTLType, 8, "value ttl type"},
		{"no permission", good[:13], ErrTruncated, 13, "value permission"},
		{"negative type length", cat(head, codecBE32(0x80000000)), ErrNegativeLength, 14, "value type length"},
		{"type too long", cat(head, codecBE32(MaxLength+1)), ErrTooLong, 14, "value type length"},
		{"type truncated", cat(head, codecBE32(10), []byte("URL")), ErrTruncated, 18, "value type"},
		{"data truncated", good[:len(good)-5], ErrTruncated, 25, "value data"},
		{"no ref count", good[:len(good)-4], ErrTruncated, len(good) - 4, "value reference count"},
		{"too many refs", cat(good[:len(good)-4], codecBE32(MaxRefs+1)), ErrTooLong, len(good) - 4, "value reference count"},
		{"negative refs", cat(good[:len(good)-4], codecBE32(0xFFFFFFFF)), ErrNegativeLength, len(good) - 4, "value reference count"},
		{"ref truncated", cat(good[:len(good)-4], codecBE32(1), codecBE32(3), []byte("1/2")), ErrTruncated, len(good) + 7, "value reference index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeValue(tt.in)
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tt.want) {
				t.Fatalf("DecodeValue(%X) err = %v, want *DecodeError wrapping %v", tt.in, err, tt.want)
			}
			if de.Offset != tt.offset || de.What != tt.what {
				t.Errorf("DecodeValue(%X) err at %d %q, want %d %q", tt.in, de.Offset, de.What, tt.offset, tt.what)
			}
		})
	}
}

func TestBinaryDecodeValuesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"no count", []byte{0, 0}, ErrTruncated},
		{"negative count", codecBE32(0x80000001), ErrNegativeLength},
		{"count too large", codecBE32(MaxValues + 1), ErrTooLong},
		{"huge count small input", codecBE32(MaxValues), ErrTruncated},
		{"second value truncated", append(codecBE32(2), codecHex(t, vectorValueHex)...), ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := decodeValuesOwned(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("decodeValuesOwned(%X) err = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestBinaryDecodeAdminErrors(t *testing.T) {
	good := codecHex(t, vectorAdminHex)
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"no index", good[:len(good)-2], ErrTruncated},
		{"one extra byte", append(bytes.Clone(good), 0), ErrTrailingData},
		{"three extra bytes", append(bytes.Clone(good), 0, 0, 0), ErrTrailingData},
		{"negative handle length", append([]byte{0x0F, 0xFF}, codecBE32(0xFFFFFFF0)...), ErrNegativeLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeAdmin(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("DecodeAdmin(%X) err = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestBinaryPermissionLowBits(t *testing.T) {
	b := codecHex(t, vectorValueHex)
	b[13] = 0xFE
	v, _, err := DecodeValue(b)
	if err != nil || v.Perm != PermDefault {
		t.Fatalf("DecodeValue perm byte 0xFE: Perm %#x, err %v; want %#x", v.Perm, err, PermDefault)
	}
}

func TestDecodeErrorMessage(t *testing.T) {
	_, _, err := DecodeValue([]byte{0})
	want := "handlev: decode value index at offset 0: truncated"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// checkDecodeValuesShared: DecodeValuesShared accepts exactly what
// decodeValuesOwned accepts and decodes the same values, which alias its input.
func checkDecodeValuesShared(t *testing.T, b []byte) {
	t.Helper()
	want, wn, werr := decodeValuesOwned(b)
	own := bytes.Clone(b)
	vs, n, err := DecodeValuesShared(own)
	if (err == nil) != (werr == nil) || n != wn || len(vs) != len(want) {
		t.Fatalf("DecodeValuesShared = %d values, n %d, err %v; decodeValuesOwned = %d, %d, %v", len(vs), n, err, len(want), wn, werr)
	}
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(b) || de.Error() != werr.Error() {
			t.Fatalf("DecodeValuesShared error %v, decodeValuesOwned error %v", err, werr)
		}
		return
	}
	for i := range vs {
		if !vs[i].Equal(&want[i]) {
			t.Fatalf("value %d = %+v, want %+v", i, vs[i], want[i])
		}
		if len(vs[i].Data) > 0 && !within(&vs[i].Data[0], own) {
			t.Fatalf("value %d: data does not alias the input", i)
		}
		if cap(vs[i].Data) != len(vs[i].Data) {
			t.Fatalf("value %d: data not capped (len %d, cap %d)", i, len(vs[i].Data), cap(vs[i].Data))
		}
	}
}

// within reports whether p points into b.
func within(p *byte, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	return uintptr(unsafe.Pointer(p)) >= start && uintptr(unsafe.Pointer(p)) < start+uintptr(len(b))
}

func TestDecodeValuesShared(t *testing.T) {
	custom := Value{Index: 7, Type: "X-CUSTOM", Data: []byte("payload"), Refs: []Ref{{"1/2", 3}, {"", 4}}, Perm: PermDefault}
	truncated := AppendValues(nil, []Value{custom})
	tests := []struct {
		name string
		b    []byte
	}{
		{"none", AppendValues(nil, nil)},
		{"spec", AppendValues(nil, specRecordValues())},
		{"pid4cat", AppendValues(nil, pid4catValues(t))},
		{"custom types and refs", AppendValues(nil, []Value{custom, {}, custom})},
		{"truncated", truncated[:len(truncated)-3]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkDecodeValuesShared(t, tt.b) })
	}

	// The only allocations are the []Value and the []Ref of each value with
	// references; strings and data stay in the input.
	b := AppendValues(nil, []Value{custom, custom, {Index: 1, Type: TypeURL, Data: []byte("https://example.org/")}})
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := DecodeValuesShared(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 3 {
		t.Errorf("DecodeValuesShared: %v allocations, want 3", allocs)
	}
	vs, _, err := DecodeValuesShared(b)
	if err != nil {
		t.Fatal(err)
	}
	if !within(unsafe.StringData(vs[1].Type), b) || !within(unsafe.StringData(vs[1].Refs[0].Handle), b) {
		t.Errorf("type or reference handle of a decoded value does not alias the input")
	}
	if vs[2].Type != TypeURL || unsafe.StringData(vs[2].Type) != unsafe.StringData(TypeURL) {
		t.Errorf("well-known type %q not the constant", vs[2].Type)
	}
	// Appending to one value's Data must not overwrite the next one's.
	vs[0].Data = append(vs[0].Data, "XXXXXXXX"...)
	if !vs[1].Equal(&custom) {
		t.Fatalf("append to vs[0].Data changed vs[1]: %+v", vs[1])
	}
}

// decodeValuesOwned decodes like DecodeValuesShared, but the values own their
// memory and never alias b.
func decodeValuesOwned(b []byte) (vs []Value, n int, err error) { return decodeValues(b, false) }

// TestInternedTypes checks that both decoders return the element of
// InternedTypes itself for each well-known type, and a string of its own for
// one that only differs in case (the cache charges by this identity).
func TestInternedTypes(t *testing.T) {
	for i := range InternedTypes {
		want := InternedTypes[i]
		for _, typ := range []string{want, strings.ToLower(want)} {
			enc := AppendValues(nil, []Value{{Index: 1, Type: typ, Data: []byte("x"), Perm: PermDefault}})
			shared, _, err := DecodeValuesShared(bytes.Clone(enc))
			if err != nil {
				t.Fatalf("DecodeValuesShared(%q): %v", typ, err)
			}
			owned, _, err := DecodeValue(enc[4:])
			if err != nil {
				t.Fatalf("DecodeValue(%q): %v", typ, err)
			}
			for name, got := range map[string]string{"DecodeValuesShared": shared[0].Type, "DecodeValue": owned.Type} {
				same := unsafe.StringData(got) == unsafe.StringData(want)
				if got != typ || same != (typ == want) {
					t.Errorf("%s(%q): type %q, interned %v, want %q, interned %v", name, typ, got, same, typ, typ == want)
				}
			}
		}
	}
}
