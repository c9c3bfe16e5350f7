package hsmsg

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// Request digest algorithms (docs/handle-protocol.md §3.3).
const (
	DigestMD5OldFormat uint8 = 0 // decoded only: int4 length + MD5 (protocol 2.0)
	DigestMD5          uint8 = 1
	DigestSHA1         uint8 = 2
	DigestSHA256       uint8 = 3
)

// AtLeast reports whether protocol version major.minor is at least wantMajor.wantMinor.
func AtLeast(major, minor, wantMajor, wantMinor uint8) bool {
	if major != wantMajor {
		return major > wantMajor
	}
	return minor >= wantMinor
}

// DigestAlgFor returns the request-digest algorithm a reply of protocol version
// major.minor carries: SHA-256 from 2.7, SHA-1 from 2.1, MD5 below
// (AbstractResponse.takeDigestOfRequest).
func DigestAlgFor(major, minor uint8) uint8 {
	switch {
	case AtLeast(major, minor, 2, 7):
		return DigestSHA256
	case AtLeast(major, minor, 2, 1):
		return DigestSHA1
	default:
		return DigestMD5
	}
}

// DigestLen is the digest size of alg in bytes, 0 for an unknown algorithm.
func DigestLen(alg uint8) int {
	switch alg {
	case DigestMD5, DigestMD5OldFormat:
		return md5.Size
	case DigestSHA1:
		return sha1.Size
	case DigestSHA256:
		return sha256.Size
	}
	return 0
}

// AppendDigest appends the RequestDigest field: alg byte + digest of signed (the
// request's header+body, Message.Signed). alg must be DigestMD5, DigestSHA1 or
// DigestSHA256. It allocates nothing.
func AppendDigest(dst []byte, alg uint8, signed []byte) []byte {
	dst = append(dst, alg)
	switch alg {
	case DigestMD5:
		s := md5.Sum(signed)
		return append(dst, s[:]...)
	case DigestSHA1:
		s := sha1.Sum(signed)
		return append(dst, s[:]...)
	default:
		s := sha256.Sum256(signed)
		return append(dst, s[:]...)
	}
}

// Digest is a decoded RequestDigest field.
type Digest struct {
	Alg uint8
	Sum []byte // aliases the input
}

func (r *reader) digest() (Digest, error) {
	start := r.off
	alg, err := r.u8("request digest algorithm")
	if err != nil {
		return Digest{}, err
	}
	if alg == DigestMD5OldFormat {
		r.off = start
		sum, err := r.bytes("request digest", 64)
		return Digest{Alg: alg, Sum: sum}, err
	}
	n := DigestLen(alg)
	if n == 0 {
		return Digest{}, ferr(r.base+start, "request digest algorithm", ErrBadDigest)
	}
	sum, err := r.raw("request digest", n)
	return Digest{Alg: alg, Sum: sum}, err
}

// ResolutionRequest is the body of an OC_RESOLUTION request. Decode reuses the
// Indexes and Types slices, so a pooled ResolutionRequest decodes without allocating;
// Handle and Types alias the body.
type ResolutionRequest struct {
	Handle  []byte
	Indexes []int32
	Types   [][]byte
}

// Decode parses body = Handle UTF8-String | int4 n + n×int4 | int4 m + m×UTF8-String.
// Bytes after the type list are ignored, as the reference decoder does.
func (q *ResolutionRequest) Decode(body []byte) error {
	q.Handle, q.Indexes, q.Types = nil, q.Indexes[:0], q.Types[:0]
	r := reader{b: body, base: HeaderLen}
	var err error
	if q.Handle, err = r.bytes("handle", MaxMessageLen); err != nil {
		return err
	}
	n, err := r.length("index count", MaxFilters)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		v, err := r.u32("index")
		if err != nil {
			return err
		}
		q.Indexes = append(q.Indexes, int32(v))
	}
	m, err := r.length("type count", MaxFilters)
	if err != nil {
		return err
	}
	for i := 0; i < m; i++ {
		t, err := r.bytes("type", MaxMessageLen)
		if err != nil {
			return err
		}
		q.Types = append(q.Types, t)
	}
	return nil
}

