package handlev

import (
	"crypto/rand"
	"fmt"
	"io"

	"pidnode/internal/ascii"
)

// crockford is Crockford's base32 alphabet: digits and upper-case letters
// without I, L, O and U (no look-alikes, no accidental words).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// checkAlphabet is the alphabet of ISO 7064 MOD 37,36 (docs/product.md §2): the check
// character may be any of these 36, not only a Crockford one.
const checkAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// Generated ids and namespaces (docs/product.md §2).
const (
	// GeneratedLen is the number of random characters in a generated id.
	GeneratedLen = 8
	// NamespaceLen is the length of a random namespace from NewNamespace.
	NamespaceLen = 3
	// MaxNamespaceLen is the longest namespace ValidNamespace accepts.
	MaxNamespaceLen = 16
	// MaxCustomIDLen is the longest custom id ValidCustomID accepts.
	MaxCustomIDLen = 36
)

// Mint returns a new generated id for namespace ns: 8 random Crockford base32
// characters and a check character, written "XXXX-XXXX-C". The check character is
// CheckChar(NS + XXXXXXXX) with ns upper-cased. rnd is the randomness source (nil
// means crypto/rand.Reader). ns must satisfy ValidNamespace after ASCII upper-casing.
// Mint does not know which ids exist: the caller checks for a collision inside
// its write transaction.
func Mint(ns string, rnd io.Reader) (string, error) {
	ns = upperString(ns)
	if err := ValidNamespace(ns); err != nil {
		return "", err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	var r [GeneratedLen]byte
	if _, err := io.ReadFull(rnd, r[:]); err != nil {
		return "", fmt.Errorf("handlev: mint: %w", err)
	}
	var c check3736
	for _, b := range []byte(ns) {
		c.add(checkValue(b))
	}
	var buf [GeneratedLen + 3]byte
	out := buf[:0]
	for i, b := range r {
		if i == 4 {
			out = append(out, '-')
		}
		ch := crockford[b&31] // 256 is a multiple of 32: no bias
		c.add(checkValue(ch))
		out = append(out, ch)
	}
	out = append(out, '-', c.char())
	return string(out), nil
}

// check3736 is the running state of ISO 7064 MOD 37,36 (pure hybrid system,
// M = 36): p starts at M; for each character value v, s = (p + v) mod M with 0
// read as M, then p = 2s mod (M+1). The check value makes the final step give 1:
// (M + 1 - p) mod M.
type check3736 struct{ p int }

func (c *check3736) add(v int) {
	if c.p == 0 {
		c.p = 36
	}
	s := (c.p + v) % 36
	if s == 0 {
		s = 36
	}
	c.p = s * 2 % 37
}

func (c *check3736) char() byte {
	p := c.p
	if p == 0 {
		p = 36
	}
	return checkAlphabet[(37-p)%36]
}

// checkValue maps 0-9, A-Z, a-z to 0..35, -1 otherwise.
func checkValue(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'A' <= b && b <= 'Z':
		return int(b-'A') + 10
	case 'a' <= b && b <= 'z':
		return int(b-'a') + 10
	}
	return -1
}

// crockfordValue reports whether b (either case) is in the Crockford alphabet.
func isCrockford(b byte) bool {
	switch ascii.Upper(b) {
	case 'I', 'L', 'O', 'U':
		return false
	}
	return checkValue(b) >= 0
}

// CheckChar returns the ISO 7064 MOD 37,36 check character (one of 0-9A-Z) of s.
// Letters count in either case and dashes are skipped, so CheckChar(ns+id) works
// on ids as written. Any other byte makes s uncheckable: CheckChar returns 0.
// Vectors (docs/product.md §2): CheckChar("TBR") == '1', CheckChar("B3739U6CR") == 'K'.
func CheckChar(s string) byte {
	var c check3736
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			continue
		}
		v := checkValue(s[i])
		if v < 0 {
			return 0
		}
		c.add(v)
	}
	return c.char()
}

