package jsontext

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting Skip walks: called for a value inside depth
// objects and arrays, it refuses one whose objects and arrays take the
// nesting beyond MaxDepth in all.
const MaxDepth = 64

// A Scanner reads the JSON text B (RFC 8259). Its methods take the index of
// a token in B and return the index after it, with ok == false if the text
// there is not well-formed JSON (or, for the decoding methods, not what they
// decode); a caller that gets ok == false stops. White space is skipped only
// where a method says so (Space, and between the members and items Object
// and Array walk).
//
// Strings decode as encoding/json decodes them if Replace is set: a raw
// byte that is not UTF-8 and an escaped lone UTF-16 surrogate become U+FFFD,
// an escaped surrogate pair its character. Without Replace the decoding
// methods refuse (ok == false) a raw byte that is not UTF-8 and every
// escaped surrogate, paired or not: the mode of a decoder that leaves those
// rare strings to a slower exact one, and takes the common ones without a
// second look.
//
// A Scanner holds no state but its fields: its methods may run
// concurrently as long as B is not modified.
type Scanner struct {
	B       []byte
	Replace bool
}

// strStop marks the bytes that end a run of plain ASCII string content:
// '"', '\\', the control characters (which JSON does not allow raw) and the
// bytes of multi-byte UTF-8 sequences (checked one rune at a time).
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// strStopMask flags the strStop bytes among the eight bytes of x
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

// nextStop returns the index of the first strStop byte of b at or after
// j, or len(b): eight bytes at a time, then one at a time at the end.
func nextStop(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		if m := strStopMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b); j++ {
		if strStop[b[j]] {
			return j
		}
	}
	return j
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Space returns the index of the first byte at or after i that is not
// white space, or len(B).
func (s *Scanner) Space(i int) int {
	for i < len(s.B) && IsSpace(s.B[i]) {
		i++
	}
	return i
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// SkipString checks the string whose '"' is at i and returns the index
// after it. decode is false when B[i+1:end-1] is the string's value as it
// stands, true when it must be decoded (escapes, and with Replace bytes that
// are not UTF-8).
func (s *Scanner) SkipString(i int) (end int, decode bool, ok bool) {
	b := s.B
	if i >= len(b) || b[i] != '"' {
		return 0, false, false
	}
	esc := false
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
				if !s.Replace {
					return 0, false, false
				}
				esc = true
			}
			j += size
		}
	}
}

// String decodes the string whose '"' is at i and returns its value and the
// index after it. Without escapes the value aliases B (capped: appending to
// it copies); with them it is newly allocated.
func (s *Scanner) String(i int) ([]byte, int, bool) {
	e, esc, ok := s.SkipString(i)
	if !ok {
		return nil, 0, false
	}
	raw := s.B[i+1 : e-1 : e-1]
	if !esc {
		return raw, e, true
	}
	out, ok := s.appendUnescaped(make([]byte, 0, len(raw)), raw)
	return out, e, ok
}

// AppendString checks the string whose '"' is at i as SkipString does and
// appends its value to dst in the same pass, returning dst and the index
// after the string. Plain runs are copied eight bytes at a time as they are
// scanned: each word is stored whole into dst's spare capacity and dst keeps
// only its bytes before the first stop byte, so AppendString may write
// anywhere in dst[len(dst):cap(dst)]: the caller must not keep anything
// there (an arena that hands out capped slices is the intended dst).
func (s *Scanner) AppendString(dst []byte, i int) ([]byte, int, bool) {
	b := s.B
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
		for j < len(b) && !strStop[b[j]] {
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
			if dst, j, ok = s.appendEscape(dst, b, j); !ok {
				return nil, 0, false
			}
		default:
			if c < utf8.RuneSelf { // a raw control character
				return nil, 0, false
			}
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				if !s.Replace {
					return nil, 0, false
				}
				dst, j = utf8.AppendRune(dst, utf8.RuneError), j+1
				continue
			}
			dst, j = append(dst, b[j:j+size]...), j+size
		}
	}
}

