package resolver

import (
	"bytes"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// params are the query (and POST body) parameters the resolver understands
// (docs/handle-protocol.md §1.4, §2). Byte slices point into the request's scratch
// arena and live until the scratch is returned to its pool.
type params struct {
	noredirect   bool // ?noredirect or action=showvalues
	showurls     bool // action=showurls
	pretty       bool
	hasURLAppend bool
	hasCallback  bool
	urlappend    []byte
	callback     []byte
	types        [][]byte
	indexes      []int32
	locatt       [][]byte // ?locatt=name[:value], and role:metadata for action=metadata
}

func (p *params) reset() {
	*p = params{types: p.types[:0], indexes: p.indexes[:0], locatt: p.locatt[:0]}
}

// roleMetadata is the location filter ?action=metadata stands for.
var roleMetadata = []byte("role:metadata")

// filtered reports whether ?type or ?index restrict the values.
func (p *params) filtered() bool { return len(p.types) > 0 || len(p.indexes) > 0 }

// maxFilters bounds how many type and index parameters one request may carry;
// the header size limit bounds it already, this keeps matching linear in practice.
const maxFilters = 256

// parseQuery decodes the parameters of raw (a query string or an
// application/x-www-form-urlencoded body) into p. Pairs are separated by '&'
// and by ';' (docs/handle-protocol.md §2); keys and values are percent-decoded with
// '+' as a space. Unknown parameters are ignored. Decoded bytes are appended to
// arena, which must have spare capacity for len(raw) bytes so that the slices
// kept in p stay valid; the extended arena is returned.
//
// The only error is *ParamError for an index that is not an int32 or for too
// many filters. parseQuery allocates nothing when arena has room, p's slices
// have capacity, and there is no error.
func parseQuery(p *params, raw, arena []byte) ([]byte, error) {
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "&;")
		var pair []byte
		if i < 0 {
			pair, raw = raw, nil
		} else {
			pair, raw = raw[:i], raw[i+1:]
		}
		if len(pair) == 0 {
			continue
		}
		rawKey, rawVal := pair, []byte(nil)
		if eq := bytes.IndexByte(pair, '='); eq >= 0 {
			rawKey, rawVal = pair[:eq], pair[eq+1:]
		}
		var key, val []byte
		arena, key = unescapeQuery(arena, rawKey)
		arena, val = unescapeQuery(arena, rawVal)
		switch string(key) {
		case "noredirect":
			p.noredirect = parseBool(val)
		case "action":
			switch {
			case ascii.EqualFold(val, "showvalues"):
				p.noredirect = true
			case ascii.EqualFold(val, "showurls"):
				p.showurls = true
			case ascii.EqualFold(val, "metadata"):
				if len(p.locatt) >= maxFilters {
					return arena, &ParamError{Name: "action", Value: "(more than 256 filters)"}
				}
				p.locatt = append(p.locatt, roleMetadata)
			}
		case "locatt":
			if len(p.locatt) >= maxFilters {
				return arena, &ParamError{Name: "locatt", Value: "(more than 256 filters)"}
			}
			p.locatt = append(p.locatt, val)
		case "pretty":
			p.pretty = parseBool(val)
		case "urlappend":
			p.urlappend, p.hasURLAppend = val, true
		case "callback":
			p.callback, p.hasCallback = val, true
		case "type":
			if len(p.types)+len(p.indexes) >= maxFilters {
				return arena, &ParamError{Name: "type", Value: "(more than 256 filters)"}
			}
			p.types = append(p.types, val)
		case "index":
			n, ok := parseInt32(val)
			if !ok {
				return arena, &ParamError{Name: "index", Value: string(val)}
			}
			if len(p.types)+len(p.indexes) >= maxFilters {
				return arena, &ParamError{Name: "index", Value: "(more than 256 filters)"}
			}
			p.indexes = append(p.indexes, n)
		}
		// auth, cert, publicOnly and doNotRefer are accepted and have no effect:
		// every request here is anonymous, so values without public read are
		// never shown (cache.Entry.Public).
	}
	return arena, nil
}

// parseBool is the Handle API's boolean rule (docs/handle-protocol.md §1.4) for a
// parameter that is present: empty, "yes" or "true" (any case) is true,
// anything else false. An absent parameter is false; callers only call this for
// present ones.
func parseBool(v []byte) bool {
	return len(v) == 0 || ascii.EqualFold(v, "true") || ascii.EqualFold(v, "yes")
}

// parseInt32 parses an optionally signed decimal int32.
func parseInt32(b []byte) (int32, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	if n < -1<<31 || n > 1<<31-1 {
		return 0, false
	}
	return int32(n), true
}

// unescapeQuery appends the form-decoded s to arena and returns the arena and
// the decoded slice: "%XX" becomes one byte, '+' a space; a '%' not followed by
// two hex digits is kept as is.
func unescapeQuery(arena, s []byte) ([]byte, []byte) {
	start := len(arena)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '+':
			c = ' '
		case '%':
			if i+2 < len(s) {
				hi, ok1 := handlev.UnhexDigit(s[i+1])
				lo, ok2 := handlev.UnhexDigit(s[i+2])
				if ok1 && ok2 {
					c = hi<<4 | lo
					i += 2
				}
			}
		}
		arena = append(arena, c)
	}
	return arena, arena[start:len(arena):len(arena)]
}
