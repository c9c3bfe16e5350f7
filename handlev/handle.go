package handlev

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"pidnode/internal/ascii"
)

// MaxHandleLen is the longest handle accepted, in bytes of UTF-8 after
// percent-decoding and scheme stripping. Longer input is ErrTooLong.
const MaxHandleLen = 2048

// maxSchemeLen is the longest scheme prefix DecodePath strips ("info:hdl/").
const maxSchemeLen = len("info:hdl/")

// DecodePath turns the path of a proxy request (docs/handle-protocol.md §2) into
// handle text and appends it to dst. rawPath is the path as on the wire, without
// the leading '/' and without the query string, still percent-encoded.
//
// Percent escapes decode to bytes ('%2F' to '/'); '+' stays a literal '+'. The
// result must be valid UTF-8 with no control byte (0x00–0x1F, 0x7F). One leading
// scheme is stripped, ASCII case-insensitively: "hdl:", "doi:", "info:hdl/",
// "info:doi/" and "urn:hdl:"; after "urn:hdl:" the first ':' before any '/'
// becomes '/'. A "." or ".." segment is refused: no handle has one.
//
// Errors: ErrEmpty, ErrTooLong (more than MaxHandleLen bytes), and *HandleError
// wrapping ErrBadEscape, ErrInvalidUTF8, ErrControl (a NUL included) or ErrDotSegment,
// with the offset in rawPath. On error dst is returned with its original length
// (its spare capacity may have been written).
//
// DecodePath does not fold case (replies echo the handle as written; Namer.AppendKey
// folds) and allocates nothing when dst has room for the handle.
func DecodePath(dst, rawPath []byte) ([]byte, error) {
	if len(rawPath) == 0 {
		return dst, ErrEmpty
	}
	start := len(dst)
	// The scheme is stripped after decoding (it may itself be escaped), so the
	// decoded text may run maxSchemeLen bytes past the limit before it is known
	// to be too long. Stopping there bounds the work on hostile input.
	limit := MaxHandleLen + maxSchemeLen
	for i := 0; i < len(rawPath); {
		at := i
		c := rawPath[i]
		if c == '%' {
			if i+2 >= len(rawPath) {
				return dst[:start], &HandleError{Offset: at, Byte: '%', Err: ErrBadEscape}
			}
			hi, ok1 := UnhexDigit(rawPath[i+1])
			lo, ok2 := UnhexDigit(rawPath[i+2])
			if !ok1 || !ok2 {
				return dst[:start], &HandleError{Offset: at, Byte: '%', Err: ErrBadEscape}
			}
			c = hi<<4 | lo
			i += 3
		} else {
			i++
		}
		if c < 0x20 || c == 0x7f {
			return dst[:start], &HandleError{Offset: at, Byte: c, Err: ErrControl}
		}
		if len(dst)-start >= limit {
			return dst[:start], ErrTooLong
		}
		dst = append(dst, c)
	}
	h := dst[start:]
	if bad := invalidUTF8At(h); bad >= 0 {
		return dst[:start], &HandleError{Offset: rawOffset(rawPath, bad), Byte: h[bad], Err: ErrInvalidUTF8}
	}
	skip := stripScheme(h)
	if skip > 0 {
		copy(h, h[skip:])
		dst = dst[:len(dst)-skip]
		h = dst[start:]
	}
	if len(h) == 0 {
		return dst[:start], ErrEmpty
	}
	if len(h) > MaxHandleLen {
		return dst[:start], ErrTooLong
	}
	if at := dotSegment(h); at >= 0 {
		return dst[:start], &HandleError{Offset: rawOffset(rawPath, skip+at), Byte: '.', Err: ErrDotSegment}
	}
	return dst, nil
}

// stripScheme returns how many leading bytes of h are a scheme prefix to drop.
// For "urn:hdl:" it also rewrites the first ':' before any '/' to '/'.
func stripScheme(h []byte) int {
	switch {
	case ascii.HasPrefixFold(h, "info:hdl/"), ascii.HasPrefixFold(h, "info:doi/"):
		return len("info:hdl/")
	case ascii.HasPrefixFold(h, "urn:hdl:"):
		const n = len("urn:hdl:")
		for i := n; i < len(h); i++ {
			if h[i] == '/' {
				break
			}
			if h[i] == ':' {
				h[i] = '/'
				break
			}
		}
		return n
	case ascii.HasPrefixFold(h, "hdl:"), ascii.HasPrefixFold(h, "doi:"):
		return len("hdl:")
	}
	return 0
}

