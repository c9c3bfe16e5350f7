package handlev

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Handle JSON encoding (HANDLE-PROTOCOL.md §1), byte-identical to the reference
// server, which writes with Gson and HTML escaping disabled: keys in a fixed order,
// no whitespace, `<`, `>`, `&`, `=` and non-ASCII written raw, only `"`, `\`, the
// control characters and U+2028/U+2029 escaped.
//
// The encoders are on the read path: they append to dst and allocate nothing
// beyond growing it. They never fail and never retain their arguments.

const jsonHexDigits = "0123456789abcdef"

// jsonSafeASCII[c] is true for the ASCII bytes Gson writes unescaped (with HTML
// escaping off): everything but the control characters, '"' and '\'.
var jsonSafeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendJSONString appends s as a quoted JSON string the way Gson writes it without
// HTML escaping: `"` and `\` are backslash-escaped, control characters use \b \t \n
// \f \r or \u00xx (lower-case hex), U+2028 and U+2029 are written \u2028 and \u2029,
// everything else (including DEL and non-ASCII) is written raw. Invalid UTF-8 bytes
// are written as U+FFFD (raw, three bytes), one per invalid byte.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\r':
				dst = append(dst, '\\', 'r')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHexDigits[c>>4], jsonHexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONBytes is AppendJSONString for a byte slice, without copying it.
func appendJSONBytes(dst []byte, b []byte) []byte {
	// Safe: AppendJSONString only reads s and does not retain it, and b is not
	// modified while it runs.
	return AppendJSONString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// AppendValueJSON appends v as one Handle JSON value object:
// {"index":…,"type":…,"data":{…}[,"permissions":"…"],"ttl":…[,"timestamp":"…"][,"references":[…]]}.
//
//   - permissions is omitted when the low four bits of v.Perm are PermDefault, else
//     four 0/1 characters: admin read, admin write, public read, public write;
//   - ttl is an integer for TTLRelative and an ISO 8601 string of the expiry time
//     (v.TTL as unix seconds) for TTLAbsolute;
//   - timestamp (yyyy-MM-ddTHH:mm:ssZ, UTC) is omitted when v.Timestamp is 0;
//   - references are omitted when v.Refs is empty.
//
// The data object follows HANDLE-PROTOCOL.md §1.2: HS_ADMIN as format "admin" and
// HS_VLIST as "vlist" when Data is their canonical encoding (otherwise the generic
// rule below applies, so the JSON always round-trips to the same bytes); any other
// value, including HS_SITE and HS_PUBKEY, as "string" when Data is valid UTF-8
// without bytes in 0x00–0x08, 0x14–0x1F or 0x7F, else "base64" (standard, padded).
//
// It allocates nothing when dst has enough capacity.
func AppendValueJSON(dst []byte, v *Value) []byte {
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(v.Index), 10)
	dst = append(dst, `,"type":`...)
	dst = AppendJSONString(dst, v.Type)
	dst = append(dst, `,"data":`...)
	dst = appendDataJSON(dst, v)
	if p := v.Perm & 0x0F; p != PermDefault {
		dst = append(dst, `,"permissions":"`...)
		dst = append(dst, permBit(p, PermAdminRead), permBit(p, PermAdminWrite), permBit(p, PermPublicRead), permBit(p, PermPublicWrite), '"')
	}
	dst = append(dst, `,"ttl":`...)
	if v.TTLType == TTLAbsolute {
		dst = append(dst, '"')
		dst = appendISOTime(dst, int64(v.TTL))
		dst = append(dst, '"')
	} else {
		dst = strconv.AppendInt(dst, int64(v.TTL), 10)
	}
	if v.Timestamp != 0 {
		dst = append(dst, `,"timestamp":"`...)
		dst = appendISOTime(dst, v.Timestamp)
		dst = append(dst, '"')
	}
	if len(v.Refs) > 0 {
		dst = append(dst, `,"references":`...)
		dst = appendRefsJSON(dst, v.Refs)
	}
	return append(dst, '}')
}

// AppendValuesJSON appends vs as a JSON array of value objects, in slice order
// (storage order; the API never sorts). An empty vs gives [].
func AppendValuesJSON(dst []byte, vs []Value) []byte {
	dst = append(dst, '[')
	for i := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendValueJSON(dst, &vs[i])
	}
	return append(dst, ']')
}

