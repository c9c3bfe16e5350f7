package resolver

import (
	"bytes"

	"pidnode/handlev"
)

// maxLocation is the longest Location the resolver sends. Longer targets are
// not redirected to (the values page is shown instead).
const maxLocation = handlev.MaxTargetURL

// uriSafe marks the bytes a URL may carry unencoded: RFC 3986 unreserved and
// reserved characters. '%' is handled separately (kept only before two hex
// digits). Everything else (controls, space, '"', '<', '>', '\\', '^', '`',
// '{', '|', '}', DEL and every byte ≥ 0x80) is percent-encoded.
var uriSafe = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-._~:/?#[]@!$&'()*+,;=") {
		t[c] = true
	}
	return t
}()

// hostSafe marks the ASCII bytes allowed in a registered host name. Stricter
// than RFC 3986 on purpose: no sub-delimiters and no percent-encoding, which
// browsers treat inconsistently.
var hostSafe = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['-'], t['.'], t['_'] = true, true, true
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendLocation appends to dst the form of the URL raw that may go into a
// Location header, and reports whether raw is one the resolver redirects to.
// On false, dst is returned with its original length. The rule is
// handlev.AppendTargetURL's, the one the admin API accepts target URLs by, so
// that every URL accepted there is redirected to here.
//
// It allocates nothing for a URL with an ASCII host name when dst has room.
func appendLocation(dst, raw []byte) ([]byte, bool) {
	out, err := handlev.AppendTargetURL(dst, raw)
	return out, err == nil
}

// appendURLRest percent-encodes the path, query and fragment part p of a URL
// the way handlev.AppendTargetURL does (for mailto: links). inFragment says a
// '#' was already seen (so every further '#' is encoded). It always reports
// true.
func appendURLRest(dst, p []byte, inFragment bool) ([]byte, bool) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			dst = append(dst, c)
		case c == '#':
			if inFragment {
				dst = append(dst, "%23"...)
			} else {
				inFragment = true
				dst = append(dst, c)
			}
		case uriSafe[c]:
			dst = append(dst, c)
		default:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst, true
}

func isHex(c byte) bool {
	_, ok := handlev.UnhexDigit(c)
	return ok
}

// trimControlSpace trims leading and trailing ASCII spaces and control bytes
// (as the WHATWG URL parser does).
func trimControlSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] <= ' ' || b[0] == 0x7f) {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] <= ' ' || b[len(b)-1] == 0x7f) {
		b = b[:len(b)-1]
	}
	return b
}

// authorityOf returns the "scheme://authority" head of a URL produced by
// appendLocation.
func authorityOf(loc []byte) []byte {
	i := bytes.Index(loc, []byte("://"))
	if i < 0 {
		return loc
	}
	for j := i + 3; j < len(loc); j++ {
		if c := loc[j]; c == '/' || c == '?' || c == '#' {
			return loc[:j]
		}
	}
	return loc
}

// pathSafe marks the bytes kept unencoded when a handle is written into a URL
// path (for /lookup redirects, HS_ALIAS redirects and Link headers). '%', '?',
// '#' and everything outside RFC 3986 pchar or '/' are encoded; '+' stays,
// because the proxy reads '+' literally (docs/handle-protocol.md §2).
var pathSafe = func() (t [256]bool) {
	t = hostSafe
	for _, c := range []byte("~/:@!$&'()*+,;=") {
		t[c] = true
	}
	return t
}()

// appendPathEscaped appends h percent-encoded for a URL path.
func appendPathEscaped[T ~string | ~[]byte](dst []byte, h T) []byte {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if pathSafe[c] {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
}
