package resolver

import (
	"bytes"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// FAIR Signposting (docs/handle-protocol.md §2.3, §2.4): the links a record's
// extras collect (extBuilder.links) and how they are written, as Link header
// fields and as the two linkset documents of RFC 9264.

// Template markers: this resolver's base URL and the proxy URL.
const (
	markBase  = "\x00B"
	markProxy = "\x00P"
)

// Link targets the node writes; the handle's path follows the first three.
var (
	proxyPath       = []byte(markProxy + "/")
	basePath        = []byte(markBase + "/")
	handlesPath     = []byte(markBase + "/api/handles/")
	linksetsPath    = []byte(markBase + "/api/linksets/")
	spdxLicenses    = []byte("https://spdx.org/licenses/")
	schemaAboutPage = []byte("https://schema.org/AboutPage")
)

var (
	relCiteAs      = []byte("cite-as")
	relDescribedBy = []byte("describedby")
	relType        = []byte("type")
	relItem        = []byte("item")
	relLicense     = []byte("license")
	relLinkset     = []byte("linkset")
	mtJSON         = []byte("application/json")
	mtLinksetJSON  = []byte("application/linkset+json")
)

// signposting collects the FAIR Signposting level 1 links
// (docs/product.md §5): cite-as, describedby (the Handle JSON, then every
// location whose role is metadata), type, item (each variant), license, and
// the linkset.
func (b *extBuilder) signposting() {
	hp := b.v.handlePath
	b.links = append(b.links, linkEntry{href: b.auxOf(proxyPath, hp), rel: relCiteAs, ours: true})
	b.links = append(b.links, linkEntry{href: b.auxOf(handlesPath, hp), rel: relDescribedBy, typ: mtJSON, ours: true})
	for i := range b.locs {
		l := &b.locs[i]
		if l.href.n == 0 || l.legacy {
			continue
		}
		for _, a := range b.attrs[l.attrs[0]:l.attrs[1]] {
			if ascii.EqualFold(b.at(a.name), "role") && string(b.at(a.value)) == "metadata" {
				b.links = append(b.links, linkEntry{href: b.at(l.href), rel: relDescribedBy, typ: b.mediaTypeOf(l.typ, l.sub), ours: true})
				break
			}
		}
	}
	if b.cat != nil {
		b.links = append(b.links, linkEntry{href: b.cat, rel: relType, ours: true})
		if b.v.target != nil {
			b.links = append(b.links, linkEntry{href: schemaAboutPage, rel: relType, ours: true})
		}
	}
	for i := range b.vars {
		v := &b.vars[i]
		b.links = append(b.links, linkEntry{href: b.at(v.href), rel: relItem, typ: b.mediaTypeOf(v.typ, v.sub), ours: true})
	}
	if i := firstIndex(b.v.values, typeLicense); i >= 0 {
		if u := b.licenseURL(b.v.values[i].Data); u != nil {
			b.links = append(b.links, linkEntry{href: u, rel: relLicense, ours: true})
		}
	}
	if i := firstIndex(b.v.values, typeMetadataLicense); i >= 0 {
		b.mdLic = b.licenseURL(b.v.values[i].Data)
	}
	b.links = append(b.links, linkEntry{href: b.auxOf(linksetsPath, hp), rel: relLinkset, typ: mtLinksetJSON, ours: true})
	// Locations with a rel attribute are links of the record's own.
	for i := range b.locs {
		l := &b.locs[i]
		if l.href.n > 0 && l.rel.n > 0 {
			b.addRecordLink(b.at(l.href), b.at(l.rel), b.mediaTypeOf(l.typ, l.sub), nil)
		}
	}
}

// mediaTypeOf returns "type/subtype" in the aux arena, nil if there is none.
func (b *extBuilder) mediaTypeOf(typ, sub span) []byte {
	if typ.n == 0 {
		return nil
	}
	return b.auxOf(b.at(typ), slashBytes, b.at(sub))
}

var slashBytes = []byte("/")

// auxOf returns the concatenation of parts in the aux arena. Bytes once
// written there are never overwritten during a build, so earlier results
// stay valid when the arena grows.
func (b *extBuilder) auxOf(parts ...[]byte) []byte {
	start := len(b.aux)
	for _, p := range parts {
		b.aux = append(b.aux, p...)
	}
	return b.aux[start:len(b.aux):len(b.aux)]
}

// licenseURL returns, in the aux arena, the URL a license value names: an
// http(s) URL as the resolver would redirect to it, or an SPDX identifier as
// its spdx.org page; nil for anything else.
func (b *extBuilder) licenseURL(data []byte) []byte {
	t := handlev.TrimURLSpace(data)
	if ascii.HasPrefixFold(t, "http://") || ascii.HasPrefixFold(t, "https://") {
		start := len(b.aux)
		out, err := handlev.AppendTargetURL(b.aux, t)
		if err != nil {
			return nil
		}
		b.aux = out
		return out[start:len(out):len(out)]
	}
	if len(t) == 0 || len(t) > 64 {
		return nil
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+') {
			return nil
		}
	}
	return b.auxOf(spdxLicenses, t)
}

