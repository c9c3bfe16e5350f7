package handlev

import (
	"encoding/binary"
	"unsafe"

	"pidnode/internal/ascii"
)

// TypeResource is the value type ReadResource reads (docs/metadata-model.md).
const TypeResource = "RESOURCE"

// Derived is what a record's writer derives from its values once, at write
// time, so that a reader that loads the record on every cache miss does not
// parse it again: where ReadResource finds its members in the record's
// first public RESOURCE value (the one the resolver's signposting and
// content negotiation read), as offsets into the value's data. The store
// keeps it beside the record's encoding; every writer makes it with
// AppendDerived, and a reader asks Resource, which tells it to parse the
// value itself when the bytes do not describe that value (a record stored
// before this layout existed, another version of it, or a value whose
// strings have escapes, which ReadResource decodes into memory of its own).
//
// Layout: derivedVersion; then derivedNone, or derivedBad (the value is not
// a JSON object) or derivedResource, each with the value's Index (int4) and
// data length (uint4); derivedResource is followed by label, description and
// category, the variant count (uvarint) and each variant's URL and media
// type, every string as uvarint(offset+1) and uvarint(length) into the data
// (a single 0: nil).
type Derived []byte

const (
	derivedVersion  = 1
	derivedNone     = 0
	derivedBad      = 1
	derivedResource = 2
)

// firstPublicResource is the index in vs of the first value with public
// read whose type is RESOURCE (case-insensitive), -1 if none: the value the
// public fronts read (NewPublic keeps the values with PermPublicRead).
func firstPublicResource(vs []Value) int {
	for i := range vs {
		if vs[i].Perm&PermPublicRead != 0 && len(vs[i].Type) == len(TypeResource) && ascii.EqualFold(vs[i].Type, TypeResource) {
			return i
		}
	}
	return -1
}

// AppendDerived appends the derived data of a record with values vs to dst.
// It is the one function every writer of records uses.
func AppendDerived(dst []byte, vs []Value) []byte {
	dst = append(dst, derivedVersion)
	i := firstPublicResource(vs)
	if i < 0 {
		return append(dst, derivedNone)
	}
	v := &vs[i]
	r, _, ok := ReadResource(v.Data, nil) // escaped strings are decoded elsewhere: not derived
	tag := byte(derivedResource)
	if !ok {
		tag = derivedBad
	}
	start := len(dst)
	dst = append(dst, tag)
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.Index))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Data)))
	if !ok {
		return dst
	}
	good := true
	str := func(s []byte) {
		if s == nil {
			dst = append(dst, 0)
			return
		}
		off := uintptr(unsafe.Pointer(unsafe.SliceData(s))) - uintptr(unsafe.Pointer(unsafe.SliceData(v.Data)))
		if len(v.Data) == 0 || off > uintptr(len(v.Data)-len(s)) || cap(s) != len(s) {
			good = false
			return
		}
		dst = binary.AppendUvarint(dst, uint64(off)+1)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
	}
	str(r.Label)
	str(r.Description)
	str(r.Category)
	dst = binary.AppendUvarint(dst, uint64(len(r.Variants)))
	for _, rv := range r.Variants {
		str(rv.URL)
		str(rv.MediaType)
	}
	if !good {
		return append(dst[:start], derivedNone)
	}
	return dst
}

// Resource returns what ReadResource(val.Data) returns, read from d, for
// val, a value of the record d was derived from; known is false when d does
// not describe val (no derived data, another layout, d was derived from
// another value, or the value must be parsed): the caller then calls
// ReadResource itself. The slices of r point into val.Data; r.Variants is
// appended to vars[:0]. It never panics.
func (d Derived) Resource(val *Value, vars []Variant) (r Resource, ok, known bool) {
	if len(d) < 10 || d[0] != derivedVersion || int32(binary.BigEndian.Uint32(d[2:])) != val.Index ||
		binary.BigEndian.Uint32(d[6:]) != uint32(len(val.Data)) {
		return Resource{}, false, false
	}
	switch d[1] {
	case derivedBad:
		return Resource{}, false, len(d) == 10
	case derivedResource:
	default:
		return Resource{}, false, false
	}
	b := []byte(d[10:])
	data := val.Data
	good := true
	str := func() []byte {
		off, w := binary.Uvarint(b)
		if w <= 0 {
			good = false
			return nil
		}
		b = b[w:]
		if off == 0 {
			return nil
		}
		n, w := binary.Uvarint(b)
		if w <= 0 || off-1 > uint64(len(data)) || n > uint64(len(data))-(off-1) {
			good = false
			return nil
		}
		b = b[w:]
		lo := int(off - 1)
		return data[lo : lo+int(n) : lo+int(n)]
	}
	r.Label, r.Description, r.Category = str(), str(), str()
	n, w := binary.Uvarint(b)
	if !good || w <= 0 || n > uint64(len(b)) { // each variant takes at least two bytes
		return Resource{}, false, false
	}
	b = b[w:]
	if n > 0 {
		r.Variants = vars[:0]
	}
	for range n {
		url := str()
		r.Variants = append(r.Variants, Variant{URL: url, MediaType: str()})
	}
	if !good || len(b) != 0 {
		return Resource{}, false, false
	}
	return r, true, true
}
