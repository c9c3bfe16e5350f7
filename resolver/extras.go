package resolver

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// extras is what a redirect, a landing answer and a linkset send beyond the
// default target (docs/handle-protocol.md §2.1–§2.4): the locations of a
// 10320/loc value, the representations a client may negotiate, the Link
// header fields and the linkset, and the headers of 10320/headers values.
// It is derived from the public values only (view.values, handlev.Public),
// once per cache entry, by the first request that needs it (view.ext), and is
// immutable afterwards except for logged.
//
// Everything the parts point to lives in buf; spans index it, so the whole
// is a handful of allocations whose sizes the entry is charged (bytes).
type extras struct {
	buf []byte

	// locs are the locations of the first public 10320/loc value that parses
	// and has a usable location, followed by the record's URL and URL.*
	// values (weight 0); nil when there is no such value, and then the
	// legacy target applies (view.target). attrs holds every location's
	// attributes, for ?locatt.
	locs      []location
	attrs     []locAttr
	chooseBy  [4]uint8 // chooseby methods in order (choose* constants)
	nChoose   uint8
	choosable uint64 // set of locations the default selection starts from
	country   bool   // some location has a country attribute
	listSC    uint16 // http_sc of <locations>, 0 if none

	// cands are the representations content negotiation chooses among:
	// locations with a media type, then the resource's representation
	// variants; candRef[i] is the index in locs (≥ 0) or -1-index in
	// variants. Empty when negotiation could not change the answer.
	cands    []mediaType
	candRef  []int16
	variants []variant
	varTTL   handlev.TTLType
	varTTLV  int32

	// link holds the Link header fields, separated by '\n'; linksetJSON and
	// linksetText the two linkset documents. All three are templates: the
	// byte 0 followed by 'B' stands for this resolver's base URL, followed by
	// 'P' for the proxy URL (appendExpanded), so that one rendering serves
	// every Host and configuration.
	link, linksetJSON, linksetText span

	// headers are the accepted 10320/headers lines; dropped names the ones
	// refused (comma-separated), logged once per entry (logged).
	headers []headerLine
	dropped span
	logged  atomic.Bool
}

// span is a part of extras.buf.
type span struct{ off, n uint32 }

func (x *extras) at(s span) []byte { return x.buf[s.off : s.off+s.n : s.off+s.n] }

type location struct {
	href     span // canonical URL; empty when unusable
	typ, sub span // media type (media-type, else ctype), lower case; empty if none
	country  span // lower case
	rel      span
	attrs    [2]uint16 // attrs[0] … attrs[1] in extras.attrs
	weight   float64
	score    float64
	status   uint16 // http_sc, 0 if none
	conneg   bool   // http_role="conneg": only content negotiation chooses it
	legacy   bool   // a URL or URL.* value
	ttlType  handlev.TTLType
	ttl      int32
}

type locAttr struct{ name, value span }

type variant struct {
	href     span
	typ, sub span
}

type headerLine struct{ name, value span }

// Selection methods of chooseby (docs/handle-protocol.md §2.1).
const (
	chooseLocatt = iota + 1
	chooseCountry
	chooseScore
	chooseWeighted
)

// defaultChooseBy is the order when <locations> has no chooseby.
var defaultChooseBy = [4]uint8{chooseLocatt, chooseCountry, chooseScore, chooseWeighted}

// maxVariants bounds the representation variants read (the pid4cat model
// allows 100); maxLinkHeader the Link header fields of one answer: beyond
// it the item links and the record's own links are left to the linkset.
const (
	maxVariants   = 100
	maxLinkHeader = 8 << 10
	maxHeaders    = 32
	maxHeaderLine = 4 << 10
	maxLinks      = 64
)

// The type names the extras read (docs/metadata-model.md "What the fronts read").
const (
	typeResource        = "RESOURCE"
	typeLicense         = "LICENSE"
	typeMetadataLicense = "METADATA_LICENSE"
)

// ext returns the view's extras, built on first use.
func (v *view) ext() *extras {
	v.extOnce.Do(v.buildExt)
	return &v.x
}

func (v *view) buildExt() {
	b := &extBuilder{v: v, x: &v.x}
	b.build()
	v.charge(v.x.bytes())
}

