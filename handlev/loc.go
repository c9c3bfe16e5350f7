package handlev

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"

	"pidnode/internal/ascii"
)

// Value types the resolver reads besides URL (docs/handle-protocol.md §2.1).
const (
	// TypeLoc holds an XML list of locations (<locations><location href=…/>…).
	TypeLoc = "10320/loc"
	// TypeLinks holds typed links in the Link header syntax (RFC 8288).
	TypeLinks = "10320/links"
	// TypeHeaders holds response headers, one "Name: value" per line.
	TypeHeaders = "10320/headers"
)

// Limits of ParseLocations.
const (
	// MaxLocations is how many <location> elements are read; later ones are
	// ignored (the resolver selects among them with a 64-bit set).
	MaxLocations = 64
	// MaxLocBytes is the longest 10320/loc value read; a longer one is
	// malformed.
	MaxLocBytes = 64 << 10
)

// ErrLoc is wrapped by every *LocError: errors.Is(err, ErrLoc).
var ErrLoc = errors.New("handlev: malformed 10320/loc value")

// LocError says why a 10320/loc value is malformed, in words fit for a page.
type LocError struct{ Reason string }

func (e *LocError) Error() string { return "10320/loc: " + e.Reason }

// Unwrap returns ErrLoc.
func (e *LocError) Unwrap() error { return ErrLoc }

// LocAttr is one attribute of a <locations> or <location> element: its name
// (without namespace prefix) and its value with entities decoded.
type LocAttr struct{ Name, Value string }

// Location is one <location> element: its attributes in document order.
type Location struct{ Attrs []LocAttr }

// LocList is a parsed 10320/loc value.
type LocList struct {
	Attrs []LocAttr  // of the <locations> element (chooseby, http_sc …)
	Locs  []Location // the <location> children, at most MaxLocations
}

// Attr returns the value of the first attribute called name (ASCII
// case-insensitive) and whether there is one.
func (l *Location) Attr(name string) (string, bool) { return attrOf(l.Attrs, name) }

// Attr returns the value of the <locations> attribute called name.
func (l *LocList) Attr(name string) (string, bool) { return attrOf(l.Attrs, name) }

func attrOf(as []LocAttr, name string) (string, bool) {
	for i := range as {
		if len(as[i].Name) == len(name) && ascii.EqualFold(as[i].Name, name) {
			return as[i].Value, true
		}
	}
	return "", false
}

// ParseLocations reads a 10320/loc value (docs/handle-protocol.md §2.1): a
// well-formed XML document whose root element is <locations>, with
// <location> elements as its children. Other elements, text, comments and
// processing instructions are skipped; anything after </locations> is
// ignored. It returns an empty LocList and a *LocError when data is longer than MaxLocBytes, is
// not well-formed XML up to the root's end (only the five predefined entities
// and character references are known; an encoding other than UTF-8 is not
// read), or has another root element. Every string returned is its own
// memory. It never panics.
func ParseLocations(data []byte) (LocList, error) {
	l, err := parseLocations(data)
	if err != nil {
		return LocList{}, err
	}
	return l, nil
}

func parseLocations(data []byte) (LocList, error) {
	var l LocList
	if len(data) > MaxLocBytes {
		return l, &LocError{"longer than 65536 bytes"}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if depth == 0 {
				return l, &LocError{"no <locations> element"}
			}
			return l, &LocError{"ends before </locations>"}
		}
		if err != nil {
			return l, &LocError{"not well-formed XML (" + trimXMLError(err) + ")"}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if !ascii.EqualFold(t.Name.Local, "locations") {
					return l, &LocError{"the root element is <" + t.Name.Local + ">, not <locations>"}
				}
				l.Attrs = locAttrs(t.Attr)
			case depth == 2 && ascii.EqualFold(t.Name.Local, "location") && len(l.Locs) < MaxLocations:
				l.Locs = append(l.Locs, Location{Attrs: locAttrs(t.Attr)})
			}
		case xml.EndElement:
			if depth--; depth == 0 {
				return l, nil
			}
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return l, &LocError{"text outside <locations>"}
			}
		}
	}
}

// locAttrs keeps the attributes without a namespace prefix (so no xmlns
// declarations), in document order.
func locAttrs(as []xml.Attr) []LocAttr {
	out := make([]LocAttr, 0, len(as))
	for _, a := range as {
		if a.Name.Space == "" && a.Name.Local != "xmlns" {
			out = append(out, LocAttr{a.Name.Local, a.Value})
		}
	}
	return out
}

// trimXMLError shortens encoding/xml's messages ("XML syntax error on line
// 1: …") to what follows the colon.
func trimXMLError(err error) string {
	msg := err.Error()
	if i := bytes.IndexByte([]byte(msg), ':'); i >= 0 && i+2 <= len(msg) {
		msg = msg[i+1:]
		if len(msg) > 0 && msg[0] == ' ' {
			msg = msg[1:]
		}
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// AppendHrefTemplate appends tmpl with "{hdl}" replaced by handle encoded as
// a URL component (every byte but RFC 3986 unreserved characters
// percent-encoded, so '/' becomes %2F) and "{hdl:path}" by handle encoded for
// a URL path (slashes kept). Other text is copied as it is.
func AppendHrefTemplate(dst []byte, tmpl, handle string) []byte {
	for len(tmpl) > 0 {
		i := bytes.IndexByte([]byte(tmpl), '{')
		if i < 0 {
			return append(dst, tmpl...)
		}
		dst = append(dst, tmpl[:i]...)
		tmpl = tmpl[i:]
		switch {
		case len(tmpl) >= len("{hdl}") && tmpl[:len("{hdl}")] == "{hdl}":
			dst = appendComponent(dst, handle, false)
			tmpl = tmpl[len("{hdl}"):]
		case len(tmpl) >= len("{hdl:path}") && tmpl[:len("{hdl:path}")] == "{hdl:path}":
			dst = appendComponent(dst, handle, true)
			tmpl = tmpl[len("{hdl:path}"):]
		default:
			dst = append(dst, '{')
			tmpl = tmpl[1:]
		}
	}
	return dst
}

// appendComponent percent-encodes s keeping only unreserved characters (and
// '/' when path).
func appendComponent(dst []byte, s string, path bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || path && c == '/' {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', urlUpperHex[c>>4], urlUpperHex[c&15])
		}
	}
	return dst
}
