package handlev

import (
	"bytes"
	"errors"
	"net/netip"
	"strconv"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"pidnode/internal/ascii"
)

// MaxTargetURL is the longest target URL accepted, in its canonical form:
// browsers and proxies cut or refuse longer Location headers anyway.
const MaxTargetURL = 8192

// ErrTargetURL is wrapped by every *URLError: errors.Is(err, ErrTargetURL).
var ErrTargetURL = errors.New("handlev: not a redirect target URL")

// URLError says why a URL is not one the resolver redirects to, and so not one
// the admin API accepts as a target. Part is the component at fault
// ("scheme", "userinfo", "host", "port" or "url"); Reason says what is wrong
// with it, in words fit for an API answer.
type URLError struct {
	Part   string
	Reason string
}

func (e *URLError) Error() string { return "target URL: " + e.Part + " " + e.Reason }

// Unwrap returns ErrTargetURL.
func (e *URLError) Unwrap() error { return ErrTargetURL }

// The refusals are fixed values, so a refused URL costs no allocation.
var (
	errURLScheme     = &URLError{"scheme", "must be http or https, and the URL absolute (http(s)://host…)"}
	errURLLong       = &URLError{"url", "is longer than " + strconv.Itoa(MaxTargetURL) + " bytes"}
	errURLUserinfo   = &URLError{"userinfo", "has a character that is not allowed"}
	errURLHostEmpty  = &URLError{"host", "is empty"}
	errURLHostChar   = &URLError{"host", "has a character that is not allowed (letters, digits, '-', '.', '_', or an internationalized name)"}
	errURLHostLong   = &URLError{"host", "is longer than 253 characters"}
	errURLHostLabel  = &URLError{"host", "has an empty label or one longer than 63 characters"}
	errURLHostUTF8   = &URLError{"host", "is not valid UTF-8"}
	errURLHostHidden = &URLError{"host", "has a bidirectional control or invisible character"}
	errURLHostIDNA   = &URLError{"host", "is not a valid internationalized domain name (IDNA)"}
	errURLHostIPv4   = &URLError{"host", "ends in a number but is not a dotted-decimal IPv4 address"}
	errURLHostIPv6   = &URLError{"host", "is not a valid IPv6 address literal"}
	errURLHostZone   = &URLError{"host", "has an IPv6 zone identifier"}
	errURLPortEmpty  = &URLError{"port", "is empty (remove the ':' or give a port)"}
	errURLPortChar   = &URLError{"port", "is not a number"}
	errURLPortRange  = &URLError{"port", "is out of range 1-65535"}
)

// CheckTargetURL reports whether b is a URL the resolver redirects to: nil, or
// a *URLError naming what is wrong. The admin API refuses a target URL for
// which it returns an error, so that every accepted URL is one the resolver
// redirects to (AppendTargetURL).
func CheckTargetURL(b []byte) error {
	var buf [512]byte
	_, err := AppendTargetURL(buf[:0], b)
	return err
}

// AppendTargetURL appends to dst the canonical form of the URL raw, the one
// the resolver sends in Location, or returns dst unchanged and a *URLError.
//
// Accepted: an absolute http or https URL (scheme in any case, written lower
// case), after trimming leading and trailing spaces and control characters
// (as browsers do). The authority is plain:
//
//   - an optional userinfo of letters, digits and "-._~!$&'()*+,;=:%";
//   - a host: a name of letters, digits, '-', '.' and '_' in labels of 1 to
//     63 characters (one trailing dot allowed), at most 253 characters; or a
//     name with non-ASCII characters or "xn--" labels that IDNA (UTS #46,
//     golang.org/x/net/idna's lookup profile) accepts, written as its ASCII
//     form, and in which no label holds a bidirectional control, zero-width
//     or other invisible character (format characters, variation
//     selectors), which would make the name read as another; or a
//     dotted-decimal IPv4 address (a name ending in a number must be one,
//     since browsers read "127.1" or "0x7f.1" as addresses); or a bracketed
//     IPv6 address without a zone identifier;
//   - an optional port, 1 to 65535, written without leading zeros.
//
// Path, query and fragment keep RFC 3986 characters and valid percent
// escapes; every other byte, including CR, LF, space and non-ASCII, is
// percent-encoded (upper-case hex), and a second '#' becomes "%23". The result
// is at most MaxTargetURL bytes. So no javascript:, data: or relative URL, and
// no byte that could split a header, is ever accepted.
//
// Canonical forms are fixed points: AppendTargetURL of its own output gives the
// same bytes. It allocates nothing for an ASCII host name when dst has room.
func AppendTargetURL(dst, raw []byte) ([]byte, error) {
	start := len(dst)
	raw = TrimURLSpace(raw)
	var rest []byte
	switch {
	case ascii.HasPrefixFold(raw, "http://"):
		dst = append(dst, "http://"...)
		rest = raw[len("http://"):]
	case ascii.HasPrefixFold(raw, "https://"):
		dst = append(dst, "https://"...)
		rest = raw[len("https://"):]
	default:
		return dst[:start], errURLScheme
	}
	end := len(rest)
	for i, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	dst, err := appendAuthority(dst, rest[:end])
	if err != nil {
		return dst[:start], err
	}
	dst = AppendURLEscaped(dst, rest[end:], false)
	if len(dst)-start > MaxTargetURL {
		return dst[:start], errURLLong
	}
	return dst, nil
}

