package handlev

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Handle JSON decoding. It is not on the read path (imports, the admin API, tests),
// so it uses encoding/json and favours exact error reports over speed. Everything
// it accepts encodes to binary that DecodeValuesShared accepts (lengths ≤ MaxLength,
// counts ≤ MaxRefs/MaxValues, timestamps within int4), and re-encodes with
// AppendValueJSON to JSON that decodes to the same values.

// DefaultTTL is the TTL a decoded value gets when its JSON has no "ttl" (the
// reference server's default).
const DefaultTTL = 86400

// DecodeRecordJSON decodes a Handle JSON record: {"responseCode":1,"handle":…,
// "values":[…]}. responseCode is optional but, when present, must be 1; handle
// (a non-empty string) and values (an array, at most MaxValues) are required.
// Unknown keys are ignored. Errors are *JSONError naming the value position and
// field. The result does not alias b. Each value is an object with:
//
//   - index (required): integer in int32 range;
//   - type (required): string;
//   - data (required): a bare string (its UTF-8 bytes), or {"format":…,"value":…} with
//     format "string", "base64" (standard alphabet, padded or not), "hex",
//     "admin" ({"handle","index","permissions": up to 16 binary digits}, stored as
//     AppendAdmin) or "vlist" ([{"handle","index"}…], stored as AppendVList);
//     any other format is an error;
//   - permissions (optional, default 1110): four 0/1 characters;
//   - ttl (optional, default DefaultTTL relative): an integer (relative seconds) or
//     an ISO 8601 / RFC 3339 string (absolute expiry), both within int32;
//   - timestamp (optional, default 0): ISO 8601 / RFC 3339 string or integer unix
//     seconds, within 0 … 2^32-1 (the int4 of the wire format);
//   - references (optional): [{"handle","index"}…], at most MaxRefs.
//
// null counts as absent for optional fields; unknown keys are ignored.
func DecodeRecordJSON(b []byte) (handle string, vs []Value, err error) {
	// Fast path for the common shapes, which checks the syntax as it goes;
	// anything unusual or wrong is decoded again by the encoding/json path
	// below, which also writes every error message.
	if handle, vs, ok := fastRecordJSON(b); ok {
		return handle, vs, nil
	}
	return decodeRecordJSONStd(b)
}

// decodeRecordJSONStd is DecodeRecordJSON on encoding/json: the reference for the
// fast path (see FuzzDecodeRecordJSON) and the source of all errors.
func decodeRecordJSONStd(b []byte) (handle string, vs []Value, err error) {
	obj, err := jsonObject(b, -1, "")
	if err != nil {
		return "", nil, err
	}
	if raw, ok := obj["responseCode"]; ok && !jsonNull(raw) {
		rc, err := jsonInt(raw, -1, "responseCode", math.MinInt32, math.MaxInt32)
		if err != nil {
			return "", nil, err
		}
		if rc != 1 {
			return "", nil, jsonErr(-1, "responseCode", "responseCode "+strconv.FormatInt(rc, 10)+" is not a record (want 1)", nil)
		}
	}
	raw, ok := obj["handle"]
	if !ok {
		return "", nil, jsonErr(-1, "handle", "missing", nil)
	}
	if handle, err = jsonString(raw, -1, "handle"); err != nil {
		return "", nil, err
	}
	if handle == "" {
		return "", nil, jsonErr(-1, "handle", "empty handle", nil)
	}
	raw, ok = obj["values"]
	if !ok {
		return "", nil, jsonErr(-1, "values", "missing", nil)
	}
	arr, err := jsonArray(raw, -1, "values")
	if err != nil {
		return "", nil, err
	}
	if len(arr) > MaxValues {
		return "", nil, jsonErr(-1, "values", "more than "+strconv.Itoa(MaxValues)+" values", ErrTooLong)
	}
	vs = make([]Value, 0, len(arr))
	for i, raw := range arr {
		v, err := decodeValueJSON(raw, i)
		if err != nil {
			return "", nil, err
		}
		vs = append(vs, v)
	}
	return handle, vs, nil
}