// AppendRecordJSON appends a successful resolution response:
// {"responseCode":1,"handle":<handle>,"values":[…]}. handle is written as given;
// the API echoes the handle as the client wrote it, not the stored form.
func AppendRecordJSON(dst []byte, handle string, vs []Value) []byte {
	dst = append(dst, `{"responseCode":1,"handle":`...)
	dst = AppendJSONString(dst, handle)
	dst = append(dst, `,"values":`...)
	dst = AppendValuesJSON(dst, vs)
	return append(dst, '}')
}

func permBit(p, mask Perm) byte {
	if p&mask != 0 {
		return '1'
	}
	return '0'
}

func appendRefsJSON(dst []byte, refs []Ref) []byte {
	dst = append(dst, '[')
	for i := range refs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRefJSON(dst, refs[i].Handle, refs[i].Index)
	}
	return append(dst, ']')
}

func appendRefJSON(dst []byte, handle string, index int32) []byte {
	dst = append(dst, `{"handle":`...)
	dst = AppendJSONString(dst, handle)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '}')
}

func appendDataJSON(dst []byte, v *Value) []byte {
	switch {
	case codecEqualFold(v.Type, TypeAdmin):
		if mask, h, idx, ok := canonicalAdmin(v.Data); ok {
			dst = append(dst, `{"format":"admin","value":{"handle":`...)
			dst = appendJSONBytes(dst, h)
			dst = append(dst, `,"index":`...)
			dst = strconv.AppendInt(dst, int64(idx), 10)
			dst = append(dst, `,"permissions":"`...)
			for b := 11; b >= 0; b-- {
				dst = append(dst, '0'+byte(mask>>b&1))
			}
			return append(dst, `"}}`...)
		}
	case codecEqualFold(v.Type, TypeVList):
		if canonicalVList(v.Data) {
			dst = append(dst, `{"format":"vlist","value":[`...)
			r := wireReader{b: v.Data, off: 4}
			for i := 0; r.remaining() > 0; i++ {
				h, _ := r.lenBytes("", "")
				idx, _ := r.u32("")
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"handle":`...)
				dst = appendJSONBytes(dst, h)
				dst = append(dst, `,"index":`...)
				dst = strconv.AppendInt(dst, int64(int32(idx)), 10)
				dst = append(dst, '}')
			}
			return append(dst, `]}`...)
		}
	}
	if LooksBinary(v.Data) {
		dst = append(dst, `{"format":"base64","value":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.Data)
		return append(dst, `"}`...)
	}
	dst = append(dst, `{"format":"string","value":`...)
	dst = appendJSONBytes(dst, v.Data)
	return append(dst, '}')
}

// LooksBinary reports whether value data is written as base64 rather than as a
// string in Handle JSON (HANDLE-PROTOCOL.md §1.2): true when b is not valid UTF-8
// or contains a byte in 0x00–0x08, 0x14–0x1F or 0x7F.
func LooksBinary(b []byte) bool {
	for _, c := range b {
		if c <= 0x08 || (c >= 0x14 && c <= 0x1F) || c == 0x7F {
			return true
		}
	}
	return !utf8.Valid(b)
}

// canonicalAdmin parses HS_ADMIN data without allocating and reports whether it
// is exactly what AppendAdmin would write for a mask the JSON form can carry (12
// bits) and a valid UTF-8 handle; only then does "admin" format round-trip.
func canonicalAdmin(b []byte) (mask uint16, handle []byte, index int32, ok bool) {
	r := wireReader{b: b}
	mask, handle, index, err := r.admin()
	if err != nil || r.remaining() != 0 || mask > AdminAll || !utf8.Valid(handle) {
		return 0, nil, 0, false
	}
	return mask, handle, index, true
}

// canonicalVList reports whether b is exactly an HS_VLIST encoding that the
// decoders accept, with valid UTF-8 handles.
func canonicalVList(b []byte) bool {
	r := wireReader{b: b}
	n, err := r.count("", MaxRefs)
	if err != nil {
		return false
	}
	for i := 0; i < n; i++ {
		h, err := r.lenBytes("", "")
		if err != nil || !utf8.Valid(h) {
			return false
		}
		if _, err := r.u32(""); err != nil {
			return false
		}
	}
	return r.remaining() == 0
}