// addRecordLink adds a link of the record's own (a 10320/links value or a
// location with rel): every relation type of rel (space-separated) that is
// a registered name or an absolute http(s) URI, except those the node
// derives itself and allows once (cite-as, linkset).
func (b *extBuilder) addRecordLink(href, rel, typ, title []byte) {
	for f := range bytes.FieldsSeq(rel) {
		r := relType8288(f)
		if r == nil || bytes.Equal(r, relCiteAs) || bytes.Equal(r, relLinkset) {
			continue
		}
		if len(b.links) >= maxLinks+16 {
			return
		}
		b.links = append(b.links, linkEntry{href: href, rel: r, typ: typ, title: title})
	}
}

// relType8288 returns a relation type in its canonical form: a registered
// name (a letter, then letters, digits, '.' and '-', RFC 8288 §2.1.1) in
// lower case, or an extension type as an absolute http(s) URI in the form
// the resolver writes URLs; nil if it is neither.
func relType8288(r []byte) []byte {
	if len(r) == 0 || len(r) > 256 {
		return nil
	}
	if ascii.HasPrefixFold(r, "http://") || ascii.HasPrefixFold(r, "https://") {
		if u, err := handlev.AppendTargetURL(nil, r); err == nil {
			return u
		}
		return nil
	}
	out := make([]byte, len(r))
	for i, c := range r {
		c = ascii.Lower(c)
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return nil
		}
		out[i] = c
	}
	return out
}

// ---- 10320/links ----

// recordLinks reads a 10320/links value: links in the Link header syntax
// (RFC 8288 §3), separated by commas or line breaks. Each link needs an
// absolute http(s) target and a rel; type and title are kept when they are
// well-formed; a link with an anchor (another context) is skipped, as is
// anything malformed, up to the next link.
func (b *extBuilder) recordLinks(data []byte) {
	for _, l := range parseLinkValues(data, maxLinks) {
		href, err := handlev.AppendTargetURL(nil, l.target)
		if err != nil || l.anchor || len(l.rel) == 0 {
			continue
		}
		var typ []byte
		if len(l.typ) > 0 {
			if t, s, ok := parseMediaType(string(l.typ)); ok {
				typ = []byte(t + "/" + s)
			}
		}
		b.addRecordLink(href, l.rel, typ, printableTitle(l.title))
	}
}

// linkValue is one link-value as parseLinkValues reads it; slices point
// into the input or hold unescaped quoted strings.
type linkValue struct {
	target, rel, typ, title []byte
	anchor                  bool
}

// parseLinkValues reads at most max link-values of s: "<" target ">" then
// ";"-separated parameters (token, or token "=" token / quoted-string),
// separated by commas or line breaks. A malformed link-value is skipped up to
// the next separator outside angle brackets and quotes. It never panics.
func parseLinkValues(s []byte, max int) []linkValue {
	var out []linkValue
	i := 0
	for i < len(s) && len(out) < max {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
		if i >= len(s) {
			break
		}
		lv, next, ok := parseLinkValue(s, i)
		if ok {
			out = append(out, lv)
		}
		if next <= i {
			next = i + 1
		}
		i = next
	}
	return out
}