// TrimURLSpace trims leading and trailing ASCII spaces and control bytes, as
// the WHATWG URL parser does before it reads a URL.
func TrimURLSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] <= ' ' || b[0] == 0x7f) {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] <= ' ' || b[len(b)-1] == 0x7f) {
		b = b[:len(b)-1]
	}
	return b
}

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

// urlHostSafe marks the ASCII bytes allowed in a registered host name.
// Stricter than RFC 3986 on purpose: no sub-delimiters and no
// percent-encoding, which browsers treat inconsistently.
var urlHostSafe = func() (t [256]bool) {
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

// IsHostByte reports whether c may stand in a registered host name as the
// target-URL rule allows it: ASCII letters, digits, '-', '.' and '_'.
func IsHostByte(c byte) bool { return urlHostSafe[c] }

// userinfoSafe marks the bytes allowed in the userinfo of an authority.
var userinfoSafe = func() (t [256]bool) {
	t = urlHostSafe
	for _, c := range []byte("~!$&'()*+,;=:%") {
		t[c] = true
	}
	return t
}()

const urlUpperHex = "0123456789ABCDEF"

// AppendURLEscaped appends p, the path, query and fragment part of a URL (or
// the address part of a mailto: link), percent-encoding every byte outside
// RFC 3986's unreserved and reserved sets; a '%' is kept only before two hex
// digits, and a '#' after the first (or any, if inFragment) is encoded. It is
// the encoding AppendTargetURL gives a Location, for links built elsewhere.
func AppendURLEscaped(dst, p []byte, inFragment bool) []byte {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHexDigit(p[i+1]) && isHexDigit(p[i+2]):
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
			dst = append(dst, '%', urlUpperHex[c>>4], urlUpperHex[c&15])
		}
	}
	return dst
}

// appendAuthority validates and appends "[userinfo@]host[:port]".
func appendAuthority(dst, a []byte) ([]byte, error) {
	if at := bytes.LastIndexByte(a, '@'); at >= 0 {
		for _, c := range a[:at] {
			if !userinfoSafe[c] {
				return dst, errURLUserinfo
			}
		}
		dst = append(dst, a[:at+1]...)
		a = a[at+1:]
	}
	var port []byte
	hasPort := false
	if len(a) > 0 && a[0] == '[' {
		end := bytes.IndexByte(a, ']')
		if end < 0 {
			return dst, errURLHostIPv6
		}
		if rest := a[end+1:]; len(rest) > 0 {
			if rest[0] != ':' {
				return dst, errURLHostIPv6
			}
			port, hasPort = rest[1:], true
		}
		var err error
		if dst, err = appendIPv6(dst, a[1:end]); err != nil {
			return dst, err
		}
	} else {
		host := a
		if c := bytes.LastIndexByte(a, ':'); c >= 0 {
			host, port, hasPort = a[:c], a[c+1:], true
		}
		var err error
		if dst, err = appendHost(dst, host); err != nil {
			return dst, err
		}
	}
	if !hasPort {
		return dst, nil
	}
	if len(port) == 0 {
		return dst, errURLPortEmpty
	}
	n := 0
	for _, c := range port {
		if c < '0' || c > '9' {
			return dst, errURLPortChar
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return dst, errURLPortRange
		}
	}
	if n == 0 {
		return dst, errURLPortRange
	}
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(n), 10), nil
}

