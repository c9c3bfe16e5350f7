package resolver

import (
	"bytes"

	"pidnode/handlev"
)

// maxLocation is the longest Location the resolver sends. Longer targets are
// not redirected to (the values page is shown instead).
const maxLocation = handlev.MaxTargetURL

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
	for c := range 256 {
		t[c] = handlev.IsHostByte(byte(c))
	}
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