func parseLinkValue(s []byte, i int) (linkValue, int, bool) {
	var lv linkValue
	if s[i] != '<' {
		return lv, skipLink(s, i), false
	}
	end := bytes.IndexByte(s[i:], '>')
	if end < 0 {
		return lv, len(s), false
	}
	lv.target = s[i+1 : i+end]
	i += end + 1
	for {
		i = skipOWS(s, i)
		if i >= len(s) || s[i] == ',' || s[i] == '\n' || s[i] == '\r' {
			return lv, i, true
		}
		if s[i] != ';' {
			return lv, skipLink(s, i), false
		}
		i = skipOWS(s, i+1)
		n0 := i
		for i < len(s) && tokenByte[s[i]] {
			i++
		}
		name := s[n0:i]
		if len(name) == 0 {
			return lv, skipLink(s, i), false
		}
		i = skipOWS(s, i)
		var val []byte
		if i < len(s) && s[i] == '=' {
			i = skipOWS(s, i+1)
			if i < len(s) && s[i] == '"' {
				j := skipQuoted(s, i)
				if j > len(s) || s[j-1] != '"' || j-i < 2 {
					return lv, len(s), false
				}
				val = unquote(s[i+1 : j-1])
				i = j
			} else {
				v0 := i
				for i < len(s) && tokenByte[s[i]] {
					i++
				}
				val = s[v0:i]
				if len(val) == 0 {
					return lv, skipLink(s, i), false
				}
			}
		}
		switch {
		case ascii.EqualFold(name, "rel") && lv.rel == nil:
			lv.rel = val
		case ascii.EqualFold(name, "type") && lv.typ == nil:
			lv.typ = val
		case ascii.EqualFold(name, "title") && lv.title == nil:
			lv.title = val
		case ascii.EqualFold(name, "anchor"):
			lv.anchor = true
		}
	}
}

// skipLink returns the index of the separator ending the link-value h[i:]
// is inside, quoted strings skipped.
func skipLink(s []byte, i int) int {
	for i < len(s) && s[i] != ',' && s[i] != '\n' {
		if s[i] == '"' {
			i = skipQuoted(s, i)
			continue
		}
		i++
	}
	return i
}

// unquote removes quoted-pair backslashes.
func unquote(q []byte) []byte {
	if bytes.IndexByte(q, '\\') < 0 {
		return q
	}
	out := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		if q[i] == '\\' && i+1 < len(q) {
			i++
		}
		out = append(out, q[i])
	}
	return out
}

// printableTitle returns t if it is printable ASCII of at most 256 bytes
// (what a quoted-string can carry without an RFC 8187 title*), else nil.
func printableTitle(t []byte) []byte {
	if len(t) == 0 || len(t) > 256 {
		return nil
	}
	for _, c := range t {
		if c < 0x20 || c > 0x7e {
			return nil
		}
	}
	return t
}

// ---- rendering ----

// relOrder returns the relation types of the links in first-seen order (in
// b.rels).
func (b *extBuilder) relOrder() [][]byte {
	rels := b.rels[:0]
	defer func() { b.rels = rels }()
	for i := range b.links {
		seen := false
		for _, r := range rels {
			if bytes.Equal(r, b.links[i].rel) {
				seen = true
				break
			}
		}
		if !seen {
			rels = append(rels, b.links[i].rel)
		}
	}
	return rels
}

// renderLinkHeader writes one Link header field per relation type
// (RFC 8288 §3), fields separated by '\n'. When the fields would exceed
// maxLinkHeader, the item links and then the record's own links are left
// out (the linkset has them all).
func (b *extBuilder) renderLinkHeader() span {
	skipItems, skipOwn := false, false
	for {
		start := len(b.buf)
		for _, rel := range b.relOrder() {
			first := true
			for i := range b.links {
				l := &b.links[i]
				if !bytes.Equal(l.rel, rel) || skipItems && bytes.Equal(rel, relItem) || skipOwn && !l.ours {
					continue
				}
				if first {
					if len(b.buf) > start {
						b.buf = append(b.buf, '\n')
					}
					first = false
				} else {
					b.buf = append(b.buf, ", "...)
				}
				b.buf = appendLinkValue(b.buf, l, nil)
			}
		}
		if len(b.buf)-start <= maxLinkHeader || skipItems && skipOwn {
			return span{uint32(start), uint32(len(b.buf) - start)}
		}
		b.buf = b.buf[:start]
		if skipItems {
			skipOwn = true
		}
		skipItems = true
	}
}