// bytes is what the extras hold beyond the view struct they live in.
func (x *extras) bytes() int64 {
	return cache.SliceSize(x.buf) +
		cache.AllocSize(cap(x.locs)*int(unsafe.Sizeof(location{}))) +
		cache.AllocSize(cap(x.attrs)*int(unsafe.Sizeof(locAttr{}))) +
		cache.AllocSize(cap(x.cands)*int(unsafe.Sizeof(mediaType{}))) +
		cache.AllocSize(cap(x.candRef)*2) +
		cache.AllocSize(cap(x.variants)*int(unsafe.Sizeof(variant{}))) +
		cache.AllocSize(cap(x.headers)*int(unsafe.Sizeof(headerLine{})))
}

// extBuilder builds a view's extras: parts are appended to a scratch buffer
// and recorded as spans, then the buffer is copied once into right-sized
// memory.
type extBuilder struct {
	v   *view
	x   *extras
	buf []byte

	locs    []location
	attrs   []locAttr
	vars    []variant
	headers []headerLine
	dropped []byte
	links   []linkEntry
	cands   []candSpan
	cat     string // schema.org type of the resource category, "" if none
	mdLic   []byte // metadata license URL
}

type candSpan struct {
	typ, sub span
	ref      int16
}

// linkEntry is one link before rendering: target (which may hold the base
// and proxy markers), relation type, media type and title.
type linkEntry struct {
	href, rel, typ, title []byte
	ours                  bool // signposting link the node derives itself
}

func (b *extBuilder) put(p []byte) span {
	s := span{uint32(len(b.buf)), uint32(len(p))}
	b.buf = append(b.buf, p...)
	return s
}

func (b *extBuilder) putString(p string) span {
	s := span{uint32(len(b.buf)), uint32(len(p))}
	b.buf = append(b.buf, p...)
	return s
}

func (b *extBuilder) at(s span) []byte { return b.buf[s.off : s.off+s.n] }

// build runs the steps over the public values; each value type is read from
// its first public value only, except URL values and 10320/links and
// 10320/headers values, which all count.
func (b *extBuilder) build() {
	vs := b.v.values
	b.buf = make([]byte, 0, 512)
	if i := firstIndex(vs, handlev.TypeLoc); i >= 0 {
		b.locations(&vs[i])
	}
	if i := firstIndex(vs, typeResource); i >= 0 {
		b.resource(&vs[i])
	}
	b.signposting()
	for i := range vs {
		switch {
		case ascii.EqualFold(vs[i].Type, handlev.TypeLinks):
			b.recordLinks(vs[i].Data)
		case ascii.EqualFold(vs[i].Type, handlev.TypeHeaders):
			b.recordHeaders(vs[i].Data)
		}
	}
	x := b.x
	x.link = b.renderLinkHeader()
	x.linksetJSON = b.renderLinksetJSON()
	x.linksetText = b.renderLinksetText()
	if len(b.dropped) > 0 {
		x.dropped = b.put(b.dropped)
	}
	x.buf = append(make([]byte, 0, len(b.buf)), b.buf...)
	if len(b.locs) > 0 {
		x.locs = append(make([]location, 0, len(b.locs)), b.locs...)
		x.attrs = append(make([]locAttr, 0, len(b.attrs)), b.attrs...)
	}
	if len(b.vars) > 0 {
		x.variants = append(make([]variant, 0, len(b.vars)), b.vars...)
	}
	if len(b.headers) > 0 {
		x.headers = append(make([]headerLine, 0, len(b.headers)), b.headers...)
	}
	if len(b.cands) > 0 {
		x.cands = make([]mediaType, len(b.cands))
		x.candRef = make([]int16, len(b.cands))
		for i, c := range b.cands {
			x.cands[i] = mediaType{x.at(c.typ), x.at(c.sub)}
			x.candRef[i] = c.ref
		}
	}
}

func firstIndex(vs []handlev.Value, typ string) int {
	for i := range vs {
		if len(vs[i].Type) == len(typ) && ascii.EqualFold(vs[i].Type, typ) {
			return i
		}
	}
	return -1
}

// ---- 10320/loc ----

