package resolver

import (
	"unicode/utf16"
	"unicode/utf8"
)

// resourceScan is what the extras read of a RESOURCE value
// (docs/metadata-model.md, resource_info): the resource category and each
// representation variant's URL and media type. Slices point into the value
// or into the scanner's arena.
type resourceScan struct {
	category []byte
	variants []variantScan
}

type variantScan struct{ url, mediaType []byte }

// maxJSONDepth bounds the nesting scanResource walks.
const maxJSONDepth = 64

// scanResource reads a RESOURCE value in one pass, without encoding/json
// (the miss path builds the extras of nearly every record from it): a JSON
// object whose "resource_category" member is a string and whose
// "representation_variants" member is an array of objects with
// "variant_url" and "media_type" strings. Keys match exactly; a member of
// another type, an item that is not an object, and every other member are
// skipped; of a repeated key the last counts. It checks the syntax of every
// byte (strings, escapes, numbers, literals, nesting up to maxJSONDepth) and
// reports ok=false for anything that is not one well-formed JSON object. It
// never panics.
func scanResource(b []byte, arena []byte) (r resourceScan, out []byte, ok bool) {
	s := jscan{b: b, arena: arena}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return r, s.arena, false
	}
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "resource_category":
			if s.peek() == '"' {
				v, ok := s.str()
				r.category = v
				return ok
			}
			r.category = nil
		case "representation_variants":
			r.variants = r.variants[:0]
			if s.peek() == '[' {
				return s.array(func() bool {
					if s.peek() != '{' {
						return s.skip()
					}
					var v variantScan
					ok := s.object(func(key []byte) bool {
						switch string(key) {
						case "variant_url":
							if s.peek() == '"' {
								var ok bool
								v.url, ok = s.str()
								return ok
							}
							v.url = nil
						case "media_type":
							if s.peek() == '"' {
								var ok bool
								v.mediaType, ok = s.str()
								return ok
							}
							v.mediaType = nil
						}
						return s.skip()
					})
					r.variants = append(r.variants, v)
					return ok
				})
			}
		}
		return s.skip()
	})
	s.ws()
	return r, s.arena, ok && s.i == len(b)
}

// jscan walks JSON text. Decoded strings with escapes are written to arena;
// bytes once written there are not overwritten during a scan, so earlier
// results stay valid when it grows.
type jscan struct {
	b     []byte
	i     int
	depth int
	arena []byte
}

func (s *jscan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// peek returns the next byte that is not white space, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// object reads an object, calling f with each key when the reader stands
// before the member's value; f must read the value.
func (s *jscan) object(f func(key []byte) bool) bool {
	if s.peek() != '{' || s.depth >= maxJSONDepth {
		return false
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		key, ok := s.str()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		if !f(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling f when the reader stands before each item;
// f must read the item.
func (s *jscan) array(f func() bool) bool {
	if s.peek() != '[' || s.depth >= maxJSONDepth {
		return false
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !f() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skip reads any value.
func (s *jscan) skip() bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *jscan) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jscan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	s.i = i
	return true
}

// str reads a string and returns its value: a slice of the input when it
// has no escape, else decoded into the arena (invalid UTF-8 and lone
// surrogates become U+FFFD, as encoding/json decodes them).
func (s *jscan) str() ([]byte, bool) {
	b := s.b
	i := s.i + 1
	start := i
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 && b[i] < utf8.RuneSelf {
		i++
	}
	if i < len(b) && b[i] == '"' {
		s.i = i + 1
		return b[start:i:i], true
	}
	a0 := len(s.arena)
	s.arena = append(s.arena, b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return s.arena[a0:len(s.arena):len(s.arena)], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if i+1 >= len(b) {
				return nil, false
			}
			i++
			switch b[i] {
			case '"', '\\', '/':
				s.arena = append(s.arena, b[i])
			case 'b':
				s.arena = append(s.arena, '\b')
			case 'f':
				s.arena = append(s.arena, '\f')
			case 'n':
				s.arena = append(s.arena, '\n')
			case 'r':
				s.arena = append(s.arena, '\r')
			case 't':
				s.arena = append(s.arena, '\t')
			case 'u':
				r, ok := hex4(b, i+1)
				if !ok {
					return nil, false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						r2, ok2 = hex4(b, i+3)
					}
					if d := utf16.DecodeRune(r, r2); ok2 && d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				s.arena = utf8.AppendRune(s.arena, r)
			default:
				return nil, false
			}
			i++
		case c < utf8.RuneSelf:
			s.arena = append(s.arena, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			s.arena = utf8.AppendRune(s.arena, r)
			i += n
		}
	}
	return nil, false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
