package handlev

import (
	"bytes"
	"encoding/binary"

	"pidnode/internal/unsafeconv"
)

// RFC 3651 binary encoding of handle values (docs/handle-protocol.md §3.4). All integers
// are big-endian; a UTF8-String is an int4 byte length followed by the bytes.
//
// Encoders append to dst and never fail: they do not validate lengths, so callers
// that accept outside input (the admin API, the JSON decoder) must enforce MaxLength,
// MaxRefs and MaxValues themselves or the result will not decode. Decoders
// bounds-check every read, never panic, and return a *DecodeError wrapping a
// sentinel (ErrTruncated, ErrTooLong, ErrNegativeLength, ErrBadTTLType,
// ErrTrailingData). Decoded values own their memory: nothing returned aliases b
// (except from DecodeValuesShared, which says so).

// minValueLen is the wire size of a value with empty type, data and references:
// index, timestamp, ttl type, ttl, permission, type length, data length, ref count.
const minValueLen = 4 + 4 + 1 + 4 + 1 + 4 + 4 + 4

// minRefLen is the wire size of a reference with an empty handle.
const minRefLen = 4 + 4

// AppendValue appends the RFC 3651 encoding of v to dst and returns the extended
// slice. The timestamp is written as int4 unix seconds (uint32(v.Timestamp), as
// every implementation does); only the low 4 permission bits are meaningful.
// v is not retained.
func AppendValue(dst []byte, v *Value) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.Index))
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.Timestamp))
	dst = append(dst, byte(v.TTLType))
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.TTL))
	dst = append(dst, byte(v.Perm))
	dst = appendUTF8String(dst, v.Type)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Data)))
	dst = append(dst, v.Data...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Refs)))
	for i := range v.Refs {
		dst = appendUTF8String(dst, v.Refs[i].Handle)
		dst = binary.BigEndian.AppendUint32(dst, uint32(v.Refs[i].Index))
	}
	return dst
}

// AppendValues appends an int4 count followed by each value of vs (the body of a
// RESOLUTION reply after the handle, and the tail of a stored record).
func AppendValues(dst []byte, vs []Value) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(vs)))
	for i := range vs {
		dst = AppendValue(dst, &vs[i])
	}
	return dst
}

// DecodeValue decodes one value from the start of b and reports how many bytes it
// used; bytes after the value are left alone. The returned Value owns its memory
// (Type, Data and Refs are copies). The permission byte is reduced to its low four
// bits, as the reference implementation keeps only those. Errors are *DecodeError
// with offsets relative to b.
func DecodeValue(b []byte) (v Value, n int, err error) {
	r := wireReader{b: b}
	v, err = r.value(nil)
	if err != nil {
		return Value{}, 0, err
	}
	return v, r.off, nil
}

// DecodeValuesShared decodes an int4 count and that many values from the start
// of b (the format AppendValues writes) and reports how many bytes it used. At
// most MaxValues values are accepted. The values' data, type names (other than
// the well-known ones, which are constants) and reference handles alias b. It
// is for a caller that has copied the encoding into memory of its own, one
// allocation with no pointers in it, so that a decoded record is that buffer
// and its []Value (and a []Ref per value with references) rather than an
// object per string and slice: less work for the allocator and for the garbage
// collector while the values live. The caller must never modify b afterwards;
// any value keeps all of b alive. Data slices are capped, so an append to one
// cannot overwrite another.
func DecodeValuesShared(b []byte) (vs []Value, n int, err error) { return decodeValues(b, true) }

// decodeValues is DecodeValuesShared, or, unshared, the same with the values
// owning their memory: their Data slices share one freshly allocated buffer
// (never b), each capped; the tests use it to check both agree.
func decodeValues(b []byte, shared bool) (vs []Value, n int, err error) {
	r := wireReader{b: b, shared: shared}
	count, err := r.count("value count", MaxValues)
	if err != nil {
		return nil, 0, err
	}
	// Never trust the count for allocation: a value needs at least minValueLen bytes.
	capHint := count
	if maxFit := r.remaining() / minValueLen; capHint > maxFit {
		capHint = maxFit
	}
	vs = make([]Value, 0, capHint)
	// Unshared, the data of all values is copied into one arena, at most the
	// input's size; shared, it stays in b.
	var arena []byte
	ap := &arena
	if shared {
		ap = nil
	}
	for i := 0; i < count; i++ {
		v, err := r.value(ap)
		if err != nil {
			return nil, 0, err
		}
		vs = append(vs, v)
	}
	return vs, r.off, nil
}