// AppendResolutionRequest appends the body of an OC_RESOLUTION request.
func AppendResolutionRequest(dst []byte, q *ResolutionRequest) []byte {
	dst = appendBytes(dst, q.Handle)
	dst = appendU32(dst, uint32(len(q.Indexes)))
	for _, i := range q.Indexes {
		dst = appendU32(dst, uint32(i))
	}
	dst = appendU32(dst, uint32(len(q.Types)))
	for _, t := range q.Types {
		dst = appendBytes(dst, t)
	}
	return dst
}

// MatchType reports whether a value type matches a requested type the way the
// reference server does (Util.isParentTypeInArray), ASCII case-insensitively:
// a requested type ending in '.' matches every type that starts with it and the
// type equal to it without the dot ("URL." matches "URL" and "URL.jp"); any other
// requested type matches only itself ("URL" does not match "URL.jp").
func MatchType(requested []byte, valueType string) bool {
	if len(valueType) == 0 {
		return false
	}
	if n := len(requested); n > 0 && requested[n-1] == '.' {
		if len(valueType) >= n && ascii.EqualFold(requested, valueType[:n]) {
			return true
		}
		return ascii.EqualFold(requested[:n-1], valueType)
	}
	return ascii.EqualFold(requested, valueType)
}

// AppendErrorBody appends the body of an error reply after any digest: the message
// as UTF8-String (may be empty).
func AppendErrorBody(dst []byte, msg string) []byte { return appendString(dst, msg) }

// AppendResolutionBody appends the body of a RESOLUTION reply after any digest:
// handle UTF8-String, then wire, which must already be int4 count + values
// (handlev.AppendValues, or cache.Entry.Wire).
func AppendResolutionBody(dst, handle, wire []byte) []byte {
	dst = appendBytes(dst, handle)
	return append(dst, wire...)
}

// Reply is a decoded reply message. Which fields are set depends on the response
// code and op code: Values and Handle for a successful RESOLUTION, Site for a
// successful GET_SITE_INFO, ErrorMessage for error codes, Rest (the body after the
// digest, undecoded) for anything else. Byte slices alias the input; Values and
// Site own their memory.
type Reply struct {
	Message
	Digest       *Digest
	Handle       []byte
	Values       []handlev.Value
	ErrorMessage []byte
	Site         *Site
	Rest         []byte
}

// ParseReply decodes msg = header | body | [credential] of a reply.
func ParseReply(msg []byte) (Reply, error) {
	m, err := ParseMessage(msg)
	if err != nil {
		return Reply{}, err
	}
	rep := Reply{Message: m}
	r := reader{b: m.Body, base: HeaderLen}
	if m.Header.OpFlag&FlagRD != 0 {
		d, err := r.digest()
		if err != nil {
			return Reply{}, err
		}
		rep.Digest = &d
	}
	h := &m.Header
	switch {
	case h.ResponseCode == RCSuccess && h.OpCode == OpResolution:
		if rep.Handle, err = r.bytes("handle", MaxHandleLen); err != nil {
			return Reply{}, err
		}
		n, err := r.length("value count", MaxValues)
		if err != nil {
			return Reply{}, err
		}
		rep.Values = make([]handlev.Value, 0, min(n, r.remaining()/22+1))
		for i := 0; i < n; i++ {
			start := r.off
			v, k, err := handlev.DecodeValue(r.b[r.off:])
			if err != nil {
				return Reply{}, &FormatError{Offset: r.base + start, What: "handle value", Err: ErrValue, Cause: err}
			}
			r.off += k
			rep.Values = append(rep.Values, v)
		}
	case h.ResponseCode == RCSuccess && h.OpCode == OpGetSiteInfo:
		s, err := DecodeSite(r.b[r.off:])
		if err != nil {
			if fe, ok := err.(*FormatError); ok {
				fe.Offset += r.base + r.off
			}
			return Reply{}, err
		}
		rep.Site = &s
		r.off = len(r.b)
	case h.ResponseCode == RCSuccess || h.ResponseCode == 302 || h.ResponseCode == 303 || h.ResponseCode == 402:
		rep.Rest = r.b[r.off:]
		r.off = len(r.b)
	default:
		if r.remaining() > 0 {
			if rep.ErrorMessage, err = r.bytes("error message", MaxMessageLen); err != nil {
				return Reply{}, err
			}
		}
	}
	if r.remaining() != 0 {
		return Reply{}, ferr(r.base+r.off, "reply body end", ErrTrailingData)
	}
	return rep, nil
}