// appendIPv6 appends "[addr]" for the inside of an IP literal, as written
// (upper or lower case, compressed or not: it is already unambiguous).
func appendIPv6(dst, lit []byte) ([]byte, error) {
	if len(lit) == 0 || len(lit) > 45 {
		return dst, errURLHostIPv6
	}
	for _, c := range lit {
		switch {
		case c == '%':
			return dst, errURLHostZone
		case !isHexDigit(c) && c != ':' && c != '.':
			return dst, errURLHostIPv6
		}
	}
	var buf [45]byte
	a, err := netip.ParseAddr(string(append(buf[:0], lit...)))
	if err != nil || !a.Is6() {
		return dst, errURLHostIPv6
	}
	dst = append(dst, '[')
	dst = append(dst, lit...)
	return append(dst, ']'), nil
}

// appendHost appends a registered host name or an IPv4 address. ASCII names
// are kept as written (after their checks); a name with non-ASCII characters
// is written in its IDNA ASCII form.
func appendHost(dst, host []byte) ([]byte, error) {
	if len(host) == 0 {
		return dst, errURLHostEmpty
	}
	if len(host) > 1024 {
		return dst, errURLHostLong
	}
	isASCII := true
	for _, c := range host {
		if c >= utf8.RuneSelf {
			isASCII = false
		} else if !urlHostSafe[c] {
			return dst, errURLHostChar
		}
	}
	if isASCII && !hasACELabel(host) {
		if err := checkLabels(host); err != nil {
			return dst, err
		}
		return append(dst, host...), nil
	}
	if !utf8.Valid(host) {
		return dst, errURLHostUTF8
	}
	if hasHiddenRune(host) {
		return dst, errURLHostHidden
	}
	a, err := idna.Lookup.ToASCII(string(host))
	if err != nil || a == "" {
		return dst, errURLHostIDNA
	}
	for i := 0; i < len(a); i++ {
		if !urlHostSafe[a[i]] {
			return dst, errURLHostIDNA
		}
	}
	if err := checkLabels([]byte(a)); err != nil {
		return dst, err
	}
	// "xn--" labels decode to what a browser shows: the same rule applies
	// to what they hide.
	u, err := idna.Lookup.ToUnicode(a)
	if err != nil {
		return dst, errURLHostIDNA
	}
	if hasHiddenRune([]byte(u)) {
		return dst, errURLHostHidden
	}
	return append(dst, a...), nil
}

// hasACELabel reports whether an ASCII host has a label starting "xn--" (in
// any case): Punycode that IDNA must validate.
func hasACELabel(host []byte) bool {
	for i := 0; i+4 <= len(host); i++ {
		if (i == 0 || host[i-1] == '.') && ascii.HasPrefixFold(host[i:], "xn--") {
			return true
		}
	}
	return false
}

// checkLabels checks the label lengths of an ASCII host, and that a host
// ending in a numeric label is a dotted-decimal IPv4 address.
func checkLabels(host []byte) error {
	h := host
	if len(h) > 1 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	if len(h) > 253 {
		return errURLHostLong
	}
	last := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if n := i - last; n == 0 || n > 63 {
				return errURLHostLabel
			}
			if i < len(h) {
				last = i + 1
			}
		}
	}
	if numericLabel(h[last:]) {
		var buf [15]byte
		if len(h) > len(buf) {
			return errURLHostIPv4
		}
		if a, err := netip.ParseAddr(string(append(buf[:0], h...))); err != nil || !a.Is4() {
			return errURLHostIPv4
		}
	}
	return nil
}

// numericLabel reports whether a label is one the WHATWG host parser reads
// as a number: all decimal digits, or "0x" followed by hex digits.
func numericLabel(l []byte) bool {
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for _, c := range l[2:] {
			if !isHexDigit(c) {
				return false
			}
		}
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(l) > 0
}

// hasHiddenRune reports whether s (valid UTF-8) holds a character that is
// invisible or reorders the text around it: format characters (Cf: the
// bidirectional embeddings, overrides and isolates, zero-width space, joiner
// and non-joiner, soft hyphen, byte order mark …), variation selectors and
// the other default-ignorable code points. IDNA maps some of these away
// silently; a target URL must not carry them at all.
func hasHiddenRune(s []byte) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if r < 0x80 {
			continue
		}
		if IsHiddenRune(r) {
			return true
		}
	}
	return false
}

// IsHiddenRune reports whether r is invisible or reorders the text around it
// (see AppendTargetURL): such a character must be shown escaped wherever a
// person reads an identifier's values.
func IsHiddenRune(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) ||
		unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
