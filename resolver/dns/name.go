package hdldns

import (
	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// Owner name → handle (docs/handle-protocol.md §4). Names arrive in miekg/dns
// presentation format: fully qualified, original case, with "\." and "\DDD"
// escapes for bytes a plain label cannot show.

// maxLabels bounds the labels under a zone we map (a 255-byte name has at most 127).
const maxLabels = 128

// findZone returns the zone qname falls in (the longest match) and the part of
// qname above it, without the separating dot ("" at the apex). It returns nil
// for names outside every zone. It does not allocate.
func (s *Server) findZone(qname string) (*zone, string) {
	for i := range s.zones {
		z := &s.zones[i]
		if len(qname) < len(z.name) || !ascii.EqualFold(qname[len(qname)-len(z.name):], z.name) {
			continue
		}
		if len(qname) == len(z.name) {
			return z, ""
		}
		dot := len(qname) - len(z.name) - 1
		if qname[dot] != '.' || escaped(qname, dot) || dot == 0 {
			continue
		}
		return z, qname[:dot]
	}
	return nil, ""
}

// escaped reports whether the byte at i is escaped by an odd run of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// appendHandle appends to dst the handle that sub (the labels of a name under a
// zone, presentation format, no trailing dot) names under prefix: prefix, then
// each label from the last to the first after a "/". Presentation escapes are
// undone, then hx-- labels are hex-unescaped. Errors: errBadName.
func appendHandle(dst []byte, prefix, sub string) ([]byte, error) {
	dst = append(dst, prefix...)
	if sub == "" {
		return dst, nil
	}
	// Walk the labels from the last one, finding separators backwards: a dot
	// separates unless an odd run of backslashes precedes it (`\\.` is an
	// escaped backslash and a separator; a \DDD escape never contains a dot).
	// No label table on the stack: this runs in miekg/dns's per-packet goroutine,
	// whose stack starts small.
	end, labels := len(sub), 0
	for end >= 0 {
		start := end - 1
		for start >= 0 && (sub[start] != '.' || escaped(sub, start)) {
			start--
		}
		label := sub[start+1 : end]
		if label == "" {
			return dst, errBadName
		}
		if labels++; labels > maxLabels {
			return dst, errBadName
		}
		dst = append(dst, '/')
		var err error
		if dst, err = appendLabel(dst, label); err != nil {
			return dst, err
		}
		end = start
		if start < 0 {
			break
		}
	}
	return dst, nil
}

// appendLabel appends one label, presentation escapes undone and, for an hx--
// label, hex-unescaped.
func appendLabel(dst []byte, label string) ([]byte, error) {
	p := len(dst)
	for i := 0; i < len(label); i++ {
		c := label[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(label) {
			return dst, errBadName
		}
		if isDigit(label[i+1]) {
			if i+3 >= len(label) || !isDigit(label[i+2]) || !isDigit(label[i+3]) {
				return dst, errBadName
			}
			v := int(label[i+1]-'0')*100 + int(label[i+2]-'0')*10 + int(label[i+3]-'0')
			if v > 255 {
				return dst, errBadName
			}
			dst = append(dst, byte(v))
			i += 3
			continue
		}
		dst = append(dst, label[i+1])
		i++
	}
	b := dst[p:]
	if len(b) < 4 || ascii.Lower(b[0]) != 'h' || ascii.Lower(b[1]) != 'x' || b[2] != '-' || b[3] != '-' {
		return dst, nil
	}
	// hx-- label: "-HH" is the byte 0xHH, every other byte is itself. Decoding
	// in place is safe: the output never outruns the input.
	w := p
	for i := 4; i < len(b); i++ {
		c := b[i]
		if c == '-' {
			if i+2 >= len(b) {
				return dst, errBadName
			}
			hi, ok1 := handlev.UnhexDigit(b[i+1])
			lo, ok2 := handlev.UnhexDigit(b[i+2])
			if !ok1 || !ok2 {
				return dst, errBadName
			}
			c = hi<<4 | lo
			i += 2
		}
		dst[w] = c
		w++
	}
	return dst[:w], nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