// codecEqualFold reports whether a equals b under ASCII case folding.
func codecEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if upperASCII(a[i]) != upperASCII(b[i]) {
			return false
		}
	}
	return true
}

// appendISOTime appends unix seconds as yyyy-MM-ddTHH:mm:ssZ in UTC. Years outside
// 0–9999 are written with as many digits as needed (and a minus sign).
func appendISOTime(dst []byte, unix int64) []byte {
	days := unix / 86400
	secs := unix % 86400
	if secs < 0 {
		secs += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	if y < 10000 {
		dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
	} else {
		dst = strconv.AppendInt(dst, y, 10)
	}
	hh, mm, ss := secs/3600, secs/60%60, secs%60
	return append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10),
		'T', byte('0'+hh/10), byte('0'+hh%10), ':', byte('0'+mm/10), byte('0'+mm%10),
		':', byte('0'+ss/10), byte('0'+ss%10), 'Z')
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days_from_civil inverse).
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// Handle JSON decoding. It is not on the read path (imports, the admin API, tests),
// so it uses encoding/json and favours exact error reports over speed. Everything
// it accepts encodes to binary that DecodeValues accepts (lengths ≤ MaxLength,
// counts ≤ MaxRefs/MaxValues, timestamps within int4), and re-encodes with
// AppendValueJSON to JSON that decodes to the same values.

// DefaultTTL is the TTL a decoded value gets when its JSON has no "ttl" (the
// reference server's default).
const DefaultTTL = 86400

// DecodeRecordJSON decodes a Handle JSON record: {"responseCode":1,"handle":…,
// "values":[…]}. responseCode is optional but, when present, must be 1; handle
// (a non-empty string) and values (an array, at most MaxValues) are required.
// Unknown keys are ignored. Each value is read as by DecodeValueJSON. Errors are
// *JSONError naming the value position and field. The result does not alias b.
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

// DecodeValueJSON decodes one Handle JSON value object:
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
// null counts as absent for optional fields. Unknown keys are ignored. Errors are
// *JSONError with Value 0. The result does not alias b.
func DecodeValueJSON(b []byte) (Value, error) {
	p := fastJSON{b: b}
	if v, e, ok := p.value(p.ws(0)); ok && p.ws(e) == len(b) {
		return v, nil
	}
	return decodeValueJSON(b, 0)
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
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", jsonErr(vi, field, err.Error(), err)
	}
	return s, nil
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