// UnhexDigit returns the value of the hexadecimal digit c (either case), for
// the percent-decoders of the fronts as well as DecodePath.
func UnhexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// invalidUTF8At returns the index of the first byte of b that does not start a
// valid UTF-8 sequence, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// controlAt returns the index of the first control byte of b, or -1.
func controlAt(b []byte) int {
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			return i
		}
	}
	return -1
}

// rawOffset maps the index of a decoded byte back to its offset in the
// percent-encoded path (the path is known to decode without error up to there).
func rawOffset(raw []byte, decoded int) int {
	i := 0
	for n := 0; n < decoded && i < len(raw); n++ {
		if raw[i] == '%' {
			i += 3
		} else {
			i++
		}
	}
	return i
}

// dotSegment returns the start of the first "." or ".." segment of h, or -1.
func dotSegment(h []byte) int {
	for start := 0; start <= len(h); {
		end := bytes.IndexByte(h[start:], '/')
		if end < 0 {
			end = len(h)
		} else {
			end += start
		}
		if seg := h[start:end]; (len(seg) == 1 || len(seg) == 2) && seg[0] == '.' && seg[len(seg)-1] == '.' {
			return start
		}
		start = end + 1
	}
	return -1
}

// Form is the shape of a handle under this node's prefixes (docs/product.md §2).
type Form uint8

const (
	// FormOther: a handle under a served prefix that is not of our shape
	// (extra prefixes, imported legacy handles, "<prefix>/abc"). Matched exactly
	// after case folding.
	FormOther Form = iota
	// FormFull: <prefix>/<svc>/<ns>/<id> under the production or test prefix.
	FormFull
	// FormShort: <prefix>/<ns>/<id> under the production or test prefix, ns ≠ svc.
	FormShort
)

func (f Form) String() string {
	switch f {
	case FormOther:
		return "other"
	case FormFull:
		return "full"
	case FormShort:
		return "short"
	}
	return fmt.Sprintf("Form(%d)", uint8(f))
}

// NamerConfig configures a Namer.
type NamerConfig struct {
	// Prefix is the production prefix: digits and dots, optionally a 'T' after
	// the first dot ("21.12345", "21.T12345", "123"). Required.
	Prefix string
	// TestPrefix is the test prefix, same syntax. If empty, there is none.
	TestPrefix string
	// Extra lists further prefixes served as-is (imported legacy records such as
	// "10.1000" or "0.NA"): ASCII letters, digits and dots, no '/'. Their handles
	// are always FormOther.
	Extra []string
	// Svc is the service segment of the full form. If empty, "svc" is used.
	// 1–32 ASCII letters or digits; compared case-insensitively.
	Svc string
}

// DefaultSvc is the service segment used when NamerConfig.Svc is empty.
const DefaultSvc = "svc"

// Namer turns handles into storage keys and back (docs/product.md §2). It is immutable
// after NewNamer and safe for concurrent use.
type Namer struct {
	// prefixes holds the served prefixes, upper case: [0] production,
	// [1] test (if any), then the extras. ours is how many are ours (1 or 2).
	prefixes []string
	ours     int
	svc      string // as configured, for display
	svcKey   string // upper case, as in keys
}