// ValidGenerated reports whether id looks like a generated id and, if so, whether
// its check character is right for namespace ns. Dashes in ns and id are ignored
// and letters count in either case. looksGenerated: 9 characters, the first 8 of
// the Crockford alphabet and the last of 0-9A-Z. valid: looksGenerated, ns is
// letters and digits, and the last character is CheckChar(ns + first 8).
// It allocates nothing.
func ValidGenerated(ns, id []byte) (looksGenerated, valid bool) {
	k := 0
	var last byte
	for _, b := range id {
		if b == '-' {
			continue
		}
		switch {
		case k < GeneratedLen && !isCrockford(b):
			return false, false
		case k == GeneratedLen && checkValue(b) < 0:
			return false, false
		case k > GeneratedLen:
			return false, false
		}
		last = b
		k++
	}
	if k != GeneratedLen+1 {
		return false, false
	}
	var c check3736
	for _, b := range ns {
		if b == '-' {
			continue
		}
		v := checkValue(b)
		if v < 0 {
			return true, false
		}
		c.add(v)
	}
	k = 0
	for _, b := range id {
		if b == '-' {
			continue
		}
		if k == GeneratedLen {
			break
		}
		c.add(checkValue(b))
		k++
	}
	return true, c.char() == ascii.Upper(last)
}

// NewNamespace returns a random namespace of NamespaceLen Crockford base32
// characters (docs/product.md §2). rnd nil means crypto/rand.Reader. The caller checks it is
// unused and not the service segment (Namer.CheckNamespace).
func NewNamespace(rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var r [NamespaceLen]byte
	if _, err := io.ReadFull(rnd, r[:]); err != nil {
		return "", fmt.Errorf("handlev: new namespace: %w", err)
	}
	for i, b := range r {
		r[i] = crockford[b&31]
	}
	return string(r[:]), nil
}

// ValidNamespace checks a namespace in its canonical form: 1–16 characters of
// [0-9A-Z], upper case, no dash (docs/product.md §2). Callers upper-case operator input first.
// Errors wrap ErrBadNamespace.
func ValidNamespace(ns string) error {
	if ns == "" || len(ns) > MaxNamespaceLen {
		return fmt.Errorf("%w: %q: want 1–%d characters", ErrBadNamespace, ns, MaxNamespaceLen)
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z') {
			return fmt.Errorf("%w: %q: character %q at %d: want 0-9 or A-Z", ErrBadNamespace, ns, c, i)
		}
	}
	return nil
}

// ValidCustomID checks a custom id (docs/product.md §2): an ASCII letter or digit first, then
// letters, digits, '.', '/' and '-', at most 36 characters, no "//", no trailing
// '/' or '.'. It also refuses "." and ".." segments ("a/../b"): DecodePath refuses
// them, so such an id could never be resolved over HTTP. Errors wrap ErrBadCustomID.
func ValidCustomID(id string) error {
	if id == "" || len(id) > MaxCustomIDLen {
		return fmt.Errorf("%w: %q must be 1 to %d characters long", ErrBadCustomID, id, MaxCustomIDLen)
	}
	if !isAlnumByte(id[0]) {
		return fmt.Errorf("%w: %q must start with a letter or a digit", ErrBadCustomID, id)
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if !isAlnumByte(c) && c != '.' && c != '/' && c != '-' {
			return fmt.Errorf("%w: %q may hold only letters A to Z, digits, dots, slashes and hyphens, not %q (character %d)", ErrBadCustomID, id, c, i+1)
		}
		if c == '/' && id[i-1] == '/' {
			return fmt.Errorf("%w: %q must not hold two slashes in a row (character %d)", ErrBadCustomID, id, i)
		}
	}
	if c := id[len(id)-1]; c == '/' || c == '.' {
		return fmt.Errorf("%w: %q must not end with %q", ErrBadCustomID, id, c)
	}
	if at := dotSegment([]byte(id)); at >= 0 {
		return fmt.Errorf("%w: %q must not hold a part of only dots between slashes (character %d)", ErrBadCustomID, id, at+1)
	}
	return nil
}
