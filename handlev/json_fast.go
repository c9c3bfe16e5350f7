package handlev

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"

	"pidnode/internal/unsafeconv"
)

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
// unescaped, to dst, in the same pass; it gives up on surrogate escapes. Plain
// runs are copied eight bytes at a time as they are scanned: each word is
// stored whole into dst's spare capacity, and dst keeps only its bytes before
// the first stop byte; the rest lies beyond len(dst) and is overwritten by what
// follows. dst is strKeep's arena, whose spare capacity nothing else uses (it
// hands out capped slices). With fewer than eight bytes to spare it copies
// byte by byte.
func (p *fastJSON) appendStr(dst []byte, i int) ([]byte, int, bool) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; ; {
		for j+8 <= len(b) && cap(dst)-len(dst) >= 8 {
			w := binary.LittleEndian.Uint64(b[j:])
			d := len(dst)
			binary.LittleEndian.PutUint64(dst[d:d+8], w)
			if m := strStopMask(w); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				dst, j = dst[:d+k], j+k
				break
			}
			dst, j = dst[:d+8], j+8
		}
		for j < len(b) && !jsonStrStop[b[j]] {
			dst = append(dst, b[j])
			j++
		}
		if j >= len(b) {
			return nil, 0, false
		}
		switch c := b[j]; c {
		case '"':
			return dst, j + 1, true
		case '\\':
			if j+1 < len(b) {
				if e := b[j+1]; e == '"' || e == '\\' || e == '/' {
					dst, j = append(dst, e), j+2
					continue
				}
			}
			var ok bool
			if dst, j, ok = appendEscape(dst, b, j); !ok {
				return nil, 0, false
			}
		default:
			if c < utf8.RuneSelf { // a raw control character
				return nil, 0, false
			}
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return nil, 0, false
			}
			dst, j = append(dst, b[j:j+size]...), j+size
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
	if v, end, ok := p.valueInOrder(i); ok {
		return v, end, true
	}
	v := Value{Perm: PermDefault, TTLType: TTLRelative, TTL: DefaultTTL}
	var hasIndex, hasType, hasData bool
	end, ok := p.object(i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "index":
			hasIndex = true
			return p.memberIndex(j, &v)
		case "type":
			hasType = true
			return p.memberType(j, &v)
		case "data":
			hasData = true
			return p.memberData(j, &v)
		case "permissions":
			return p.memberPerm(j, &v)
		case "ttl":
			return p.memberTTL(j, &v)
		case "timestamp":
			return p.memberTimestamp(j, &v)
		case "references":
			return p.memberRefs(j, &v)
		}
		return p.skip(j, 2)
	})
	if !ok || !hasIndex || !hasType || !hasData {
		return Value{}, 0, false
	}
	return v, end, true
}

// valueInOrder decodes the value object at i when its members are the ones
// AppendValueJSON writes, in its order, without whitespace:
// {"index":…,"type":…,"data":…[,"permissions":…],"ttl":…[,"timestamp":…][,"references":…]}
// (ttl may be missing too). Each member is decoded by the same function as in
// value's walk of any object, so the result is the one value would give; any
// other shape gives ok == false and leaves the arena as it was, and value
// walks the object instead. Matching the keys as literals skips the key
// scanning and the per-member calls of the walk.
func (p *fastJSON) valueInOrder(i int) (Value, int, bool) {
	b := p.b
	arenaLen := len(p.arena)
	v := Value{Perm: PermDefault, TTLType: TTLRelative, TTL: DefaultTTL}
	j, ok := p.lit(i, `{"index":`)
	if ok {
		j, ok = p.memberIndex(j, &v)
	}
	if ok {
		j, ok = p.lit(j, `,"type":`)
	}
	if ok {
		j, ok = p.memberType(j, &v)
	}
	if ok {
		j, ok = p.lit(j, `,"data":`)
	}
	if ok {
		// The usual data, a string in string format, without the walk.
		if k, str := p.lit(j, `{"format":"string","value":`); str {
			var d []byte
			if d, k, ok = p.strKeep(k); ok && k < len(b) && b[k] == '}' && len(d) <= MaxLength {
				v.Data, j = d, k+1
			} else {
				ok = false
			}
		} else {
			j, ok = p.memberData(j, &v)
		}
	}
	if ok {
		if k, has := p.lit(j, `,"permissions":`); has {
			j, ok = p.memberPerm(k, &v)
		}
	}
	if ok {
		if k, has := p.lit(j, `,"ttl":`); has {
			j, ok = p.memberTTL(k, &v)
		}
	}
	if ok {
		if k, has := p.lit(j, `,"timestamp":`); has {
			j, ok = p.memberTimestamp(k, &v)
		}
	}
	if ok {
		if k, has := p.lit(j, `,"references":`); has {
			j, ok = p.memberRefs(k, &v)
		}
	}
	if !ok || j >= len(b) || b[j] != '}' {
		p.arena = p.arena[:arenaLen]
		return Value{}, 0, false
	}
	return v, j + 1, true
}

// The members of a value object: each decodes the member's value at j into v
// and returns the index after it.

func (p *fastJSON) memberIndex(j int, v *Value) (int, bool) {
	n, e, ok := p.int(j, math.MinInt32, math.MaxInt32)
	v.Index = int32(n)
	return e, ok
}

func (p *fastJSON) memberType(j int, v *Value) (int, bool) {
	t, e, ok := p.str(j)
	if !ok || len(t) > MaxLength {
		return 0, false
	}
	v.Type = internType(t)
	return e, true
}

func (p *fastJSON) memberData(j int, v *Value) (int, bool) {
	d, e, ok := p.data(j)
	if !ok || len(d) > MaxLength {
		return 0, false
	}
	v.Data = d
	return e, true
}

func (p *fastJSON) memberPerm(j int, v *Value) (int, bool) {
	if e, ok := p.null(j); ok {
		v.Perm = PermDefault
		return e, true
	}
	s, e, ok := p.str(j)
	if !ok {
		return 0, false
	}
	x, ok := parseBinaryDigits(unsafeconv.String(s), 4, 4)
	v.Perm = Perm(x)
	return e, ok
}

func (p *fastJSON) memberTTL(j int, v *Value) (int, bool) {
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
}

func (p *fastJSON) memberTimestamp(j int, v *Value) (int, bool) {
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
}

func (p *fastJSON) memberRefs(j int, v *Value) (int, bool) {
	if e, ok := p.null(j); ok {
		v.Refs = nil
		return e, true
	}
	refs, e, ok := p.refs(j)
	v.Refs = refs
	return e, ok
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
		mask, ok := parseBinaryDigits(unsafeconv.String(perms), 1, 16)
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