func jsonErr(vi int, field, msg string, err error) *JSONError {
	return &JSONError{Value: vi, Field: field, Msg: msg, Err: err}
}

func jsonNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonObject(raw []byte, vi int, field string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, jsonSyntax(raw, vi, field)
		}
		return nil, jsonErr(vi, field, "want an object", nil)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, jsonErr(vi, field, err.Error(), err)
	}
	return m, nil
}

func jsonSyntax(raw []byte, vi int, field string) error {
	var x any
	err := json.Unmarshal(raw, &x)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return jsonErr(vi, field, err.Error(), err)
}

func jsonArray(raw []byte, vi int, field string) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, jsonErr(vi, field, "want an array", nil)
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, jsonErr(vi, field, err.Error(), err)
	}
	return a, nil
}

func jsonString(raw []byte, vi int, field string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", jsonErr(vi, field, "want a string", nil)
	}
	// encoding/json would put U+FFFD in the place of both: the stored data
	// would silently differ from the input.
	if k := FindLoneSurrogate(raw); k >= 0 {
		return "", jsonErr(vi, field, "the escape "+string(raw[k:k+6])+" at byte "+strconv.Itoa(k)+
			" of the string is a lone UTF-16 surrogate, not a character (RFC 8259 §8.2)", ErrLoneSurrogate)
	}
	if !utf8.Valid(raw) {
		return "", jsonErr(vi, field, "the string is not valid UTF-8", ErrInvalidUTF8)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", jsonErr(vi, field, err.Error(), err)
	}
	return s, nil
}

// FindLoneSurrogate returns the offset in b of the first \u escape that is a
// lone UTF-16 surrogate, or -1 if there is none. A high surrogate
// (\uD800–\uDBFF) must be followed at once by an escaped low one
// (\uDC00–\uDFFF), and a low one must follow a high one (RFC 8259 §7).
// encoding/json decodes a lone surrogate as U+FFFD without an error, so a
// decoder that must not alter its input checks the raw text with this first.
//
// b is JSON text or a part of it that starts outside a string or at its
// opening quote; a backslash outside a string (not valid JSON) is read as the
// start of an escape. It allocates nothing.
func FindLoneSurrogate(b []byte) int {
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 {
			return -1
		}
		i += k
		if i+1 >= len(b) || b[i+1] != 'u' {
			i += 2 // \" \\ \n …: the escaped byte is never the start of an escape
			if i >= len(b) {
				return -1
			}
			continue
		}
		r, ok := escapedUnit(b, i)
		switch {
		case !ok:
			i += 2
		case r >= 0xDC00 && r < 0xE000:
			return i // a low surrogate without a high one before it
		case r >= 0xD800 && r < 0xDC00:
			if lo, ok := escapedUnit(b, i+6); !ok || lo < 0xDC00 || lo >= 0xE000 {
				return i
			}
			i += 12
		default:
			i += 6
		}
	}
}

// escapedUnit decodes the \uXXXX escape at b[i], if there is one.
func escapedUnit(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, h := range b[i+2 : i+6] {
		d, ok := UnhexDigit(h)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func jsonInt(raw []byte, vi int, field string, lo, hi int64) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, jsonErr(vi, field, "want an integer", nil)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, jsonErr(vi, field, "integer out of range", nil)
		}
		return 0, jsonErr(vi, field, "want an integer, got "+strconv.Quote(string(raw)), nil)
	}
	if n < lo || n > hi {
		return 0, jsonErr(vi, field, "integer "+strconv.FormatInt(n, 10)+" out of range", nil)
	}
	return n, nil
}

// jsonTime parses an ISO 8601 / RFC 3339 date-time into unix seconds (fractions
// are dropped) within [lo, hi].
func jsonTime(raw []byte, vi int, field string, lo, hi int64) (int64, error) {
	s, err := jsonString(raw, vi, field)
	if err != nil {
		return 0, err
	}
	t, perr := time.Parse(time.RFC3339, s)
	if perr != nil {
		return 0, jsonErr(vi, field, "want an ISO 8601 date-time like 2001-09-09T01:46:40Z, got "+strconv.Quote(s), perr)
	}
	n := t.Unix()
	if n < lo || n > hi {
		return 0, jsonErr(vi, field, "time "+strconv.Quote(s)+" out of range", nil)
	}
	return n, nil
}