// locations reads the 10320/loc value val into locations, then adds the
// record's URL values. A value that does not parse, or has no location the
// resolver could redirect to, leaves locs empty: the legacy target applies
// (docs/handle-protocol.md §2.1).
func (b *extBuilder) locations(val *handlev.Value) {
	list, err := handlev.ParseLocations(val.Data)
	if err != nil {
		return
	}
	x := b.x
	x.chooseBy, x.nChoose = parseChooseBy(list.Attrs)
	if sc, ok := list.Attr("http_sc"); ok {
		x.listSC = parseHTTPSC(sc)
	}
	var tmp []byte
	for i := range list.Locs {
		l := &list.Locs[i]
		loc := location{weight: 1, ttlType: val.TTLType, ttl: val.TTL}
		raw, ok := l.Attr("href_template")
		if ok {
			tmp = handlev.AppendHrefTemplate(tmp[:0], raw, b.v.handle)
		} else {
			raw, _ = l.Attr("href")
			tmp = append(tmp[:0], raw...)
		}
		start := len(b.buf)
		if out, err := handlev.AppendTargetURL(b.buf, tmp); err == nil {
			b.buf = out
			loc.href = span{uint32(start), uint32(len(out) - start)}
		}
		if w, ok := l.Attr("weight"); ok {
			loc.weight = parseWeight(w)
		}
		if sc, ok := l.Attr("score"); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(sc), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				loc.score = f
			}
		}
		if c, ok := l.Attr("country"); ok {
			loc.country = b.putString(strings.ToLower(strings.TrimSpace(c)))
			x.country = x.country || loc.country.n > 0
		}
		mt, ok := l.Attr("media-type")
		if !ok {
			mt, ok = l.Attr("ctype")
		}
		if ok {
			if t, s, ok := parseMediaType(mt); ok {
				loc.typ, loc.sub = b.putString(t), b.putString(s)
			}
		}
		if sc, ok := l.Attr("http_sc"); ok {
			loc.status = parseHTTPSC(sc)
		}
		if r, ok := l.Attr("http_role"); ok && ascii.EqualFold(strings.TrimSpace(r), "conneg") {
			loc.conneg = true
		}
		if r, ok := l.Attr("rel"); ok {
			loc.rel = b.putString(r)
		}
		loc.attrs[0] = uint16(len(b.attrs))
		for _, a := range l.Attrs {
			b.attrs = append(b.attrs, locAttr{b.putString(a.Name), b.putString(a.Value)})
		}
		loc.attrs[1] = uint16(len(b.attrs))
		b.locs = append(b.locs, loc)
	}
	for i := range b.locs {
		if l := &b.locs[i]; l.href.n > 0 && !l.conneg {
			x.choosable |= 1 << i
		}
	}
	b.locsForNegotiation()
	if x.choosable == 0 {
		// No location to select by default (conneg ones at most): the
		// legacy target applies, the typed locations stay for negotiation.
		x.country = false
		return
	}
	// The URL values join as legacy locations of weight 0.
	for _, v := range b.v.values {
		if len(b.locs) >= handlev.MaxLocations {
			break
		}
		if !handlev.IsURLType(v.Type) {
			continue
		}
		start := len(b.buf)
		out, err := handlev.AppendTargetURL(b.buf, v.Data)
		if err != nil {
			continue
		}
		b.buf = out
		n := len(b.locs)
		b.locs = append(b.locs, location{href: span{uint32(start), uint32(len(out) - start)}, legacy: true,
			ttlType: v.TTLType, ttl: v.TTL, attrs: [2]uint16{uint16(len(b.attrs)), uint16(len(b.attrs))}})
		x.choosable |= 1 << n
	}
}

// locsForNegotiation makes every usable location with a media type a
// negotiation candidate.
func (b *extBuilder) locsForNegotiation() {
	for i := range b.locs {
		l := &b.locs[i]
		if l.href.n > 0 && l.typ.n > 0 && negotiable(b.at(l.typ), b.at(l.sub)) {
			b.cands = append(b.cands, candSpan{l.typ, l.sub, int16(i)})
		}
	}
}

// negotiable reports whether a media type may be chosen by content
// negotiation: the Handle JSON types never are, since /api/handles serves
// them (docs/handle-protocol.md §2.2).
func negotiable(typ, sub []byte) bool {
	return !(string(typ) == "application" && (string(sub) == "json" || string(sub) == "vnd.handle+json"))
}

// parseChooseBy reads the chooseby attribute: method names separated by
// commas, unknown ones skipped; the default order when absent.
func parseChooseBy(attrs []handlev.LocAttr) ([4]uint8, uint8) {
	s, ok := (&handlev.LocList{Attrs: attrs}).Attr("chooseby")
	if !ok {
		return defaultChooseBy, 4
	}
	var out [4]uint8
	n := uint8(0)
	for f := range strings.SplitSeq(s, ",") {
		m := uint8(0)
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "locatt":
			m = chooseLocatt
		case "country":
			m = chooseCountry
		case "score":
			m = chooseScore
		case "weighted":
			m = chooseWeighted
		}
		if m == 0 || n == 4 || bytes.IndexByte(out[:n], m) >= 0 {
			continue
		}
		out[n] = m
		n++
	}
	return out, n
}