// appendUnescaped appends the string content raw (checked by SkipString)
// decoded.
func (s *Scanner) appendUnescaped(out, raw []byte) ([]byte, bool) {
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			k = len(raw)
		}
		plain := raw[:k]
		if s.Replace && !utf8.Valid(plain) {
			for len(plain) > 0 {
				r, n := utf8.DecodeRune(plain)
				out = utf8.AppendRune(out, r)
				plain = plain[n:]
			}
		} else {
			out = append(out, plain...)
		}
		if k == len(raw) {
			break
		}
		var ok bool
		if out, k, ok = s.appendEscape(out, raw, k); !ok {
			return nil, false
		}
		raw = raw[k:]
	}
	return out, true
}

// appendEscape appends the character that the escape sequence at b[k] (a
// backslash) stands for and returns the index after the sequence: for a
// high surrogate followed by an escaped low one (Replace), after both.
func (s *Scanner) appendEscape(dst, b []byte, k int) ([]byte, int, bool) {
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
		r, ok := hex4(b, k+2)
		if !ok {
			return nil, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(dst, r), k + 6, true
		}
		if !s.Replace {
			return nil, 0, false
		}
		if k+12 <= len(b) && b[k+6] == '\\' && b[k+7] == 'u' {
			if r2, ok := hex4(b, k+8); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return utf8.AppendRune(dst, d), k + 12, true
				}
			}
		}
		return utf8.AppendRune(dst, utf8.RuneError), k + 6, true
	}
	return nil, 0, false
}

// hex4 decodes the four hexadecimal digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// skipDigits returns the index of the first byte at or after j that is not
// an ASCII digit.
func skipDigits(b []byte, j int) int {
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j
}

// Number checks the number at i and returns the index after it; n is its
// value when it is an integer (no fraction, no exponent) of at most 18
// digits, which isInt reports.
func (s *Scanner) Number(i int) (end int, n int64, isInt, ok bool) {
	b := s.B
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

// Lit checks that the literal word (true, false, null) stands at i.
func (s *Scanner) Lit(i int, word string) (int, bool) {
	if i >= 0 && len(s.B)-i >= len(word) && string(s.B[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return 0, false
}

// Null reports whether the value at i is null, and the index after it.
func (s *Scanner) Null(i int) (int, bool) {
	if i < len(s.B) && s.B[i] == 'n' {
		return s.Lit(i, "null")
	}
	return 0, false
}

// Skip checks the value at i, of any type, nested in depth objects and
// arrays, and returns the index after it. Objects and arrays deeper than
// MaxDepth make it fail.
func (s *Scanner) Skip(i, depth int) (int, bool) {
	b := s.B
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		e, _, ok := s.SkipString(i)
		return e, ok
	case '{':
		if depth >= MaxDepth {
			return 0, false
		}
		return s.Object(i, func(_ []byte, j int) (int, bool) { return s.Skip(j, depth+1) })
	case '[':
		if depth >= MaxDepth {
			return 0, false
		}
		return s.Array(i, func(j int) (int, bool) { return s.Skip(j, depth+1) })
	case 't':
		return s.Lit(i, "true")
	case 'f':
		return s.Lit(i, "false")
	case 'n':
		return s.Lit(i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			e, _, _, ok := s.Number(i)
			return e, ok
		}
	}
	return 0, false
}

// Object walks the object whose '{' is at i: for each member, in order, f
// gets the decoded key and the index of the member's value (after white
// space), and returns the index after the value. Object returns the index
// after the '}'. A key without escapes aliases B; one with escapes is newly
// allocated.
func (s *Scanner) Object(i int, f func(key []byte, j int) (int, bool)) (int, bool) {
	b := s.B
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = s.Space(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		ke, esc, ok := s.SkipString(i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : ke-1 : ke-1]
		if esc {
			if key, ok = s.appendUnescaped(make([]byte, 0, len(key)), key); !ok {
				return 0, false
			}
		}
		i = s.Space(ke)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = f(key, s.Space(i+1)); !ok {
			return 0, false
		}
		i = s.Space(i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = s.Space(i + 1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// Array walks the array whose '[' is at i: f gets the index of each item
// (after white space) and returns the index after it. Array returns the
// index after the ']'.
func (s *Scanner) Array(i int, f func(j int) (int, bool)) (int, bool) {
	b := s.B
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = s.Space(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = f(i); !ok {
			return 0, false
		}
		i = s.Space(i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = s.Space(i + 1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}