func checkLen(n int, vi int, field string) error {
	if n > MaxLength {
		return jsonErr(vi, field, "longer than "+strconv.Itoa(MaxLength)+" bytes", ErrTooLong)
	}
	return nil
}

func decodeValueJSON(raw []byte, vi int) (Value, error) {
	v := Value{Perm: PermDefault, TTLType: TTLRelative, TTL: DefaultTTL}
	obj, err := jsonObject(raw, vi, "")
	if err != nil {
		return Value{}, err
	}
	r, ok := obj["index"]
	if !ok {
		return Value{}, jsonErr(vi, "index", "missing", nil)
	}
	idx, err := jsonInt(r, vi, "index", math.MinInt32, math.MaxInt32)
	if err != nil {
		return Value{}, err
	}
	v.Index = int32(idx)

	if r, ok = obj["type"]; !ok {
		return Value{}, jsonErr(vi, "type", "missing", nil)
	}
	if v.Type, err = jsonString(r, vi, "type"); err != nil {
		return Value{}, err
	}
	if err := checkLen(len(v.Type), vi, "type"); err != nil {
		return Value{}, err
	}

	if r, ok = obj["data"]; !ok || jsonNull(r) {
		return Value{}, jsonErr(vi, "data", "missing", nil)
	}
	if v.Data, err = decodeDataJSON(r, vi); err != nil {
		return Value{}, err
	}
	if err := checkLen(len(v.Data), vi, "data"); err != nil {
		return Value{}, err
	}

	if r, ok = obj["permissions"]; ok && !jsonNull(r) {
		s, err := jsonString(r, vi, "permissions")
		if err != nil {
			return Value{}, err
		}
		p, ok := parseBinaryDigits(s, 4, 4)
		if !ok {
			return Value{}, jsonErr(vi, "permissions", "want 4 characters 0 or 1, got "+strconv.Quote(s), nil)
		}
		v.Perm = Perm(p)
	}

	if r, ok = obj["ttl"]; ok && !jsonNull(r) {
		if t := bytes.TrimSpace(r); len(t) > 0 && t[0] == '"' {
			n, err := jsonTime(r, vi, "ttl", math.MinInt32, math.MaxInt32)
			if err != nil {
				return Value{}, err
			}
			v.TTLType, v.TTL = TTLAbsolute, int32(n)
		} else {
			n, err := jsonInt(r, vi, "ttl", math.MinInt32, math.MaxInt32)
			if err != nil {
				return Value{}, err
			}
			v.TTLType, v.TTL = TTLRelative, int32(n)
		}
	}

	if r, ok = obj["timestamp"]; ok && !jsonNull(r) {
		if t := bytes.TrimSpace(r); len(t) > 0 && t[0] == '"' {
			v.Timestamp, err = jsonTime(r, vi, "timestamp", 0, math.MaxUint32)
		} else {
			v.Timestamp, err = jsonInt(r, vi, "timestamp", 0, math.MaxUint32)
		}
		if err != nil {
			return Value{}, err
		}
	}

	if r, ok = obj["references"]; ok && !jsonNull(r) {
		if v.Refs, err = decodeRefsJSON(r, vi, "references"); err != nil {
			return Value{}, err
		}
	}
	return v, nil
}

