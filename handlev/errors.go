package handlev

import (
	"errors"
	"strconv"
)

// Errors shared by the name and codec helpers. ErrTooLong is one sentinel for every
// length limit in the package (handle names, strings and data in the binary codec),
// so callers test errors.Is(err, ErrTooLong) whatever the input was.
var (
	// ErrTooLong: a length exceeds its limit (MaxHandleLen for handle names,
	// MaxLength for binary strings and data, MaxValues/MaxRefs for counts).
	ErrTooLong = errors.New("handlev: too long")
)

// ---- codec errors (binary.go, json.go) ----

// Limits of the RFC 3651 binary codec (HANDLE-PROTOCOL.md §3.1, §3.3).
const (
	// MaxLength is the largest UTF8-String or data length accepted; larger is ErrTooLong.
	MaxLength = 262144
	// MaxValues is the largest value count DecodeValues accepts.
	MaxValues = 65536
	// MaxRefs is the largest reference count (value references, HS_VLIST entries).
	MaxRefs = 2048
)

var (
	// ErrTruncated: the input ends before the field being read.
	ErrTruncated = errors.New("handlev: truncated")
	// ErrNegativeLength: an int4 length or count has its sign bit set.
	ErrNegativeLength = errors.New("handlev: negative length")
	// ErrTrailingData: bytes are left over after a structure that must fill its input
	// (DecodeAdmin, DecodeVList).
	ErrTrailingData = errors.New("handlev: trailing data")
	// ErrBadTTLType: a TTL type byte other than 0 (relative) or 1 (absolute).
	ErrBadTTLType = errors.New("handlev: bad TTL type")
)

// DecodeError reports where binary decoding failed. It wraps one of the sentinel
// errors above (errors.Is(err, ErrTruncated) …).
type DecodeError struct {
	Offset int    // byte offset in the input where the failing field starts
	What   string // the field being read, e.g. "value data length"
	Err    error  // sentinel: ErrTruncated, ErrTooLong, ErrNegativeLength …
}

func (e *DecodeError) Error() string {
	return "handlev: decode " + e.What + " at offset " + strconv.Itoa(e.Offset) + ": " + trimPrefix(e.Err.Error())
}

// Unwrap returns the sentinel error.
func (e *DecodeError) Unwrap() error { return e.Err }

// JSONError reports a Handle JSON input that is well-formed JSON but not a valid
// record or value. Value is the index of the value in the "values" array (-1 for a
// top-level field); Field names the offending key ("data", "ttl", "references[2].index" …).
type JSONError struct {
	Value int
	Field string
	Msg   string
}

func (e *JSONError) Error() string {
	s := "handlev: json"
	if e.Value >= 0 {
		s += " value " + strconv.Itoa(e.Value)
	}
	if e.Field != "" {
		s += " field " + strconv.Quote(e.Field)
	}
	return s + ": " + e.Msg
}

func trimPrefix(s string) string {
	const p = "handlev: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// ---- end codec errors ----