// NewNamer validates cfg and returns a Namer. Invalid prefixes are ErrBadPrefix,
// an invalid Svc ErrBadSvc (both wrapped with the offending text).
func NewNamer(cfg NamerConfig) (*Namer, error) {
	n := &Namer{svc: cfg.Svc}
	if n.svc == "" {
		n.svc = DefaultSvc
	}
	if len(n.svc) > 32 || !isAlnum(n.svc) {
		return nil, fmt.Errorf("%w: %q: want 1–32 ASCII letters or digits", ErrBadSvc, cfg.Svc)
	}
	n.svcKey = upperString(n.svc)
	if !validOwnPrefix(cfg.Prefix) {
		return nil, fmt.Errorf("%w: production prefix %q: want digits and dots, optionally T after the first dot", ErrBadPrefix, cfg.Prefix)
	}
	n.prefixes = append(n.prefixes, upperString(cfg.Prefix))
	if cfg.TestPrefix != "" {
		if !validOwnPrefix(cfg.TestPrefix) {
			return nil, fmt.Errorf("%w: test prefix %q: want digits and dots, optionally T after the first dot", ErrBadPrefix, cfg.TestPrefix)
		}
		n.prefixes = append(n.prefixes, upperString(cfg.TestPrefix))
	}
	n.ours = len(n.prefixes)
	for _, p := range cfg.Extra {
		if p == "" || len(p) > 255 || !validExtraPrefix(p) {
			return nil, fmt.Errorf("%w: extra prefix %q: want ASCII letters, digits and dots", ErrBadPrefix, p)
		}
		n.prefixes = append(n.prefixes, upperString(p))
	}
	for i := range n.prefixes {
		for j := 0; j < i; j++ {
			if n.prefixes[i] == n.prefixes[j] {
				return nil, fmt.Errorf("%w: prefix %q configured twice", ErrBadPrefix, n.prefixes[i])
			}
		}
	}
	return n, nil
}

// validOwnPrefix: dot-separated non-empty digit runs; the second run may start with T.
func validOwnPrefix(p string) bool {
	if p == "" || len(p) > 64 {
		return false
	}
	seg, segLen := 0, 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '.':
			if segLen == 0 {
				return false
			}
			seg++
			segLen = 0
		case '0' <= c && c <= '9':
			segLen++
		case (c == 'T' || c == 't') && seg == 1 && segLen == 0:
			// "T" alone is not a segment: a digit must follow.
			if i+1 >= len(p) || p[i+1] < '0' || p[i+1] > '9' {
				return false
			}
		default:
			return false
		}
	}
	return segLen > 0
}

func validExtraPrefix(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c != '.' && !isAlnumByte(c) {
			return false
		}
	}
	return true
}

func isAlnumByte(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

func isAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnumByte(s[i]) {
			return false
		}
	}
	return true
}

func upperString(s string) string {
	for i := 0; i < len(s); i++ {
		if ascii.Upper(s[i]) != s[i] {
			return string(appendUpper(make([]byte, 0, len(s)), s))
		}
	}
	return s
}

func appendUpper[T []byte | string](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, ascii.Upper(s[i]))
	}
	return dst
}

// Prefix returns the production prefix, upper case.
func (n *Namer) Prefix() string { return n.prefixes[0] }

// TestPrefix returns the test prefix, upper case, or "" if there is none.
func (n *Namer) TestPrefix() string {
	if n.ours > 1 {
		return n.prefixes[1]
	}
	return ""
}

// Svc returns the service segment as configured (for display, e.g. "svc").
func (n *Namer) Svc() string { return n.svc }

// Served reports whether prefix (ASCII case-insensitive) is the production, test
// or an extra prefix.
func (n *Namer) Served(prefix []byte) bool {
	for _, p := range n.prefixes {
		if ascii.EqualFold(prefix, p) {
			return true
		}
	}
	return false
}

// lookup returns the index in n.prefixes of an upper-case prefix, or -1.
func (n *Namer) lookup(prefix []byte) int {
	for i, p := range n.prefixes {
		if string(prefix) == p {
			return i
		}
	}
	return -1
}

// naPrefix is where a handle without '/' lives (docs/handle-protocol.md §2).
const naPrefix = "0.NA/"