// parseHTTPSC reads an http_sc attribute: 301, 302, 303, 307 or 308, else 0.
func parseHTTPSC(s string) uint16 {
	switch strings.TrimSpace(s) {
	case "301":
		return 301
	case "302":
		return 302
	case "303":
		return 303
	case "307":
		return 307
	case "308":
		return 308
	}
	return 0
}

// parseWeight reads a weight: a finite number ≥ 0; anything else counts as
// the default 1.
func parseWeight(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 1
	}
	return f
}

// parseMediaType reads "type/subtype" (parameters after ';' dropped), each a
// token without wildcards, and returns both in lower case.
func parseMediaType(s string) (typ, sub string, ok bool) {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	typ, sub, ok = strings.Cut(strings.TrimSpace(s), "/")
	if !ok || !isToken(typ) || !isToken(sub) || typ == "*" || sub == "*" || len(typ)+len(sub) > 255 {
		return "", "", false
	}
	return strings.ToLower(typ), strings.ToLower(sub), true
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return len(s) > 0
}

// ---- the resource and signposting ----

// resourceJSON is what the extras read of a RESOURCE value
// (docs/metadata-model.md, resource_info).
type resourceJSON struct {
	Category string `json:"resource_category"`
	Variants []struct {
		URL       string `json:"variant_url"`
		MediaType string `json:"media_type"`
	} `json:"representation_variants"`
}

// schemaTypes maps a resource category to its schema.org type
// (docs/product.md §5).
var schemaTypes = map[string]string{
	"COLLECTION":   "https://schema.org/Collection",
	"SAMPLE":       "https://schema.org/Thing",
	"MATERIAL":     "https://schema.org/Thing",
	"DEVICE":       "https://schema.org/Product",
	"DATA_OBJECT":  "https://schema.org/Dataset",
	"DATA_SERVICE": "https://schema.org/Service",
}

// resource reads the resource category and the representation variants.
// A RESOURCE value that is not JSON of that shape gives neither.
func (b *extBuilder) resource(val *handlev.Value) {
	var r resourceJSON
	if json.Unmarshal(val.Data, &r) != nil {
		return
	}
	b.cat = schemaTypes[r.Category]
	b.x.varTTL, b.x.varTTLV = val.TTLType, val.TTL
	for _, rv := range r.Variants {
		if len(b.vars) >= maxVariants {
			break
		}
		typ, sub, ok := parseMediaType(rv.MediaType)
		if !ok {
			continue
		}
		start := len(b.buf)
		out, err := handlev.AppendTargetURL(b.buf, []byte(rv.URL))
		if err != nil {
			continue
		}
		b.buf = out
		v := variant{href: span{uint32(start), uint32(len(out) - start)}, typ: b.putString(typ), sub: b.putString(sub)}
		if negotiable([]byte(typ), []byte(sub)) {
			b.cands = append(b.cands, candSpan{v.typ, v.sub, int16(-1 - len(b.vars))})
		}
		b.vars = append(b.vars, v)
	}
}

// Template markers: this resolver's base URL and the proxy URL.
const (
	markBase  = "\x00B"
	markProxy = "\x00P"
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
	href := func(mark, path string) []byte {
		out := append([]byte(mark), path...)
		return append(out, hp...)
	}
	b.links = append(b.links, linkEntry{href: href(markProxy, "/"), rel: relCiteAs, ours: true})
	b.links = append(b.links, linkEntry{href: href(markBase, "/api/handles/"), rel: relDescribedBy, typ: mtJSON, ours: true})
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
	if b.cat != "" {
		b.links = append(b.links, linkEntry{href: []byte(b.cat), rel: relType, ours: true})
		if b.v.target != nil {
			b.links = append(b.links, linkEntry{href: []byte("https://schema.org/AboutPage"), rel: relType, ours: true})
		}
	}
	for i := range b.vars {
		v := &b.vars[i]
		b.links = append(b.links, linkEntry{href: b.at(v.href), rel: relItem, typ: b.mediaTypeOf(v.typ, v.sub), ours: true})
	}
	if i := firstIndex(b.v.values, typeLicense); i >= 0 {
		if u := licenseURL(b.v.values[i].Data); u != nil {
			b.links = append(b.links, linkEntry{href: u, rel: relLicense, ours: true})
		}
	}
	if i := firstIndex(b.v.values, typeMetadataLicense); i >= 0 {
		b.mdLic = licenseURL(b.v.values[i].Data)
	}
	b.links = append(b.links, linkEntry{href: href(markBase, "/api/linksets/"), rel: relLinkset, typ: mtLinksetJSON, ours: true})
	// Locations with a rel attribute are links of the record's own.
	for i := range b.locs {
		l := &b.locs[i]
		if l.href.n > 0 && l.rel.n > 0 {
			b.addRecordLink(b.at(l.href), b.at(l.rel), b.mediaTypeOf(l.typ, l.sub), nil)
		}
	}
}

