package resolver

import (
	"pidnode/internal/ascii"
)

// Content negotiation (docs/handle-protocol.md §2.2): the Accept header is
// read into at most maxRanges media ranges in the request's scratch memory,
// without allocating, and the resolver picks the representation whose media
// type the client ranks highest, if it ranks it above the landing page.

// maxRanges bounds how many media ranges of one Accept header are read; later
// ones are ignored.
const maxRanges = 32

// mediaRange is one element of an Accept header: type and subtype (each "*"
// for a wildcard) as slices of the header, and its weight in thousandths.
type mediaRange struct {
	typ, sub []byte
	q        uint16 // 0 … 1000
}

// parseAccept reads the media ranges of an Accept header value into dst and
// returns how many it read (RFC 9110 §12.5.1): elements separated by commas,
// each "type/subtype" (or "type/*", "*/*") with parameters after ';'. The
// weight is the "q" parameter (0 to 1 with up to three decimals; 1 when
// absent); parameters after it (accept extensions) and other parameters are
// skipped, quoted strings included. An element that does not follow the
// grammar (no '/', a token with a forbidden byte, "*/subtype", a bad weight)
// is skipped, not the whole header. It allocates nothing.
func parseAccept(dst *[maxRanges]mediaRange, h []byte) int {
	n := 0
	for i := 0; i < len(h) && n < len(dst); {
		// One element: up to the next comma outside a quoted string.
		r, end, ok := parseRange(h, i)
		i = end + 1
		if ok {
			dst[n] = r
			n++
		}
	}
	return n
}

// parseRange reads the element starting at h[i:] and returns it, the index of
// the comma that ends it (len(h) at the end), and whether it is valid.
func parseRange(h []byte, i int) (mediaRange, int, bool) {
	r := mediaRange{q: 1000}
	ok := true
	i = skipOWS(h, i)
	t0 := i
	for i < len(h) && tokenByte[h[i]] {
		i++
	}
	r.typ = h[t0:i]
	if i >= len(h) || h[i] != '/' || len(r.typ) == 0 {
		ok = false
	} else {
		i++
		s0 := i
		for i < len(h) && tokenByte[h[i]] {
			i++
		}
		r.sub = h[s0:i]
		if len(r.sub) == 0 || isStar(r.typ) && !isStar(r.sub) {
			ok = false
		}
	}
	qSeen := false
	for {
		i = skipOWS(h, i)
		if i >= len(h) || h[i] == ',' {
			return r, i, ok
		}
		if h[i] != ';' {
			ok = false
			return r, skipElement(h, i), ok
		}
		i = skipOWS(h, i+1)
		n0 := i
		for i < len(h) && tokenByte[h[i]] {
			i++
		}
		name := h[n0:i]
		i = skipOWS(h, i)
		if i >= len(h) || h[i] != '=' {
			if len(name) == 0 {
				ok = false
			}
			continue // a parameter without value (only extensions may have one)
		}
		i = skipOWS(h, i+1)
		var val []byte
		if i < len(h) && h[i] == '"' {
			v0 := i
			i = skipQuoted(h, i)
			val = h[v0:i]
			if len(val) < 2 || val[len(val)-1] != '"' {
				ok = false
			}
		} else {
			v0 := i
			for i < len(h) && tokenByte[h[i]] {
				i++
			}
			val = h[v0:i]
		}
		if len(name) == 0 || len(val) == 0 {
			ok = false
		}
		if !qSeen && len(name) == 1 && (name[0] == 'q' || name[0] == 'Q') {
			qSeen = true
			q, qok := parseQ(val)
			if !qok {
				ok = false
			}
			r.q = q
		}
	}
}

// skipElement returns the index of the comma ending the element that h[i:]
// is inside, quoted strings skipped.
func skipElement(h []byte, i int) int {
	for i < len(h) && h[i] != ',' {
		if h[i] == '"' {
			i = skipQuoted(h, i)
			continue
		}
		i++
	}
	return i
}

// skipQuoted returns the index after the quoted string starting at h[i]
// ('"'), or len(h) if it is not closed.
func skipQuoted(h []byte, i int) int {
	for i++; i < len(h); i++ {
		switch h[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(h)
}

func skipOWS(h []byte, i int) int {
	for i < len(h) && (h[i] == ' ' || h[i] == '\t') {
		i++
	}
	return i
}

func isStar(b []byte) bool { return len(b) == 1 && b[0] == '*' }

// parseQ reads a qvalue: "0" [ "." 0*3DIGIT ] or "1" [ "." 0*3"0" ], in
// thousandths.
func parseQ(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || b[0] != '0' && b[0] != '1' {
		return 0, false
	}
	q := uint16(b[0]-'0') * 1000
	if len(b) == 1 {
		return q, true
	}
	if b[1] != '.' {
		return 0, false
	}
	scale := uint16(100)
	for _, c := range b[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		q += uint16(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}

// tokenByte marks RFC 9110 tchar.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// qFor returns the weight the ranges give a media type typ/sub (lower case):
// that of the most specific range that matches it (exact, then "type/*",
// then "*/*"; the first of equally specific ones), 0 when none does.
func qFor(rs []mediaRange, typ, sub []byte) uint16 {
	best, spec := uint16(0), -1
	for i := range rs {
		r := &rs[i]
		s := -1
		switch {
		case isStar(r.typ):
			s = 0
		case !ascii.EqualFold(r.typ, typ):
		case isStar(r.sub):
			s = 1
		case ascii.EqualFold(r.sub, sub):
			s = 2
		}
		if s > spec {
			best, spec = r.q, s
		}
	}
	return best
}

// htmlRanked reports whether the range the client ranks highest (the first
// with the greatest weight) is text/html: the mark of a browser.
func htmlRanked(rs []mediaRange) bool {
	top := -1
	for i := range rs {
		if top < 0 || rs[i].q > rs[top].q {
			top = i
		}
	}
	return top >= 0 && rs[top].q > 0 && ascii.EqualFold(rs[top].typ, "text") && ascii.EqualFold(rs[top].sub, "html")
}

// isBrowser reports whether a request comes from a web browser, which always
// gets the landing page (docs/handle-protocol.md §2.2): a User-Agent starting
// "Mozilla/" or "Opera/", or text/html ranked first in Accept.
func isBrowser(ua []byte, rs []mediaRange) bool {
	return hasPrefixBytes(ua, "Mozilla/") || hasPrefixBytes(ua, "Opera/") || htmlRanked(rs)
}

var (
	mtText = []byte("text")
	mtHTML = []byte("html")
)

// negotiate returns the index in cands of the representation to redirect
// to, -1 for the landing page: the candidate with the greatest weight in rs
// (the first of equal ones), if that weight is above the landing page's
// (text/html's). Candidates are lower-case "type/subtype".
func negotiate(rs []mediaRange, cands []cand) int {
	if len(rs) == 0 {
		return -1
	}
	landing := qFor(rs, mtText, mtHTML)
	best, bq := -1, landing
	for i := range cands {
		if q := qFor(rs, cands[i].typ, cands[i].sub); q > bq {
			best, bq = i, q
		}
	}
	return best
}

// mediaType is a representation's type and subtype, lower case.
type mediaType struct{ typ, sub []byte }
