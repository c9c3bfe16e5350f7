package jsontext

import "unicode/utf8"

// Escape selects how AppendString writes what the two JSON writers pidnode
// matches byte for byte write differently. The zero value is the Handle
// JSON of the reference server (Gson with HTML escaping off).
type Escape uint8

const (
	// EscapeHTML writes <, > and & as \u003c, \u003e and \u0026, as
	// json.Marshal does.
	EscapeHTML Escape = 1 << iota
	// EscapeInvalid writes each byte that is not UTF-8 as the escape
	// \ufffd, as encoding/json does; without it such a byte is written as
	// U+FFFD raw (three bytes), as Gson does.
	EscapeInvalid
)

const hexDigits = "0123456789abcdef"

// plain[c] is true for the ASCII bytes written as they are without HTML
// escaping (all but the control characters, '"' and '\'); plainHTML[c]
// with <, > and & escaped too.
var plain, plainHTML = func() (p, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return p, h
}()

// AppendString appends s as a quoted JSON string: '"' and '\' backslash-
// escaped, the control characters as \b \t \n \f \r or \u00xx (lower-case
// hex), U+2028 and U+2029 as \u2028 and \u2029, a byte that is not UTF-8 as
// esc says, and everything else (DEL and non-ASCII included) raw. It
// allocates nothing beyond growing dst and does not retain s.
func AppendString(dst []byte, s string, esc Escape) []byte {
	tab := &plain
	if esc&EscapeHTML != 0 {
		tab = &plainHTML
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if tab[c] {
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			if esc&EscapeInvalid != 0 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, "\uFFFD"...)
			}
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
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
