package resolver

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// maxLocation is the longest Location the resolver sends. Longer targets are
// not redirected to (the values page is shown instead): browsers and proxies
// cut or refuse such URLs anyway.
const maxLocation = 8192

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

// userinfoSafe marks the bytes allowed in the userinfo of an authority.
var userinfoSafe = func() (t [256]bool) {
	t = hostSafe
	for _, c := range []byte("~!$&'()*+,;=:%") {
		t[c] = true
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendLocation appends to dst the form of the URL raw that may go into a
// Location header, and reports whether raw is one the resolver redirects to.
// On false, dst is returned with its original length.
//
// Accepted: an absolute http or https URL (scheme in any case, written lower
// case) with a non-empty host, after trimming leading and trailing spaces and
// control characters. The authority must be plain: a host of letters, digits,
// '-', '.', '_' or non-ASCII (converted to IDNA ASCII, "xn--" labels), or an
// IPv6 literal; an optional all-digit port; an optional userinfo of safe
// characters. Path, query and fragment keep RFC 3986 characters and valid
// percent escapes; every other byte, including CR, LF, space and non-ASCII, is
// percent-encoded (upper-case hex); a second '#' becomes "%23". The result is
// at most maxLocation bytes. So no javascript:, data: or relative URL, and no
// byte that could split a header, ever reaches a Location.
//
// It allocates nothing when dst has room.
func appendLocation(dst, raw []byte) ([]byte, bool) {
	start := len(dst)
	raw = trimControlSpace(raw)
	var rest []byte
	switch {
	case ascii.HasPrefixFold(raw, "http://"):
		dst = append(dst, "http://"...)
		rest = raw[len("http://"):]
	case ascii.HasPrefixFold(raw, "https://"):
		dst = append(dst, "https://"...)
		rest = raw[len("https://"):]
	default:
		return dst[:start], false
	}
	end := len(rest)
	for i, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	var ok bool
	dst, ok = appendAuthority(dst, rest[:end])
	if !ok {
		return dst[:start], false
	}
	dst, ok = appendURLRest(dst, rest[end:], false)
	if !ok || len(dst)-start > maxLocation {
		return dst[:start], false
	}
	return dst, true
}

// appendURLRest percent-encodes the path, query and fragment part p of a URL.
// inFragment says a '#' was already seen (so every further '#' is encoded).
// It reports false only when p holds nothing (never); kept for symmetry.
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

// appendAuthority validates and appends "[userinfo@]host[:port]".
func appendAuthority(dst, a []byte) ([]byte, bool) {
	if at := bytes.LastIndexByte(a, '@'); at >= 0 {
		for _, c := range a[:at] {
			if !userinfoSafe[c] {
				return dst, false
			}
		}
		dst = append(dst, a[:at+1]...)
		a = a[at+1:]
	}
	host, port := a, []byte(nil)
	if len(a) > 0 && a[0] == '[' {
		end := bytes.IndexByte(a, ']')
		if end < 2 {
			return dst, false
		}
		for _, c := range a[1:end] {
			if !isHex(c) && c != ':' && c != '.' {
				return dst, false
			}
		}
		host = a[:end+1]
		if rest := a[end+1:]; len(rest) > 0 {
			if rest[0] != ':' {
				return dst, false
			}
			port = rest[1:]
			if len(port) == 0 {
				return dst, false
			}
		}
		dst = append(dst, host...)
	} else {
		if c := bytes.LastIndexByte(a, ':'); c >= 0 {
			host, port = a[:c], a[c+1:]
			if len(port) == 0 {
				return dst, false
			}
		}
		var ok bool
		if dst, ok = appendHost(dst, host); !ok {
			return dst, false
		}
	}
	if port != nil {
		if len(port) > 5 {
			return dst, false
		}
		for _, c := range port {
			if c < '0' || c > '9' {
				return dst, false
			}
		}
		dst = append(dst, ':')
		dst = append(dst, port...)
	}
	return dst, true
}

// appendHost appends a registered host name. A host with non-ASCII
// characters is converted to its IDNA ASCII form (UTS #46 mapping, "xn--"
// Punycode labels) with golang.org/x/net/idna's lookup profile; one it refuses
// is not redirected to. ASCII hosts are kept as written.
func appendHost(dst, host []byte) ([]byte, bool) {
	if len(host) == 0 || len(host) > 1024 {
		return dst, false
	}
	ascii := true
	for _, c := range host {
		if c >= utf8.RuneSelf {
			ascii = false
		} else if !hostSafe[c] {
			return dst, false
		}
	}
	if ascii {
		return append(dst, host...), true
	}
	if !utf8.Valid(host) {
		return dst, false
	}
	a, err := idna.Lookup.ToASCII(string(host))
	if err != nil || a == "" || len(a) > 253 {
		return dst, false
	}
	for i := 0; i < len(a); i++ {
		if !hostSafe[a[i]] {
			return dst, false
		}
	}
	return append(dst, a...), true
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
// because the proxy reads '+' literally (HANDLE-PROTOCOL.md §2).
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