// mediaTypeOf returns "type/subtype" as new memory, nil if there is none.
func (b *extBuilder) mediaTypeOf(typ, sub span) []byte {
	if typ.n == 0 {
		return nil
	}
	out := append([]byte(nil), b.at(typ)...)
	out = append(out, '/')
	return append(out, b.at(sub)...)
}

// licenseURL returns the URL a license value names: an http(s) URL as the
// resolver would redirect to it, or an SPDX identifier as its spdx.org page;
// nil for anything else.
func licenseURL(data []byte) []byte {
	t := handlev.TrimURLSpace(data)
	if ascii.HasPrefixFold(t, "http://") || ascii.HasPrefixFold(t, "https://") {
		if u, err := handlev.AppendTargetURL(nil, t); err == nil {
			return u
		}
		return nil
	}
	if len(t) == 0 || len(t) > 64 {
		return nil
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+') {
			return nil
		}
	}
	return append([]byte("https://spdx.org/licenses/"), t...)
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

// ---- 10320/headers ----

// deniedHeaders are the names a 10320/headers value may not set (compared
// in lower case; docs/handle-protocol.md §2.3): what the resolver sets itself
// or what could break the response, the connection or the client's security.
var deniedHeaders = map[string]bool{
	"location": true, "set-cookie": true, "set-cookie2": true, "transfer-encoding": true,
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true, "trailer": true,
	"upgrade": true, "proxy-authenticate": true, "proxy-authorization": true, "http2-settings": true,
	"date": true, "server": true, "expires": true, "link": true, "vary": true, "status": true,
	"refresh": true, "alt-svc": true, "strict-transport-security": true, "x-content-type-options": true,
	"x-frame-options": true, "clear-site-data": true, "www-authenticate": true, "host": true,
	"retry-after": true, "age": true,
}

// deniedHeaderPrefixes: every Content-* header (length, type, encoding,
// security policy …) and every CORS header.
var deniedHeaderPrefixes = []string{"content-", "access-control-"}

// recordHeaders reads a 10320/headers value: one "Name: value" per line
// (LF or CRLF). A line whose name is not a token, is denied, or whose value
// holds a control character (a CR or LF inside it, NUL …) or non-ASCII is
// dropped and its name noted for the log; so are lines beyond maxHeaders.
func (b *extBuilder) recordHeaders(data []byte) {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		value = bytes.Trim(value, " \t")
		lower := strings.ToLower(string(name))
		if !ok || !headerOK(lower, value) || len(line) > maxHeaderLine || len(b.headers) >= maxHeaders {
			b.drop(name)
			continue
		}
		b.headers = append(b.headers, headerLine{b.put(name), b.put(value)})
	}
}

func headerOK(lower string, value []byte) bool {
	if !isToken(lower) || deniedHeaders[lower] {
		return false
	}
	for _, p := range deniedHeaderPrefixes {
		if strings.HasPrefix(lower, p) {
			return false
		}
	}
	for _, c := range value {
		if c < 0x20 && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// drop notes a refused header name for the log (a name that is not a token
// is noted as such, so the log line stays one line).
func (b *extBuilder) drop(name []byte) {
	if len(b.dropped) > 0 {
		b.dropped = append(b.dropped, ", "...)
	}
	if isToken(string(name)) && len(name) <= 64 {
		b.dropped = append(b.dropped, name...)
	} else {
		b.dropped = append(b.dropped, "(malformed line)"...)
	}
}

// ---- rendering ----

// relOrder returns the relation types of the links in first-seen order.
func (b *extBuilder) relOrder() [][]byte {
	var rels [][]byte
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
	anchor := append([]byte(markBase+"/"), hp...)
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
		b.buf = appendLinkValue(b.buf, &l, append([]byte(markBase+"/api/handles/"), hp...))
	}
	b.buf = append(b.buf, '\n')
	return span{uint32(start), uint32(len(b.buf) - start)}
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
