package page

import (
	"unicode/utf8"

	"pidnode/handlev"
)

// AppendHTML appends s escaped for an HTML attribute value (and so for text
// too): & < > " ' become entities. Control characters other than tab, LF and
// CR, C1 controls, U+FFFE/U+FFFF and invalid UTF-8 become U+FFFD, so the
// output is always valid UTF-8 and valid XML character data.
func AppendHTML[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escAttr) }

// AppendText is AppendHTML for text content: quotes stay as they are, which
// keeps JSON text in values readable.
func AppendText[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escText) }

// appendShown is AppendText for record data shown to a reader (the values
// table, a tombstone's landing page and related identifiers): every character
// that is invisible or reorders the text around it (handlev.IsHiddenRune: the
// bidirectional overrides and isolates, zero-width characters, …) is written
// visibly as <span class="esc">\uXXXX</span> (\U00XXXXXX beyond the BMP), so that U+202E cannot make
// "https://evil.example/gro.elgoog" read as a trusted URL, nor U+200D hide in
// a host name. Only for element content that may hold markup (not <title>).
func appendShown[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escShown) }

const (
	escText  = iota // text content
	escAttr         // attribute value
	escShown        // text content, hidden characters made visible
)

const upperHex = "0123456789ABCDEF"

// plainText and plainAttr mark the ASCII bytes appendEscaped copies as they
// are, for text content and attribute values.
var plainText, plainAttr = func() (text, attr [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		text[c] = c != '&' && c != '<' && c != '>' && c != 0x7f
		attr[c] = text[c] && c != '"' && c != '\''
	}
	for _, c := range "\t\n\r" {
		text[c], attr[c] = true, true
	}
	return text, attr
}()

func appendEscaped[T ~string | ~[]byte](dst []byte, s T, mode int) []byte {
	attr := mode == escAttr
	plain := &plainText
	if attr {
		plain = &plainAttr
	}
	for i := 0; i < len(s); {
		// Copy a run of bytes that need no escaping in one append (URLs and
		// handles are nearly all such bytes).
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"' && attr:
				dst = append(dst, "&#34;"...)
			case c == '\'' && attr:
				dst = append(dst, "&#39;"...)
			case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
				dst = append(dst, "\uFFFD"...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		var buf [utf8.UTFMax]byte
		n := copy(buf[:], s[i:min(i+utf8.UTFMax, len(s))])
		r, size := utf8.DecodeRune(buf[:n])
		if r == utf8.RuneError && size <= 1 || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff {
			dst = append(dst, "\uFFFD"...)
		} else if mode == escShown && handlev.IsHiddenRune(r) {
			dst = append(dst, `<span class="esc">\`...)
			if r > 0xffff { // Go's \U00XXXXXX form beyond the BMP
				dst = append(dst, 'U', '0', '0', upperHex[r>>20&15], upperHex[r>>16&15])
			} else {
				dst = append(dst, 'u')
			}
			dst = append(dst, upperHex[r>>12&15], upperHex[r>>8&15], upperHex[r>>4&15], upperHex[r&15])
			dst = append(dst, "</span>"...)
		} else {
			dst = append(dst, buf[:size]...)
		}
		i += size
	}
	return dst
}
