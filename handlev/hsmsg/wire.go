package hsmsg

import "encoding/binary"

// reader walks a byte slice with bounds checks. base is added to reported offsets
// so that errors point into the enclosing message.
type reader struct {
	b    []byte
	off  int
	base int
}

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) u8(what string) (uint8, error) {
	if r.remaining() < 1 {
		return 0, ferr(r.base+r.off, what, ErrTruncated)
	}
	v := r.b[r.off]
	r.off++
	return v, nil
}

func (r *reader) u16(what string) (uint16, error) {
	if r.remaining() < 2 {
		return 0, ferr(r.base+r.off, what, ErrTruncated)
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v, nil
}

func (r *reader) u32(what string) (uint32, error) {
	if r.remaining() < 4 {
		return 0, ferr(r.base+r.off, what, ErrTruncated)
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

// length reads an int4 length or count: negative → ErrNegativeLength, above limit →
// ErrTooLong. It does not check the remaining input (counts are checked by their
// elements).
func (r *reader) length(what string, limit int) (int, error) {
	start := r.off
	v, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	if int32(v) < 0 {
		return 0, ferr(r.base+start, what, ErrNegativeLength)
	}
	if int(v) > limit {
		return 0, ferr(r.base+start, what, ErrTooLong)
	}
	return int(v), nil
}

// bytes reads int4 length + bytes (a UTF8-String or data field), aliasing r.b.
func (r *reader) bytes(what string, limit int) ([]byte, error) {
	start := r.off
	n, err := r.length(what, limit)
	if err != nil {
		return nil, err
	}
	if r.remaining() < n {
		return nil, ferr(r.base+start, what, ErrTruncated)
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v, nil
}

// raw reads n bytes, aliasing r.b.
func (r *reader) raw(what string, n int) ([]byte, error) {
	if r.remaining() < n {
		return nil, ferr(r.base+r.off, what, ErrTruncated)
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v, nil
}

func appendU16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// appendBytes appends int4 length + b (a UTF8-String or data field).
func appendBytes(dst, b []byte) []byte {
	dst = appendU32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendString(dst []byte, s string) []byte {
	dst = appendU32(dst, uint32(len(s)))
	return append(dst, s...)
}