// AppendPrettyJSON appends compact JSON (as the Append*JSON functions write it)
// re-indented the way the reference server answers ?pretty (Gson pretty printing):
// two spaces per level, one member or element per line, ": " after keys, empty
// objects and arrays kept as {} and []. String contents are copied unchanged (no
// HTML escaping). Whitespace outside strings in the input is dropped, so indented
// input is re-indented. The input must be valid JSON; it is not validated.
func AppendPrettyJSON(dst, compact []byte) []byte {
	depth := 0
	newline := func(dst []byte) []byte {
		dst = append(dst, '\n')
		for i := 0; i < depth; i++ {
			dst = append(dst, ' ', ' ')
		}
		return dst
	}
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(compact) && compact[j] != '"' {
				if compact[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(compact) {
				j = len(compact) - 1
			}
			dst = append(dst, compact[i:j+1]...)
			i = j
		case '{', '[':
			k := i + 1
			for k < len(compact) && isJSONSpace(compact[k]) {
				k++
			}
			if k < len(compact) && (compact[k] == '}' || compact[k] == ']') {
				dst = append(dst, c, compact[k])
				i = k
				continue
			}
			depth++
			dst = append(dst, c)
			dst = newline(dst)
		case '}', ']':
			depth--
			dst = newline(dst)
			dst = append(dst, c)
		case ',':
			dst = append(dst, ',')
			dst = newline(dst)
		case ':':
			dst = append(dst, ':', ' ')
		case ' ', '\t', '\n', '\r':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// fastJSON decodes the usual shapes of Handle JSON in one pass, without
// encoding/json and without a json.Valid pre-pass: it checks the JSON syntax of
// every byte it passes over (strings, escapes, numbers, literals, nesting,
// members it does not know), so it never accepts malformed input. It gives up
// (ok == false) on malformed input and on anything it does not handle exactly
// like the encoding/json path: escapes in keys, surrogate or invalid-UTF-8
// strings, time formats other than yyyy-MM-ddTHH:mm:ssZ, nesting deeper than
// fastMaxDepth, and every error; the caller then decodes again with the
// encoding/json path, which writes the error message. FuzzDecodeRecordJSON and
// FuzzDecodeValueJSON check that whenever it succeeds its result equals the
// encoding/json path's. It bounds-checks every index, so it never panics.
type fastJSON struct {
	b []byte
	// arena holds the decoded data of every value, so that a record costs one
	// allocation for all its data. Decoded data is never longer than the JSON
	// it comes from, so cap(arena) = len(b) never grows; Data slices are capped.
	arena []byte
	// lastTime and lastUnix remember the last time string parsed: the values
	// of a record usually share one timestamp.
	lastTime [20]byte
	lastUnix int64
	hasLast  bool
}

// fastMaxDepth bounds the nesting the fast path walks (encoding/json allows
// 10000; deeper input goes to the encoding/json path).
const fastMaxDepth = 64

// jsonStrStop marks the bytes that end a run of plain ASCII string content:
// '"', '\\', the control characters (which JSON does not allow raw) and the
// bytes of multi-byte UTF-8 sequences (checked one rune at a time).
var jsonStrStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// strStopMask flags the jsonStrStop bytes among the eight bytes of x
// (little-endian: byte k is bits 8k..8k+7): non-ASCII, '"', '\\' and the
// control characters. It uses the "has a zero / smaller byte" bit tricks, which
// may also flag bytes above a flagged one but never below: the lowest flag is
// exactly the first stop byte.
func strStopMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less20 := (x - ones*0x20) & ^x & highs
	q := x ^ (ones * '"')
	quote := (q - ones) & ^q & highs
	bs := x ^ (ones * '\\')
	back := (bs - ones) & ^bs & highs
	return (x & highs) | less20 | quote | back
}

// nextStop returns the index of the first jsonStrStop byte of b at or after
// j, or len(b): eight bytes at a time, then one at a time at the end.
func nextStop(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		if m := strStopMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b); j++ {
		if jsonStrStop[b[j]] {
			return j
		}
	}
	return j
}

func (p *fastJSON) ws(i int) int {
	for i < len(p.b) && isJSONSpace(p.b[i]) {
		i++
	}
	return i
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipStr checks the string at i and returns the index after it and whether
// it holds escapes. It gives up on invalid UTF-8 (which JSON allows but
// encoding/json replaces).
func (p *fastJSON) skipStr(i int) (end int, esc, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return 0, false, false
	}
	for j := i + 1; ; {
		j = nextStop(b, j)
		if j >= len(b) {
			return 0, false, false
		}
		switch c := b[j]; c {
		case '"':
			return j + 1, esc, true
		case '\\':
			esc = true
			if j+1 >= len(b) {
				return 0, false, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+5 >= len(b) || !isHexDigit(b[j+2]) || !isHexDigit(b[j+3]) || !isHexDigit(b[j+4]) || !isHexDigit(b[j+5]) {
					return 0, false, false
				}
				j += 6
			default:
				return 0, false, false
			}
		default:
			if c < utf8.RuneSelf { // a raw control character
				return 0, false, false
			}
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			j += size
		}
	}
}

// skipDigits returns the index of the first byte at or after j that is not
// an ASCII digit.
func skipDigits(b []byte, j int) int {
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j
}

// number checks the JSON number at i and returns the index after it; n is its
// value when it is an integer (no fraction, no exponent) of at most 18 digits.
func (p *fastJSON) number(i int) (end int, n int64, isInt, ok bool) {
	b := p.b
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	if j >= len(b) || b[j] < '0' || b[j] > '9' {
		return 0, 0, false, false
	}
	digits := 0
	if b[j] == '0' {
		j, digits = j+1, 1
	} else {
		for ; j < len(b) && '0' <= b[j] && b[j] <= '9'; j++ {
			n = n*10 + int64(b[j]-'0')
			digits++
			if digits > 18 {
				n = 0 // keeps n from overflowing; isInt is false below
			}
		}
	}
	isInt = digits <= 18
	if j < len(b) && b[j] == '.' {
		k := skipDigits(b, j+1)
		if k == j+1 {
			return 0, 0, false, false
		}
		j, isInt = k, false
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := skipDigits(b, j)
		if k == j {
			return 0, 0, false, false
		}
		j, isInt = k, false
	}
	if neg {
		n = -n
	}
	return j, n, isInt, true
}

// lit checks the literal word at i.
func (p *fastJSON) lit(i int, word string) (int, bool) {
	if len(p.b)-i >= len(word) && string(p.b[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return 0, false
}

// null reports whether the value at i is null, and the index after it.
func (p *fastJSON) null(i int) (int, bool) {
	if i < len(p.b) && p.b[i] == 'n' {
		return p.lit(i, "null")
	}
	return 0, false
}

// skip checks the value at i, of any type, and returns the index after it.
func (p *fastJSON) skip(i, depth int) (int, bool) {
	b := p.b
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		e, _, ok := p.skipStr(i)
		return e, ok
	case '{':
		if depth >= fastMaxDepth {
			return 0, false
		}
		return p.object(i, func(_ []byte, j int) (int, bool) { return p.skip(j, depth+1) })
	case '[':
		if depth >= fastMaxDepth {
			return 0, false
		}
		return p.array(i, func(j int) (int, bool) { return p.skip(j, depth+1) })
	case 't':
		return p.lit(i, "true")
	case 'f':
		return p.lit(i, "false")
	case 'n':
		return p.lit(i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			e, _, _, ok := p.number(i)
			return e, ok
		}
	}
	return 0, false
}

// object walks the object at i: for each member, f gets the key (escape-free
// keys only) and the index of its value, and returns the index after the
// value. object returns the index after the object.
func (p *fastJSON) object(i int, f func(key []byte, j int) (int, bool)) (int, bool) {
	b := p.b
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = p.ws(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		ke, esc, ok := p.skipStr(i)
		if !ok || esc {
			return 0, false
		}
		key := b[i+1 : ke-1]
		i = p.ws(ke)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = f(key, p.ws(i+1)); !ok {
			return 0, false
		}
		i = p.ws(i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = p.ws(i + 1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// array walks the array at i: f gets the index of each element and returns
// the index after it. array returns the index after the array.
func (p *fastJSON) array(i int, f func(j int) (int, bool)) (int, bool) {
	b := p.b
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = p.ws(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = f(i); !ok {
			return 0, false
		}
		i = p.ws(i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = p.ws(i + 1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// str decodes the string at i and returns it and the index after it. Without
// escapes the result aliases p.b. It gives up on \u escapes of surrogates and
// on invalid UTF-8 (encoding/json's replacement rules).
func (p *fastJSON) str(i int) ([]byte, int, bool) {
	e, esc, ok := p.skipStr(i)
	if !ok {
		return nil, 0, false
	}
	raw := p.b[i+1 : e-1]
	if !esc {
		return raw, e, true
	}
	out, ok := appendUnescaped(make([]byte, 0, len(raw)), raw)
	return out, e, ok
}

// strKeep is str decoding straight into the arena, in one pass; empty gives
// nil.
func (p *fastJSON) strKeep(i int) ([]byte, int, bool) {
	if p.arena == nil {
		p.arena = make([]byte, 0, len(p.b))
	}
	start := len(p.arena)
	a, e, ok := p.appendStr(p.arena, i)
	if !ok {
		return nil, 0, false
	}
	p.arena = a
	if len(a) == start {
		return nil, e, true
	}
	return a[start:len(a):len(a)], e, true
}

// appendStr checks the string at i as skipStr does and appends its content,
// unescaped, to dst, in the same pass; it gives up on surrogate escapes.
func (p *fastJSON) appendStr(dst []byte, i int) ([]byte, int, bool) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	seg := i + 1 // start of the plain run not yet copied
	for j := i + 1; ; {
		j = nextStop(b, j)
		if j >= len(b) {
			return nil, 0, false
		}
		switch c := b[j]; c {
		case '"':
			return append(dst, b[seg:j]...), j + 1, true
		case '\\':
			dst = append(dst, b[seg:j]...)
			var ok bool
			if dst, j, ok = appendEscape(dst, b, j); !ok {
				return nil, 0, false
			}
			seg = j
		default:
			if c < utf8.RuneSelf { // a raw control character
				return nil, 0, false
			}
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return nil, 0, false
			}
			j += size
		}
	}
}

// appendUnescaped appends the string content raw (checked by skipStr, valid
// UTF-8) with its escapes decoded; it gives up on surrogate escapes.
func appendUnescaped(out, raw []byte) ([]byte, bool) {
	for {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return append(out, raw...), true
		}
		out = append(out, raw[:k]...)
		var ok bool
		if out, k, ok = appendEscape(out, raw, k); !ok {
			return nil, false
		}
		raw = raw[k:]
	}
}

// appendEscape appends the character that the escape sequence at b[k] (a
// backslash) stands for and returns the index after the sequence; it gives
// up on a malformed sequence and on surrogate escapes (the encoding/json path
// handles those).
func appendEscape(dst, b []byte, k int) ([]byte, int, bool) {
	if k+1 >= len(b) {
		return nil, 0, false
	}
	switch c := b[k+1]; c {
	case '"', '\\', '/':
		return append(dst, c), k + 2, true
	case 'b':
		return append(dst, '\b'), k + 2, true
	case 'f':
		return append(dst, '\f'), k + 2, true
	case 'n':
		return append(dst, '\n'), k + 2, true
	case 'r':
		return append(dst, '\r'), k + 2, true
	case 't':
		return append(dst, '\t'), k + 2, true
	case 'u':
		if k+6 > len(b) {
			return nil, 0, false
		}
		var r rune
		for _, h := range b[k+2 : k+6] {
			d, ok := UnhexDigit(h)
			if !ok {
				return nil, 0, false
			}
			r = r<<4 | rune(d)
		}
		if 0xD800 <= r && r < 0xE000 {
			return nil, 0, false
		}
		return utf8.AppendRune(dst, r), k + 6, true
	}
	return nil, 0, false
}

// int decodes the integer at i within [lo, hi].
func (p *fastJSON) int(i int, lo, hi int64) (int64, int, bool) {
	e, n, isInt, ok := p.number(i)
	if !ok || !isInt || n < lo || n > hi {
		return 0, 0, false
	}
	return n, e, true
}

// time parses the string at i, exactly yyyy-MM-ddTHH:mm:ssZ (what the encoder
// writes), into unix seconds within [lo, hi].
func (p *fastJSON) time(i int, lo, hi int64) (int64, int, bool) {
	s, e, ok := p.str(i)
	if !ok || len(s) != 20 {
		return 0, 0, false
	}
	if p.hasLast && string(s) == string(p.lastTime[:]) {
		if n := p.lastUnix; lo <= n && n <= hi {
			return n, e, true
		}
		return 0, 0, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return 0, 0, false
	}
	num := func(b []byte) (int64, bool) {
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int64(c-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	hh, ok4 := num(s[11:13])
	mm, ok5 := num(s[14:16])
	ss, ok6 := num(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || hh > 23 || mm > 59 || ss > 59 {
		return 0, 0, false
	}
	n := daysFromCivil(y, mo, d)*86400 + hh*3600 + mm*60 + ss
	copy(p.lastTime[:], s)
	p.lastUnix, p.hasLast = n, true
	if n < lo || n > hi {
		return 0, 0, false
	}
	return n, e, true
}

func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the inverse of civilFromDays (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// A RecordDecoder decodes records as DecodeRecordJSON does, reusing its memory
// from one record to the next: the values Decode returns, their slice and
// their Data, are valid only until the next Decode. Handles, types and
// references are not reused. The zero value is ready to use; it is not safe
// for concurrent use.
type RecordDecoder struct {
	arena []byte
	vs    []Value
}

// Decode is DecodeRecordJSON(b) with the values in d's reused memory (see
// RecordDecoder). Errors are the same.
func (d *RecordDecoder) Decode(b []byte) (handle string, vs []Value, err error) {
	if cap(d.arena) < len(b) {
		d.arena = make([]byte, 0, len(b))
	}
	p := fastJSON{b: b, arena: d.arena[:0]}
	handle, vs, ok := p.record(d.vs[:0])
	if ok {
		d.vs = vs[:0]
		return handle, vs, nil
	}
	return decodeRecordJSONStd(b)
}

func fastRecordJSON(b []byte) (string, []Value, bool) {
	p := fastJSON{b: b}
	return p.record(nil)
}

// record decodes the record in p.b, appending its values to vs[:0].
func (p *fastJSON) record(vs []Value) (string, []Value, bool) {
	b := p.b
	var (
		hb        []byte
		hasValues bool
	)
	end, ok := p.object(p.ws(0), func(key []byte, i int) (int, bool) {
		switch string(key) {
		case "responseCode":
			if e, ok := p.null(i); ok {
				return e, true
			}
			_, e, ok := p.int(i, 1, 1)
			return e, ok
		case "handle":
			s, e, ok := p.str(i)
			hb = s
			return e, ok
		case "values":
			hasValues = true
			vs = vs[:0]
			return p.array(i, func(j int) (int, bool) {
				if len(vs) >= MaxValues {
					return 0, false
				}
				v, e, ok := p.value(j)
				vs = append(vs, v)
				return e, ok
			})
		}
		return p.skip(i, 1)
	})
	if !ok || p.ws(end) != len(b) || len(hb) == 0 || !hasValues {
		return "", nil, false
	}
	if vs == nil {
		vs = []Value{}
	}
	return string(hb), vs, true
}

// value decodes the value object at i and returns the index after it.
func (p *fastJSON) value(i int) (Value, int, bool) {
	v := Value{Perm: PermDefault, TTLType: TTLRelative, TTL: DefaultTTL}
	var hasIndex, hasType, hasData bool
	end, ok := p.object(i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "index":
			n, e, ok := p.int(j, math.MinInt32, math.MaxInt32)
			v.Index, hasIndex = int32(n), true
			return e, ok
		case "type":
			t, e, ok := p.str(j)
			if !ok || len(t) > MaxLength {
				return 0, false
			}
			v.Type, hasType = internType(t), true
			return e, true
		case "data":
			d, e, ok := p.data(j)
			if !ok || len(d) > MaxLength {
				return 0, false
			}
			v.Data, hasData = d, true
			return e, true
		case "permissions":
			if e, ok := p.null(j); ok {
				v.Perm = PermDefault
				return e, true
			}
			s, e, ok := p.str(j)
			if !ok {
				return 0, false
			}
			x, ok := parseBinaryDigits(unsafe.String(unsafe.SliceData(s), len(s)), 4, 4)
			v.Perm = Perm(x)
			return e, ok
		case "ttl":
			if e, ok := p.null(j); ok {
				v.TTLType, v.TTL = TTLRelative, DefaultTTL
				return e, true
			}
			var (
				x  int64
				e  int
				ok bool
			)
			if j < len(p.b) && p.b[j] == '"' {
				x, e, ok = p.time(j, math.MinInt32, math.MaxInt32)
				v.TTLType = TTLAbsolute
			} else {
				x, e, ok = p.int(j, math.MinInt32, math.MaxInt32)
				v.TTLType = TTLRelative
			}
			v.TTL = int32(x)
			return e, ok
		case "timestamp":
			if e, ok := p.null(j); ok {
				v.Timestamp = 0
				return e, true
			}
			var (
				e  int
				ok bool
			)
			if j < len(p.b) && p.b[j] == '"' {
				v.Timestamp, e, ok = p.time(j, 0, math.MaxUint32)
			} else {
				v.Timestamp, e, ok = p.int(j, 0, math.MaxUint32)
			}
			return e, ok
		case "references":
			if e, ok := p.null(j); ok {
				v.Refs = nil
				return e, true
			}
			refs, e, ok := p.refs(j)
			v.Refs = refs
			return e, ok
		}
		return p.skip(j, 2)
	})
	if !ok || !hasIndex || !hasType || !hasData {
		return Value{}, 0, false
	}
	return v, end, true
}

// refs decodes [{"handle":…,"index":…}…]; empty gives nil.
func (p *fastJSON) refs(i int) ([]Ref, int, bool) {
	var refs []Ref
	end, ok := p.array(i, func(j int) (int, bool) {
		if len(refs) >= MaxRefs {
			return 0, false
		}
		var (
			h              []byte
			idx            int64
			hasH, hasIndex bool
		)
		e, ok := p.object(j, func(key []byte, k int) (int, bool) {
			switch string(key) {
			case "handle":
				s, e, ok := p.str(k)
				if !ok || len(s) > MaxLength {
					return 0, false
				}
				h, hasH = s, true
				return e, true
			case "index":
				n, e, ok := p.int(k, math.MinInt32, math.MaxInt32)
				idx, hasIndex = n, true
				return e, ok
			}
			return p.skip(k, 4)
		})
		if !ok || !hasH || !hasIndex {
			return 0, false
		}
		refs = append(refs, Ref{Handle: string(h), Index: int32(idx)})
		return e, true
	})
	if !ok {
		return nil, 0, false
	}
	return refs, end, true
}

// keep copies decoded data into the arena; empty gives nil.
func (p *fastJSON) keep(d []byte) []byte {
	if len(d) == 0 {
		return nil
	}
	if p.arena == nil {
		p.arena = make([]byte, 0, max(len(p.b), len(d)))
	}
	start := len(p.arena)
	p.arena = append(p.arena, d...)
	return p.arena[start:len(p.arena):len(p.arena)]
}

// data decodes the "data" member at i: a string, or {"format":…,"value":…}.
func (p *fastJSON) data(i int) ([]byte, int, bool) {
	if i >= len(p.b) {
		return nil, 0, false
	}
	if p.b[i] == '"' {
		return p.strKeep(i)
	}
	// Members in any order, the last of a repeated key wins (as in the
	// encoding/json path). A value after its format, the usual order, is
	// decoded where it stands; otherwise once the format is known.
	var (
		format    []byte
		hasFormat bool
		val       = -1 // index of the value
		d         []byte
		dFormat   []byte // the format d was decoded as
		dAt       = -1   // the index d was decoded from
	)
	end, ok := p.object(i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "format":
			s, e, ok := p.str(j)
			format, hasFormat = s, true
			return e, ok
		case "value":
			val = j
			if hasFormat {
				x, e, ok := p.dataValue(format, j)
				d, dFormat, dAt = x, format, j
				return e, ok
			}
		}
		return p.skip(j, 3)
	})
	if !ok || !hasFormat || val < 0 {
		return nil, 0, false
	}
	if dAt == val && bytes.Equal(dFormat, format) {
		return d, end, true
	}
	if d, _, ok = p.dataValue(format, val); !ok {
		return nil, 0, false
	}
	return d, end, true
}

// dataValue decodes the data value at i as format and returns the index after it.
func (p *fastJSON) dataValue(format []byte, val int) ([]byte, int, bool) {
	if _, null := p.null(val); null || val >= len(p.b) {
		return nil, 0, false
	}
	switch string(format) {
	case "string":
		return p.strKeep(val)
	case "base64":
		s, end, ok := p.str(val)
		if !ok || len(s)%4 != 0 {
			return nil, 0, false
		}
		out, err := base64.StdEncoding.AppendDecode(nil, s)
		if err != nil {
			return nil, 0, false
		}
		return p.keep(out), end, true
	case "admin":
		var (
			h, perms           []byte
			idx                int64
			hasH, hasIdx, hasP bool
		)
		end, ok := p.object(val, func(key []byte, j int) (int, bool) {
			switch string(key) {
			case "handle":
				s, e, ok := p.str(j)
				h, hasH = s, true
				return e, ok && len(s) <= MaxLength
			case "index":
				n, e, ok := p.int(j, math.MinInt32, math.MaxInt32)
				idx, hasIdx = n, true
				return e, ok
			case "permissions":
				s, e, ok := p.str(j)
				perms, hasP = s, true
				return e, ok
			}
			return p.skip(j, 4)
		})
		if !ok || !hasH || !hasIdx || !hasP {
			return nil, 0, false
		}
		mask, ok := parseBinaryDigits(unsafe.String(unsafe.SliceData(perms), len(perms)), 1, 16)
		if !ok {
			return nil, 0, false
		}
		// AppendAdmin's encoding, written straight into the arena.
		if p.arena == nil {
			p.arena = make([]byte, 0, len(p.b))
		}
		a, start := p.arena, len(p.arena)
		a = binary.BigEndian.AppendUint16(a, uint16(mask))
		a = binary.BigEndian.AppendUint32(a, uint32(len(h)))
		a = append(a, h...)
		a = binary.BigEndian.AppendUint32(a, uint32(idx))
		p.arena = a
		return a[start:len(a):len(a)], end, true
	case "vlist":
		if p.b[val] != '[' {
			return nil, 0, false
		}
		refs, end, ok := p.refs(val)
		if !ok {
			return nil, 0, false
		}
		return AppendVList(nil, refs), end, true
	}
	return nil, 0, false // hex and anything else: the encoding/json path
}