// AppendAdmin appends the HS_ADMIN data encoding of a: int2 mask, UTF8-String admin
// handle, int4 admin index (docs/handle-protocol.md §3.4).
func AppendAdmin(dst []byte, a Admin) []byte {
	dst = binary.BigEndian.AppendUint16(dst, a.Mask)
	dst = appendUTF8String(dst, a.Handle)
	return binary.BigEndian.AppendUint32(dst, uint32(a.Index))
}

// DecodeAdmin decodes HS_ADMIN value data. b must hold exactly one admin record;
// two extra trailing bytes are tolerated because older CNRI servers wrote them
// (the reference decoder accepts them too), anything else left over is
// ErrTrailingData. The returned Admin does not alias b.
func DecodeAdmin(b []byte) (Admin, error) {
	r := wireReader{b: b}
	mask, h, idx, err := r.admin()
	if err != nil {
		return Admin{}, err
	}
	if rest := r.remaining(); rest != 0 && rest != 2 {
		return Admin{}, r.fail("admin record end", ErrTrailingData)
	}
	return Admin{Mask: mask, Handle: string(h), Index: idx}, nil
}

// AppendVList appends the HS_VLIST data encoding of refs: int4 count, then per
// reference a UTF8-String handle and an int4 index.
func AppendVList(dst []byte, refs []Ref) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(refs)))
	for i := range refs {
		dst = appendUTF8String(dst, refs[i].Handle)
		dst = binary.BigEndian.AppendUint32(dst, uint32(refs[i].Index))
	}
	return dst
}

// DecodeVList decodes HS_VLIST value data. b must hold exactly the list (at most
// MaxRefs entries); leftover bytes are ErrTrailingData. An empty list decodes to
// a nil slice. The result does not alias b.
func DecodeVList(b []byte) ([]Ref, error) {
	r := wireReader{b: b}
	refs, err := r.refs(vlistNames)
	if err != nil {
		return nil, err
	}
	if r.remaining() != 0 {
		return nil, r.fail("vlist end", ErrTrailingData)
	}
	return refs, nil
}

// Equal reports whether v and w hold the same value. Nil and empty Data or Refs
// are equal; Perm is compared in full.
func (v *Value) Equal(w *Value) bool {
	if v.Index != w.Index || v.Type != w.Type || v.TTLType != w.TTLType || v.TTL != w.TTL ||
		v.Timestamp != w.Timestamp || v.Perm != w.Perm || !bytes.Equal(v.Data, w.Data) ||
		len(v.Refs) != len(w.Refs) {
		return false
	}
	for i := range v.Refs {
		if v.Refs[i] != w.Refs[i] {
			return false
		}
	}
	return true
}