// appendLinkValue writes `<href>; rel="rel"[; type="t"][; title="…"]`
// [; anchor="…"]. Every part is already checked: URLs are canonical (no
// '<', '>', '"' or space), rel and type are tokens or URLs, a title is
// printable ASCII whose '"' and '\' are escaped here.
func appendLinkValue(dst []byte, l *linkEntry, anchor []byte) []byte {
	dst = append(dst, '<')
	dst = append(dst, l.href...)
	dst = append(dst, `>; rel="`...)
	dst = append(dst, l.rel...)
	dst = append(dst, '"')
	if len(l.typ) > 0 {
		dst = append(dst, `; type="`...)
		dst = append(dst, l.typ...)
		dst = append(dst, '"')
	}
	if len(l.title) > 0 {
		dst = append(dst, `; title="`...)
		for _, c := range l.title {
			if c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
		dst = append(dst, '"')
	}
	if anchor != nil {
		dst = append(dst, `; anchor="`...)
		dst = append(dst, anchor...)
		dst = append(dst, '"')
	}
	return dst
}

// renderLinksetJSON writes the linkset in RFC 9264's JSON form: one context
// object anchored at this resolver's URL of the identifier with every link,
// and, when the record carries a metadata license, one anchored at the
// Handle JSON with that license.
func (b *extBuilder) renderLinksetJSON() span {
	start := len(b.buf)
	hp := b.v.handlePath
	b.buf = append(b.buf, `{"linkset":[{"anchor":"`+markBase+`/`...)
	b.buf = append(b.buf, hp...)
	b.buf = append(b.buf, '"')
	for _, rel := range b.relOrder() {
		if bytes.Equal(rel, relLinkset) {
			continue
		}
		b.buf = append(b.buf, ',')
		b.buf = handlev.AppendJSONString(b.buf, string(rel))
		b.buf = append(b.buf, ":["...)
		first := true
		for i := range b.links {
			l := &b.links[i]
			if !bytes.Equal(l.rel, rel) {
				continue
			}
			if !first {
				b.buf = append(b.buf, ',')
			}
			first = false
			b.buf = append(b.buf, `{"href":"`...)
			b.buf = append(b.buf, l.href...) // canonical or marked URL: nothing to escape
			b.buf = append(b.buf, '"')
			if len(l.typ) > 0 {
				b.buf = append(b.buf, `,"type":`...)
				b.buf = handlev.AppendJSONString(b.buf, string(l.typ))
			}
			if len(l.title) > 0 {
				b.buf = append(b.buf, `,"title":`...)
				b.buf = handlev.AppendJSONString(b.buf, string(l.title))
			}
			b.buf = append(b.buf, '}')
		}
		b.buf = append(b.buf, ']')
	}
	b.buf = append(b.buf, '}')
	if b.mdLic != nil {
		b.buf = append(b.buf, `,{"anchor":"`+markBase+`/api/handles/`...)
		b.buf = append(b.buf, hp...)
		b.buf = append(b.buf, `","license":[{"href":"`...)
		b.buf = append(b.buf, b.mdLic...)
		b.buf = append(b.buf, `"}]}`...)
	}
	b.buf = append(b.buf, "]}\n"...)
	return span{uint32(start), uint32(len(b.buf) - start)}
}

// renderLinksetText writes the linkset in RFC 9264's native form
// (application/linkset): the links as Link header link-values, each with its
// anchor, one per line.
func (b *extBuilder) renderLinksetText() span {
	start := len(b.buf)
	hp := b.v.handlePath
	anchor := b.auxOf(basePath, hp)
	first := true
	for _, rel := range b.relOrder() {
		if bytes.Equal(rel, relLinkset) {
			continue
		}
		for i := range b.links {
			if l := &b.links[i]; bytes.Equal(l.rel, rel) {
				if !first {
					b.buf = append(b.buf, ",\n"...)
				}
				first = false
				b.buf = appendLinkValue(b.buf, l, anchor)
			}
		}
	}
	if b.mdLic != nil {
		b.buf = append(b.buf, ",\n"...)
		l := linkEntry{href: b.mdLic, rel: relLicense}
		b.buf = appendLinkValue(b.buf, &l, b.auxOf(handlesPath, hp))
	}
	b.buf = append(b.buf, '\n')
	return span{uint32(start), uint32(len(b.buf) - start)}
}

// expandedLen is the length of tmpl with its markers replaced by a base of
// length base and a proxy URL of length proxy.
func expandedLen(tmpl []byte, base, proxy int) int {
	n := len(tmpl)
	for {
		i := bytes.IndexByte(tmpl, 0)
		if i < 0 || i+1 >= len(tmpl) {
			return n
		}
		if tmpl[i+1] == 'P' {
			n += proxy - 2
		} else {
			n += base - 2
		}
		tmpl = tmpl[i+2:]
	}
}

// appendExpanded appends a template with its markers replaced: base for
// markBase, proxy for markProxy. It allocates nothing when dst has room.
func appendExpanded(dst, tmpl, base []byte, proxy string) []byte {
	for {
		i := bytes.IndexByte(tmpl, 0)
		if i < 0 || i+1 >= len(tmpl) {
			return append(dst, tmpl...)
		}
		dst = append(dst, tmpl[:i]...)
		if tmpl[i+1] == 'P' {
			dst = append(dst, proxy...)
		} else {
			dst = append(dst, base...)
		}
		tmpl = tmpl[i+2:]
	}
}
