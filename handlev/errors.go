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

// Limits of the RFC 3651 binary codec (docs/handle-protocol.md §3.1, §3.3).
const (
	// MaxLength is the largest UTF8-String or data length accepted; larger is ErrTooLong.
	MaxLength = 262144
	// MaxValues is the largest value count DecodeValuesShared accepts.
	MaxValues = 65536
	// MaxRefs is the largest reference count (value references, HS_VLIST entries).
	MaxRefs = 2048
	// MaxRecordJSON is the longest Handle JSON text of one record
	// ({"handle":…,"values":[…]}, one line of an export) that an import reads
	// back: a record whose text is longer could be stored but not restored.
	MaxRecordJSON = 16 << 20
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
	// ErrLoneSurrogate: a JSON string escapes a lone UTF-16 surrogate (\ud800),
	// which is no character; decoding it as U+FFFD would alter the data.
	ErrLoneSurrogate = errors.New("handlev: lone surrogate escape in JSON string")
)

// DecodeError reports where binary decoding failed. It wraps one of the sentinel
// errors above (errors.Is(err, ErrTruncated) …).
type DecodeError struct {
	Offset int    // byte offset in the input where the failing field starts
	What   string // the field being read, e.g. "value data length"
	Err    error  // sentinel: ErrTruncated, ErrTooLong, ErrNegativeLength …
}

func (e *DecodeError) Error() string {
	msg := "invalid"
	if e.Err != nil {
		msg = trimErrPrefix(e.Err.Error())
	}
	return "handlev: decode " + e.What + " at offset " + strconv.Itoa(e.Offset) + ": " + msg
}

// Unwrap returns the sentinel error.
func (e *DecodeError) Unwrap() error { return e.Err }

// JSONError reports Handle JSON input that is not a valid record or value. Value is
// the position of the value in the "values" array (-1 for the record itself or its
// top-level fields); Field names the offending key ("data.value", "ttl",
// "references[2].index" …; empty when the input is not JSON at all). Err, when not
// nil, is the underlying error (a *json.SyntaxError, ErrTooLong …).
type JSONError struct {
	Value int
	Field string
	Msg   string
	Err   error
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

// Unwrap returns the underlying error, if any.
func (e *JSONError) Unwrap() error { return e.Err }

func trimErrPrefix(s string) string {
	const p = "handlev: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// ---- end codec errors ----

// ---- handle name errors (handle.go, mint.go) ----

var (
	// ErrEmpty: the handle (or proxy path) is empty, or nothing is left after
	// stripping an hdl:/doi:/info:/urn: scheme prefix.
	ErrEmpty = errors.New("handlev: empty handle")
	// ErrBadEscape: a '%' in a proxy path not followed by two hex digits.
	ErrBadEscape = errors.New("handlev: bad percent escape")
	// ErrInvalidUTF8: a handle is not valid UTF-8 after percent-decoding.
	ErrInvalidUTF8 = errors.New("handlev: invalid UTF-8")
	// ErrControl: a handle contains a control byte (0x00–0x1F or 0x7F), NUL included.
	ErrControl = errors.New("handlev: control byte in handle")
	// ErrDotSegment: a proxy path has a "." or ".." segment; no handle has one and
	// it is a path-traversal probe.
	ErrDotSegment = errors.New("handlev: dot segment in handle")
	// ErrPrefixNotServed: the handle's prefix is none of the node's prefixes.
	// Returned as *PrefixError; callers map it to responseCode 301 / HTTP 404 "Prefix X not found".
	ErrPrefixNotServed = errors.New("handlev: prefix not served")
	// ErrBadPrefix: a configured prefix is not a valid prefix (NewNamer).
	ErrBadPrefix = errors.New("handlev: bad prefix")
	// ErrBadSvc: the configured service segment is not 1–32 ASCII letters or digits (NewNamer).
	ErrBadSvc = errors.New("handlev: bad service segment")
	// ErrBadNamespace: a namespace is not 1–16 characters of [0-9A-Z] (docs/product.md §2).
	ErrBadNamespace = errors.New("handlev: bad namespace")
	// ErrBadCustomID: a custom id breaks the docs/product.md §2 rules.
	ErrBadCustomID = errors.New("handlev: bad custom id")
)

// HandleError says where a handle or proxy path is invalid. Offset counts bytes
// from the start of the input the function was given (the raw, still
// percent-encoded path for DecodePath; the handle for Namer.AppendKey). Byte is
// the offending decoded byte for ErrControl and ErrInvalidUTF8, '%' for
// ErrBadEscape. Err is one of ErrBadEscape, ErrInvalidUTF8, ErrControl, ErrDotSegment.
type HandleError struct {
	Offset int
	Byte   byte
	Err    error
}

func (e *HandleError) Error() string {
	s := e.Err.Error()
	switch e.Err {
	case ErrControl, ErrInvalidUTF8:
		s += " 0x" + strconv.FormatUint(uint64(e.Byte)>>4, 16) + strconv.FormatUint(uint64(e.Byte)&15, 16)
	}
	return s + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the sentinel error.
func (e *HandleError) Unwrap() error { return e.Err }

// PrefixError reports a handle whose prefix the node does not serve. Prefix is the
// prefix as the client wrote it ("0.NA" for a handle without '/').
// errors.Is(err, ErrPrefixNotServed) holds.
type PrefixError struct {
	Prefix string
}

func (e *PrefixError) Error() string {
	return "handlev: prefix not served: " + strconv.Quote(e.Prefix)
}

// Unwrap returns ErrPrefixNotServed.
func (e *PrefixError) Unwrap() error { return ErrPrefixNotServed }

// ---- end handle name errors ----
