package handlev

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"

	"pidnode/internal/jsontext"
	"pidnode/internal/unsafeconv"
)

// fastJSON decodes the usual shapes of Handle JSON in one pass over the
// tokenizer (internal/jsontext, strict strings), without encoding/json and
// without a json.Valid pre-pass: the tokenizer checks the JSON syntax of
// every byte it passes over (strings, escapes, numbers, literals, nesting,
// members it does not know), so it never accepts malformed input. It gives up
// (ok == false) on malformed input and on anything it does not handle exactly
// like the encoding/json path: lone surrogate escapes or invalid-UTF-8
// strings, time formats other than yyyy-MM-ddTHH:mm:ssZ, nesting deeper than
// jsontext.MaxDepth, and every error; the caller then decodes again with the
// encoding/json path, which writes the error message. FuzzDecodeRecordJSON and
// FuzzDecodeValueJSON check that whenever it succeeds its result equals the
// encoding/json path's. It bounds-checks every index, so it never panics.
//
// It is a second decoder beside the encoding/json path (which stays for the
// error messages and the rare shapes) because it pays for itself on the
// import path, which decodes every line through it: compare
// BenchmarkDecodeRecordJSON with BenchmarkDecodeRecordJSONStd.
type fastJSON struct {
	jsontext.Scanner
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

// strKeep is String decoding straight into the arena, in one pass; empty
// gives nil. The arena's spare capacity is AppendString's to use: only
// capped slices of it are handed out.
func (p *fastJSON) strKeep(i int) ([]byte, int, bool) {
	if p.arena == nil {
		p.arena = make([]byte, 0, len(p.B))
	}
	start := len(p.arena)
	a, e, ok := p.AppendString(p.arena, i)
	if !ok {
		return nil, 0, false
	}
	p.arena = a
	if len(a) == start {
		return nil, e, true
	}
	return a[start:len(a):len(a)], e, true
}

// int decodes the integer at i within [lo, hi].
func (p *fastJSON) int(i int, lo, hi int64) (int64, int, bool) {
	e, n, isInt, ok := p.Number(i)
	if !ok || !isInt || n < lo || n > hi {
		return 0, 0, false
	}
	return n, e, true
}

// time parses the string at i, exactly yyyy-MM-ddTHH:mm:ssZ (what the encoder
// writes), into unix seconds within [lo, hi].
func (p *fastJSON) time(i int, lo, hi int64) (int64, int, bool) {
	s, e, ok := p.String(i)
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
	p := fastJSON{Scanner: jsontext.Scanner{B: b}, arena: d.arena[:0]}
	handle, vs, ok := p.record(d.vs[:0])
	if ok {
		d.vs = vs[:0]
		return handle, vs, nil
	}
	return decodeRecordJSONStd(b)
}

func fastRecordJSON(b []byte) (string, []Value, bool) {
	p := fastJSON{Scanner: jsontext.Scanner{B: b}}
	return p.record(nil)
}

// record decodes the record in p.B, appending its values to vs[:0].
func (p *fastJSON) record(vs []Value) (string, []Value, bool) {
	b := p.B
	var (
		hb        []byte
		hasValues bool
	)
	end, ok := p.Object(p.Space(0), func(key []byte, i int) (int, bool) {
		switch string(key) {
		case "responseCode":
			if e, ok := p.Null(i); ok {
				return e, true
			}
			_, e, ok := p.int(i, 1, 1)
			return e, ok
		case "handle":
			s, e, ok := p.String(i)
			hb = s
			return e, ok
		case "values":
			hasValues = true
			vs = vs[:0]
			return p.Array(i, func(j int) (int, bool) {
				if len(vs) >= MaxValues {
					return 0, false
				}
				v, e, ok := p.value(j)
				vs = append(vs, v)
				return e, ok
			})
		}
		return p.Skip(i, 1)
	})
	if !ok || p.Space(end) != len(b) || len(hb) == 0 || !hasValues {
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
	end, ok := p.Object(i, func(key []byte, j int) (int, bool) {
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
		return p.Skip(j, 2)
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
	b := p.B
	arenaLen := len(p.arena)
	v := Value{Perm: PermDefault, TTLType: TTLRelative, TTL: DefaultTTL}
	j, ok := p.Lit(i, `{"index":`)
	if ok {
		j, ok = p.memberIndex(j, &v)
	}
	if ok {
		j, ok = p.Lit(j, `,"type":`)
	}
	if ok {
		j, ok = p.memberType(j, &v)
	}
	if ok {
		j, ok = p.Lit(j, `,"data":`)
	}
	if ok {
		// The usual data, a string in string format, without the walk.
		if k, str := p.Lit(j, `{"format":"string","value":`); str {
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
		if k, has := p.Lit(j, `,"permissions":`); has {
			j, ok = p.memberPerm(k, &v)
		}
	}
	if ok {
		if k, has := p.Lit(j, `,"ttl":`); has {
			j, ok = p.memberTTL(k, &v)
		}
	}
	if ok {
		if k, has := p.Lit(j, `,"timestamp":`); has {
			j, ok = p.memberTimestamp(k, &v)
		}
	}
	if ok {
		if k, has := p.Lit(j, `,"references":`); has {
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
	t, e, ok := p.String(j)
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
	if e, ok := p.Null(j); ok {
		v.Perm = PermDefault
		return e, true
	}
	s, e, ok := p.String(j)
	if !ok {
		return 0, false
	}
	x, ok := parseBinaryDigits(unsafeconv.String(s), 4, 4)
	v.Perm = Perm(x)
	return e, ok
}

func (p *fastJSON) memberTTL(j int, v *Value) (int, bool) {
	if e, ok := p.Null(j); ok {
		v.TTLType, v.TTL = TTLRelative, DefaultTTL
		return e, true
	}
	var (
		x  int64
		e  int
		ok bool
	)
	if j < len(p.B) && p.B[j] == '"' {
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
	if e, ok := p.Null(j); ok {
		v.Timestamp = 0
		return e, true
	}
	var (
		e  int
		ok bool
	)
	if j < len(p.B) && p.B[j] == '"' {
		v.Timestamp, e, ok = p.time(j, 0, math.MaxUint32)
	} else {
		v.Timestamp, e, ok = p.int(j, 0, math.MaxUint32)
	}
	return e, ok
}

func (p *fastJSON) memberRefs(j int, v *Value) (int, bool) {
	if e, ok := p.Null(j); ok {
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
	end, ok := p.Array(i, func(j int) (int, bool) {
		if len(refs) >= MaxRefs {
			return 0, false
		}
		var (
			h              []byte
			idx            int64
			hasH, hasIndex bool
		)
		e, ok := p.Object(j, func(key []byte, k int) (int, bool) {
			switch string(key) {
			case "handle":
				s, e, ok := p.String(k)
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
			return p.Skip(k, 4)
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
		p.arena = make([]byte, 0, max(len(p.B), len(d)))
	}
	start := len(p.arena)
	p.arena = append(p.arena, d...)
	return p.arena[start:len(p.arena):len(p.arena)]
}

// data decodes the "data" member at i: a string, or {"format":…,"value":…}.
func (p *fastJSON) data(i int) ([]byte, int, bool) {
	if i >= len(p.B) {
		return nil, 0, false
	}
	if p.B[i] == '"' {
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
	end, ok := p.Object(i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "format":
			s, e, ok := p.String(j)
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
		return p.Skip(j, 3)
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
	if _, null := p.Null(val); null || val >= len(p.B) {
		return nil, 0, false
	}
	switch string(format) {
	case "string":
		return p.strKeep(val)
	case "base64":
		s, end, ok := p.String(val)
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
		end, ok := p.Object(val, func(key []byte, j int) (int, bool) {
			switch string(key) {
			case "handle":
				s, e, ok := p.String(j)
				h, hasH = s, true
				return e, ok && len(s) <= MaxLength
			case "index":
				n, e, ok := p.int(j, math.MinInt32, math.MaxInt32)
				idx, hasIdx = n, true
				return e, ok
			case "permissions":
				s, e, ok := p.String(j)
				perms, hasP = s, true
				return e, ok
			}
			return p.Skip(j, 4)
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
			p.arena = make([]byte, 0, len(p.B))
		}
		a, start := p.arena, len(p.arena)
		a = binary.BigEndian.AppendUint16(a, uint16(mask))
		a = binary.BigEndian.AppendUint32(a, uint32(len(h)))
		a = append(a, h...)
		a = binary.BigEndian.AppendUint32(a, uint32(idx))
		p.arena = a
		return a[start:len(a):len(a)], end, true
	case "vlist":
		if p.B[val] != '[' {
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