// AppendKey appends the storage key of handle h to dst and returns the extended
// slice, with h's Form. The key is h with ASCII a–z folded to A–Z (non-ASCII is
// never folded); a handle without '/' becomes "0.NA/<H>"; for FormFull and
// FormShort the dashes inside ns and id are removed (docs/product.md §2).
//
// Errors: ErrEmpty, ErrTooLong (h, or the key of a handle without '/', longer
// than MaxHandleLen), *HandleError (ErrInvalidUTF8, ErrControl; offset
// in h), and *PrefixError (errors.Is ErrPrefixNotServed) when the prefix is not
// served; on error dst is returned with its original length. h is not retained.
// AppendKey allocates nothing when dst has room, except for a returned error.
// AppendKey is idempotent: the key of a key is itself, with the same Form.
func (n *Namer) AppendKey(dst, h []byte) ([]byte, Form, error) {
	if len(h) == 0 {
		return dst, FormOther, ErrEmpty
	}
	if len(h) > MaxHandleLen {
		return dst, FormOther, ErrTooLong
	}
	if at := controlAt(h); at >= 0 {
		return dst, FormOther, &HandleError{Offset: at, Byte: h[at], Err: ErrControl}
	}
	if at := invalidUTF8At(h); at >= 0 {
		return dst, FormOther, &HandleError{Offset: at, Byte: h[at], Err: ErrInvalidUTF8}
	}
	start := len(dst)
	slash := bytes.IndexByte(h, '/')
	if slash < 0 {
		// The key of a key must be itself, so the key too fits MaxHandleLen.
		if len(naPrefix)+len(h) > MaxHandleLen {
			return dst, FormOther, ErrTooLong
		}
		dst = append(dst, naPrefix...)
		slash = len(naPrefix) - 1
	}
	dst = appendUpper(dst, h)
	key := dst[start:]
	p := n.lookup(key[:slash])
	if p < 0 {
		prefix := naPrefix[:len(naPrefix)-1]
		if bytes.IndexByte(h, '/') >= 0 {
			prefix = string(h[:slash])
		}
		return dst[:start], FormOther, &PrefixError{Prefix: prefix}
	}
	if p >= n.ours {
		return dst, FormOther, nil
	}
	form, nsAt, _ := n.shape(key, slash)
	if form == FormOther {
		return dst, form, nil
	}
	// svc (if any) is alphanumeric, so every dash from ns on is in ns or id.
	w := start + nsAt
	for r := w; r < len(dst); r++ {
		if c := dst[r]; c != '-' {
			dst[w] = c
			w++
		}
	}
	return dst[:w], form, nil
}

// shape classifies a handle under one of our own prefixes (slash is the index of
// the '/' ending the prefix). For FormFull and FormShort it returns where ns
// starts and where id starts (after the '/' following ns). ns must be 1–16 ASCII
// letters or digits once dashes are ignored, and id must hold a byte other than a
// dash; comparisons are ASCII case-insensitive, so shape works on keys and on
// handles alike.
func (n *Namer) shape(h []byte, slash int) (form Form, nsAt, idAt int) {
	rest := h[slash+1:]
	e := bytes.IndexByte(rest, '/')
	if e < 0 {
		return FormOther, 0, 0
	}
	if ascii.EqualFold(rest[:e], n.svcKey) {
		nsAt = slash + 1 + e + 1
		rest = h[nsAt:]
		e = bytes.IndexByte(rest, '/')
		if e < 0 || !nsShape(rest[:e]) || !hasNonDash(rest[e+1:]) {
			return FormOther, 0, 0
		}
		return FormFull, nsAt, nsAt + e + 1
	}
	ns := rest[:e]
	if !nsShape(ns) || !hasNonDash(rest[e+1:]) || equalFoldNoDash(ns, n.svcKey) {
		return FormOther, 0, 0
	}
	return FormShort, slash + 1, slash + 1 + e + 1
}

// nsShape: 1–16 ASCII letters or digits, dashes ignored.
func nsShape(b []byte) bool {
	k := 0
	for _, c := range b {
		if c == '-' {
			continue
		}
		if !isAlnumByte(c) {
			return false
		}
		k++
	}
	return k >= 1 && k <= 16
}

func hasNonDash(b []byte) bool {
	for _, c := range b {
		if c != '-' {
			return true
		}
	}
	return false
}

// equalFoldNoDash compares b without its dashes to the upper-case ASCII s.
func equalFoldNoDash(b []byte, s string) bool {
	j := 0
	for _, c := range b {
		if c == '-' {
			continue
		}
		if j >= len(s) || ascii.Upper(c) != s[j] {
			return false
		}
		j++
	}
	return j == len(s)
}

