package handlev

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"pidnode/internal/ascii"
	"pidnode/internal/jsontext"
	"pidnode/internal/unsafeconv"
)

// Handle JSON encoding (docs/handle-protocol.md §1), byte-identical to the reference
// server, which writes with Gson and HTML escaping disabled: keys in a fixed order,
// no whitespace, `<`, `>`, `&`, `=` and non-ASCII written raw, only `"`, `\`, the
// control characters and U+2028/U+2029 escaped.
//
// The encoders are on the read path: they append to dst and allocate nothing
// beyond growing it. They never fail and never retain their arguments.

// AppendJSONString appends s as a quoted JSON string the way Gson writes it without
// HTML escaping: `"` and `\` are backslash-escaped, control characters use \b \t \n
// \f \r or \u00xx (lower-case hex), U+2028 and U+2029 are written \u2028 and \u2029,
// everything else (including DEL and non-ASCII) is written raw. Invalid UTF-8 bytes
// are written as U+FFFD (raw, three bytes), one per invalid byte. It is
// internal/jsontext's string encoder, the one internal/stdjson uses too.
func AppendJSONString(dst []byte, s string) []byte {
	return jsontext.AppendString(dst, s, 0)
}

// appendJSONBytes is AppendJSONString for a byte slice, without copying it.
func appendJSONBytes(dst []byte, b []byte) []byte {
	// Safe: AppendJSONString only reads s and does not retain it, and b is not
	// modified while it runs.
	return AppendJSONString(dst, unsafeconv.String(b))
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
// The data object follows docs/handle-protocol.md §1.2: HS_ADMIN as format "admin" and
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
	case ascii.EqualFold(v.Type, TypeAdmin):
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
	case ascii.EqualFold(v.Type, TypeVList):
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
// string in Handle JSON (docs/handle-protocol.md §1.2): true when b is not valid UTF-8
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
			for k < len(compact) && jsontext.IsSpace(compact[k]) {
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
