package handlev

import (
	"encoding/binary"

	"pidnode/internal/ascii"
)

// TypeResource is the value type ReadResource reads (docs/metadata-model.md).
const TypeResource = "RESOURCE"

// Derived is what a record's writer derives from its values once, at write
// time, so that a reader that loads the record on every cache miss does not
// parse it again: the result of ReadResource on the record's first public
// RESOURCE value (the one the resolver's signposting and content
// negotiation read). The store keeps it beside the record's encoding; every
// writer makes it with AppendDerived, and a reader asks Resource, which
// tells it to parse the value itself when the bytes do not describe that
// value (a record stored before, or another version of this layout).
//
// Layout: derivedVersion; then derivedNone, or derivedBad (the value is not
// a JSON object) or derivedResource, each with the value's Index (int4) and
// data length (uint4); derivedResource is followed by label, description and
// category, the variant count (uvarint) and each variant's URL and media
// type, every string as uvarint(len+1) and its bytes (0: nil).
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
	r, _, ok := ReadResource(v.Data, nil)
	tag := byte(derivedResource)
	if !ok {
		tag = derivedBad
	}
	dst = append(dst, tag)
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.Index))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Data)))
	if !ok {
		return dst
	}
	dst = appendDerivedString(dst, r.Label)
	dst = appendDerivedString(dst, r.Description)
	dst = appendDerivedString(dst, r.Category)
	dst = binary.AppendUvarint(dst, uint64(len(r.Variants)))
	for _, rv := range r.Variants {
		dst = appendDerivedString(dst, rv.URL)
		dst = appendDerivedString(dst, rv.MediaType)
	}
	return dst
}

func appendDerivedString(dst, s []byte) []byte {
	if s == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	return append(dst, s...)
}

// Resource returns what ReadResource(val.Data) returns, read from d, for
// val, a value of the record d was derived from; known is false when d does
// not describe val (no derived data, another layout, or d was derived from
// another value): the caller then calls ReadResource itself. The slices of
// r point into d; r.Variants is appended to vars[:0]. It never panics.
func (d Derived) Resource(val *Value, vars []Variant) (r Resource, ok, known bool) {
	if len(d) < 2 || d[0] != derivedVersion || d[1] == derivedNone {
		return Resource{}, false, false
	}
	if len(d) < 10 || int32(binary.BigEndian.Uint32(d[2:])) != val.Index || binary.BigEndian.Uint32(d[6:]) != uint32(len(val.Data)) {
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
	var good bool
	if r.Label, b, good = readDerivedString(b); !good {
		return Resource{}, false, false
	}
	if r.Description, b, good = readDerivedString(b); !good {
		return Resource{}, false, false
	}
	if r.Category, b, good = readDerivedString(b); !good {
		return Resource{}, false, false
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) { // each variant takes at least two bytes
		return Resource{}, false, false
	}
	b = b[w:]
	if n > 0 {
		r.Variants = vars[:0]
	}
	for range n {
		var rv Variant
		if rv.URL, b, good = readDerivedString(b); !good {
			return Resource{}, false, false
		}
		if rv.MediaType, b, good = readDerivedString(b); !good {
			return Resource{}, false, false
		}
		r.Variants = append(r.Variants, rv)
	}
	if len(b) != 0 {
		return Resource{}, false, false
	}
	return r, true, true
}

func readDerivedString(b []byte) (s, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w)+1 {
		return nil, nil, false
	}
	b = b[w:]
	if n == 0 {
		return nil, b, true
	}
	n--
	return b[:n:n], b[n:], true
}