// decodeRefsJSON reads [{"handle":…,"index":…}…]; empty gives nil.
func decodeRefsJSON(raw []byte, vi int, field string) ([]Ref, error) {
	arr, err := jsonArray(raw, vi, field)
	if err != nil {
		return nil, err
	}
	if len(arr) > MaxRefs {
		return nil, jsonErr(vi, field, "more than "+strconv.Itoa(MaxRefs)+" references", ErrTooLong)
	}
	if len(arr) == 0 {
		return nil, nil
	}
	refs := make([]Ref, len(arr))
	for i, r := range arr {
		f := field + "[" + strconv.Itoa(i) + "]"
		obj, err := jsonObject(r, vi, f)
		if err != nil {
			return nil, err
		}
		if refs[i].Handle, refs[i].Index, err = handleIndexJSON(obj, vi, f); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// handleIndexJSON reads the required "handle" and "index" of a reference or admin.
func handleIndexJSON(obj map[string]json.RawMessage, vi int, field string) (string, int32, error) {
	r, ok := obj["handle"]
	if !ok {
		return "", 0, jsonErr(vi, field+".handle", "missing", nil)
	}
	h, err := jsonString(r, vi, field+".handle")
	if err != nil {
		return "", 0, err
	}
	if err := checkLen(len(h), vi, field+".handle"); err != nil {
		return "", 0, err
	}
	if r, ok = obj["index"]; !ok {
		return "", 0, jsonErr(vi, field+".index", "missing", nil)
	}
	idx, err := jsonInt(r, vi, field+".index", math.MinInt32, math.MaxInt32)
	if err != nil {
		return "", 0, err
	}
	return h, int32(idx), nil
}

func decodeDataJSON(raw []byte, vi int) ([]byte, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		s, err := jsonString(raw, vi, "data")
		return nonEmpty([]byte(s)), err
	}
	obj, err := jsonObject(raw, vi, "data")
	if err != nil {
		return nil, jsonErr(vi, "data", "want an object or a string", nil)
	}
	r, ok := obj["format"]
	if !ok {
		return nil, jsonErr(vi, "data.format", "missing", nil)
	}
	format, err := jsonString(r, vi, "data.format")
	if err != nil {
		return nil, err
	}
	val, ok := obj["value"]
	if !ok || jsonNull(val) {
		return nil, jsonErr(vi, "data.value", "missing", nil)
	}
	switch format {
	case "string":
		s, err := jsonString(val, vi, "data.value")
		return nonEmpty([]byte(s)), err
	case "base64":
		s, err := jsonString(val, vi, "data.value")
		if err != nil {
			return nil, err
		}
		enc := base64.StdEncoding
		if len(s)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		b, derr := enc.DecodeString(s)
		if derr != nil {
			return nil, jsonErr(vi, "data.value", "bad base64: "+derr.Error(), derr)
		}
		return nonEmpty(b), nil
	case "hex":
		s, err := jsonString(val, vi, "data.value")
		if err != nil {
			return nil, err
		}
		b, derr := hex.DecodeString(s)
		if derr != nil {
			return nil, jsonErr(vi, "data.value", "bad hex: "+derr.Error(), derr)
		}
		return nonEmpty(b), nil
	case "admin":
		obj, err := jsonObject(val, vi, "data.value")
		if err != nil {
			return nil, err
		}
		h, idx, err := handleIndexJSON(obj, vi, "data.value")
		if err != nil {
			return nil, err
		}
		r, ok := obj["permissions"]
		if !ok {
			return nil, jsonErr(vi, "data.value.permissions", "missing", nil)
		}
		s, err := jsonString(r, vi, "data.value.permissions")
		if err != nil {
			return nil, err
		}
		mask, ok := parseBinaryDigits(s, 1, 16)
		if !ok {
			return nil, jsonErr(vi, "data.value.permissions", "want up to 16 characters 0 or 1, got "+strconv.Quote(s), nil)
		}
		return AppendAdmin(nil, Admin{Mask: uint16(mask), Handle: h, Index: idx}), nil
	case "vlist":
		refs, err := decodeRefsJSON(val, vi, "data.value")
		if err != nil {
			return nil, err
		}
		return AppendVList(nil, refs), nil
	}
	return nil, jsonErr(vi, "data.format", "unsupported format "+strconv.Quote(format), nil)
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// parseBinaryDigits reads a string of '0'/'1', most significant first.
func parseBinaryDigits(s string, minLen, maxLen int) (uint32, bool) {
	if len(s) < minLen || len(s) > maxLen {
		return 0, false
	}
	var x uint32
	for i := 0; i < len(s); i++ {
		if s[i] != '0' && s[i] != '1' {
			return 0, false
		}
		x = x<<1 | uint32(s[i]-'0')
	}
	return x, true
}