// AppendAltKey appends the other form's key for a FormFull or FormShort key and
// returns the extended slice and true: for FormShort the full key (svc
// inserted), for FormFull the short key. For any other key it returns dst, false.
// key must come from AppendKey. Used for the lookup fallback and invalidation.
// It allocates nothing when dst has room.
func (n *Namer) AppendAltKey(dst, key []byte) ([]byte, bool) {
	prefix, ns, id, form := n.Split(key)
	switch form {
	case FormFull:
		if equalFoldNoDash(ns, n.svcKey) {
			// "<p>/SVC/SVC/x" has no short form: "<p>/SVC/x" is not one.
			return dst, false
		}
		dst = append(dst, prefix...)
	case FormShort:
		dst = append(dst, prefix...)
		dst = append(dst, '/')
		dst = append(dst, n.svcKey...)
	default:
		return dst, false
	}
	dst = append(dst, '/')
	dst = append(dst, ns...)
	dst = append(dst, '/')
	dst = append(dst, id...)
	return dst, true
}

// Key is AppendKey for strings.
func (n *Namer) Key(h string) (string, Form, error) {
	var buf [256]byte
	k, form, err := n.AppendKey(buf[:0], []byte(h))
	if err != nil {
		return "", form, err
	}
	return string(k), form, nil
}

// Split cuts a key (from AppendKey) into its parts. For FormFull and FormShort it
// returns the prefix, ns and id (id may hold '/'); for FormOther the prefix, nil,
// and everything after the first '/' (nil if there is none). The slices alias key.
func (n *Namer) Split(key []byte) (prefix, ns, id []byte, form Form) {
	slash := bytes.IndexByte(key, '/')
	if slash < 0 {
		return key, nil, nil, FormOther
	}
	prefix = key[:slash]
	ours := false
	for _, p := range n.prefixes[:n.ours] {
		if ascii.EqualFold(prefix, p) {
			ours = true
			break
		}
	}
	if ours {
		form, nsAt, idAt := n.shape(key, slash)
		if form != FormOther {
			return prefix, key[nsAt : idAt-1], key[idAt:], form
		}
	}
	return prefix, nil, key[slash+1:], FormOther
}

// Full returns the canonical display form "<PREFIX>/<svc>/<NS>/<ID>": prefix, ns
// and id upper case (ASCII), dashes as given, svc as configured.
func (n *Namer) Full(prefix, ns, id string) string {
	b := make([]byte, 0, len(prefix)+len(n.svc)+len(ns)+len(id)+3)
	b = appendUpper(b, prefix)
	b = append(b, '/')
	b = append(b, n.svc...)
	b = append(b, '/')
	b = appendUpper(b, ns)
	b = append(b, '/')
	b = appendUpper(b, id)
	return string(b)
}

// NamespaceKey returns the key prefix of namespace ns under prefix: the part
// every storage key of its identifiers begins with ("21.12345/SVC/NS/"), by
// which the indexes, the audit log, the feed and the statistics are kept.
func (n *Namer) NamespaceKey(prefix, ns string) (string, error) {
	probe, _, err := n.Key(n.Full(prefix, ns, "X"))
	if err != nil {
		return "", err
	}
	return probe[:len(probe)-1], nil
}

// NamespaceOf returns the namespace key prefix (NamespaceKey) of a full-form
// storage key under the production or the test prefix, aliasing key; nil for
// any other key (short or other forms, other prefixes).
func (n *Namer) NamespaceOf(key []byte) []byte {
	prefix, _, id, form := n.Split(key)
	if form != FormFull {
		return nil
	}
	if !bytes.EqualFold(prefix, []byte(n.Prefix())) && !bytes.EqualFold(prefix, []byte(n.TestPrefix())) {
		return nil
	}
	return key[:len(key)-len(id)]
}

// CheckNamespace is ValidNamespace that also refuses the service segment, which
// cannot be a namespace: "<prefix>/<svc>/<id>" would not be a short form.
func (n *Namer) CheckNamespace(ns string) error {
	if err := ValidNamespace(ns); err != nil {
		return err
	}
	if ns == n.svcKey {
		return fmt.Errorf("%w: %q is the service segment", ErrBadNamespace, ns)
	}
	return nil
}