func appendUTF8String(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// wireReader is a bounds-checked cursor over binary input, after miekg/dns's unpack
// helpers: every read checks the remaining length first and reports the offset of
// the field it was reading.
type wireReader struct {
	b   []byte
	off int
	// shared: decoded strings and data alias b instead of being copied
	// (DecodeValuesShared, whose caller never modifies b afterwards).
	shared bool
}

func (r *wireReader) remaining() int { return len(r.b) - r.off }

func (r *wireReader) fail(what string, err error) error {
	return &DecodeError{Offset: r.off, What: what, Err: err}
}

func (r *wireReader) u8(what string) (byte, error) {
	if r.remaining() < 1 {
		return 0, r.fail(what, ErrTruncated)
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *wireReader) u16(what string) (uint16, error) {
	if r.remaining() < 2 {
		return 0, r.fail(what, ErrTruncated)
	}
	x := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return x, nil
}

func (r *wireReader) u32(what string) (uint32, error) {
	if r.remaining() < 4 {
		return 0, r.fail(what, ErrTruncated)
	}
	x := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return x, nil
}

// count reads an int4 count or length: negative is ErrNegativeLength, above limit
// ErrTooLong. The offset reported on error is that of the int4 itself.
func (r *wireReader) count(what string, limit int) (int, error) {
	start := r.off
	x, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	if int32(x) < 0 {
		r.off = start
		return 0, r.fail(what, ErrNegativeLength)
	}
	if int64(x) > int64(limit) {
		r.off = start
		return 0, r.fail(what, ErrTooLong)
	}
	return int(x), nil
}

// lenBytes reads an int4 length (≤ MaxLength) and that many bytes; lenWhat and
// what name the two fields in errors (constants, so no string is built per call).
// The result aliases r.b; callers copy.
func (r *wireReader) lenBytes(lenWhat, what string) ([]byte, error) {
	n, err := r.count(lenWhat, MaxLength)
	if err != nil {
		return nil, err
	}
	if r.remaining() < n {
		return nil, r.fail(what, ErrTruncated)
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s, nil
}

// value decodes one HandleValue. If arena is not nil, Data is copied into *arena,
// which is allocated on first use with room for this and every later value's data
// (all of it lies in the rest of the input); otherwise Data gets its own copy,
// unless r.shared, when Data and the strings alias r.b.
func (r *wireReader) value(arena *[]byte) (Value, error) {
	var v Value
	idx, err := r.u32("value index")
	if err != nil {
		return v, err
	}
	ts, err := r.u32("value timestamp")
	if err != nil {
		return v, err
	}
	tt, err := r.u8("value ttl type")
	if err != nil {
		return v, err
	}
	if tt > byte(TTLAbsolute) {
		r.off--
		return v, r.fail("value ttl type", ErrBadTTLType)
	}
	ttl, err := r.u32("value ttl")
	if err != nil {
		return v, err
	}
	perm, err := r.u8("value permission")
	if err != nil {
		return v, err
	}
	typ, err := r.lenBytes("value type length", "value type")
	if err != nil {
		return v, err
	}
	data, err := r.lenBytes("value data length", "value data")
	if err != nil {
		return v, err
	}
	refs, err := r.refs(valueRefNames)
	if err != nil {
		return v, err
	}
	v.Index = int32(idx)
	v.Timestamp = int64(ts)
	v.TTLType = TTLType(tt)
	v.TTL = int32(ttl)
	v.Perm = Perm(perm) & 0x0F
	if r.shared {
		if v.Type = internKnownType(typ); v.Type == "" {
			v.Type = unsafeconv.String(typ)
		}
		if len(data) > 0 {
			v.Data = data // capped by lenBytes
		}
		v.Refs = refs
		return v, nil
	}
	v.Type = internType(typ)
	if len(data) > 0 {
		if arena != nil && *arena == nil {
			*arena = make([]byte, 0, len(data)+r.remaining())
		}
		if arena != nil && cap(*arena)-len(*arena) >= len(data) {
			a := *arena
			start := len(a)
			a = append(a, data...)
			v.Data = a[start:len(a):len(a)]
			*arena = a
		} else {
			v.Data = bytes.Clone(data)
		}
	}
	v.Refs = refs
	return v, nil
}

// refNames names the fields of a reference list in errors.
type refNames struct{ count, handleLen, handle, index string }

var (
	valueRefNames = &refNames{"value reference count", "value reference handle length", "value reference handle", "value reference index"}
	vlistNames    = &refNames{"vlist count", "vlist handle length", "vlist handle", "vlist index"}
)

// refs reads an int4 count (≤ MaxRefs) and that many {UTF8-String handle, int4
// index} pairs, copying the handles. Zero references give nil.
func (r *wireReader) refs(what *refNames) ([]Ref, error) {
	n, err := r.count(what.count, MaxRefs)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	capHint := n
	if maxFit := r.remaining() / minRefLen; capHint > maxFit {
		capHint = maxFit
	}
	refs := make([]Ref, 0, capHint)
	for i := 0; i < n; i++ {
		h, err := r.lenBytes(what.handleLen, what.handle)
		if err != nil {
			return nil, err
		}
		idx, err := r.u32(what.index)
		if err != nil {
			return nil, err
		}
		ref := Ref{Index: int32(idx)}
		if r.shared {
			ref.Handle = unsafeconv.String(h)
		} else {
			ref.Handle = string(h)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// admin reads the fields of an HS_ADMIN record; the handle aliases r.b.
func (r *wireReader) admin() (mask uint16, handle []byte, index int32, err error) {
	if mask, err = r.u16("admin mask"); err != nil {
		return
	}
	if handle, err = r.lenBytes("admin handle length", "admin handle"); err != nil {
		return
	}
	idx, err := r.u32("admin index")
	return mask, handle, int32(idx), err
}

// internType returns the well-known type names without allocating; others are copied.
func internType(b []byte) string {
	if t := internKnownType(b); t != "" || len(b) == 0 {
		return t
	}
	return string(b)
}

// InternedTypes are the type names the decoders intern: a decoded value whose
// type spells one of them gets that very string (the same data pointer), not
// a copy, so it costs no heap memory. The cache relies on the pointer identity
// when it charges an entry for its memory. Read only.
var InternedTypes = [...]string{
	TypeURL, TypeEmail, TypeAdmin, TypeVList, TypeSite, TypePubKey, TypeAlias, TypeStatus, TypeRelated,
	"SCHEMA_VER", "METADATA_LICENSE", "RESOURCE", "CHANGES", "DESC",
}

// internKnownType returns the element of InternedTypes b spells, or "" if it
// is none.
func internKnownType(b []byte) string {
	for _, t := range &InternedTypes {
		if string(b) == t { // no allocation: the compiler compares in place
			return t
		}
	}
	return ""
}
