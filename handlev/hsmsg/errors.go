package hsmsg

import (
	"errors"
	"strconv"
)

// Sentinel errors. Decoders return them wrapped in a *FormatError that says where.
var (
	// ErrTruncated: the input ends before the field being read.
	ErrTruncated = errors.New("hsmsg: truncated")
	// ErrTooLong: a length or count exceeds its limit (MaxMessageLen for lengths,
	// MaxHandleLen for handles, MaxValues for value counts …).
	ErrTooLong = errors.New("hsmsg: too long")
	// ErrNegativeLength: an int4 length or count has its sign bit set.
	ErrNegativeLength = errors.New("hsmsg: negative length")
	// ErrTrailingData: bytes are left over after a structure that must fill its input.
	ErrTrailingData = errors.New("hsmsg: trailing data")
	// ErrBadDigest: a request digest with an unknown algorithm byte.
	ErrBadDigest = errors.New("hsmsg: unknown digest algorithm")
	// ErrBadCredential: a credential section that is not a well-formed HS_SIGNED one.
	ErrBadCredential = errors.New("hsmsg: bad credential")
	// ErrBadSignature: a signature that does not verify.
	ErrBadSignature = errors.New("hsmsg: signature does not verify")
	// ErrBadKey: public-key bytes that are not an RSA_PUB_KEY encoding.
	ErrBadKey = errors.New("hsmsg: bad public key")
	// ErrFragment: a UDP piece that does not belong to the message being assembled
	// (other request id or length, piece number out of range, wrong piece size).
	ErrFragment = errors.New("hsmsg: bad fragment")
	// ErrValue wraps a handle value the handlev codec rejected (the cause is kept
	// in FormatError.Cause).
	ErrValue = errors.New("hsmsg: bad handle value")
)

// FormatError reports where decoding failed. It wraps one of the sentinel errors
// above (errors.Is(err, ErrTruncated) …); Cause, when set, is the underlying error
// from handlev.
type FormatError struct {
	Offset int    // byte offset in the decoded input where the failing field starts
	What   string // the field being read, e.g. "envelope message length"
	Err    error  // sentinel
	Cause  error  // optional underlying error (handlev.DecodeError …)
}

func (e *FormatError) Error() string {
	s := "hsmsg: decode " + e.What + " at offset " + strconv.Itoa(e.Offset) + ": " + trimPrefix(e.Err.Error())
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause.
func (e *FormatError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func trimPrefix(s string) string {
	const p = "hsmsg: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

func ferr(off int, what string, err error) error {
	return &FormatError{Offset: off, What: what, Err: err}
}
