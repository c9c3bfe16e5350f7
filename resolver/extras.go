package resolver

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
	"pidnode/resolver/page"
)

// extras is what a redirect, a landing answer and a linkset send beyond the
// default target (docs/handle-protocol.md §2.1–§2.4): the locations of a
// 10320/loc value, the representations a client may negotiate, the Link
// header fields and the linkset, and the headers of 10320/headers values.
// It is derived from the public values only (view.values, handlev.Public),
// once per cache entry, by the first request that needs it (view.ext), and is
// immutable once published except for logged and the parts built later
// (rendered, ls), each published once through its atomic pointer.
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
	// variants. Empty when negotiation could not change the answer.
	cands    []cand
	variants []variant
	varTTL   handlev.TTLType
	varTTLV  int32

	// link holds the Link header fields, separated by '\n', as a template:
	// the byte 0 followed by 'B' stands for this resolver's base URL,
	// followed by 'P' for the proxy URL (appendExpanded), so that one
	// rendering serves every Host and configuration.
	link span

	// headers are the accepted 10320/headers lines; dropped names the ones
	// refused (comma-separated), logged once per entry (logged).
	headers []headerLine
	dropped span
	logged  atomic.Bool

	// rendered is link with the base and proxy URLs of the first server
	// with a fixed base that sent it (Server.rendered).
	rendered atomic.Pointer[rendition]

	// ls holds the two linkset documents, built by the first linkset
	// request (view.linksets).
	ls atomic.Pointer[linksetDocs]
}

// rendition is the Link header fields with one server's base
// (Config.PublicURL) and proxy URL filled in, so that a hit sends them as
// they are.
type rendition struct {
	srv  *Server
	link []byte
	// lines are link's header fields, one per Link line (sub-slices of
	// link), so that a hit does not look for the line breaks again.
	lines [][]byte
}

var renditionStruct = cache.AllocSize(int(unsafe.Sizeof(rendition{})))

// rendered returns x's Link fields rendered for s, built on first use and
// charged to the entry; nil when s derives its base from each request's Host
// (no Config.PublicURL), x was rendered for another server sharing the
// cache, or the entry is not in the cache (so no later request would use
// the rendition): the caller then fills the templates in per request.
func (s *Server) rendered(v *view, x *extras) *rendition {
	if s.publicURL == "" {
		return nil
	}
	r := x.rendered.Load()
	if r == nil {
		if !v.entry.Resident() {
			return nil
		}
		base := []byte(s.publicURL)
		tmpl := x.at(x.link)
		r = &rendition{srv: s}
		r.link = appendExpanded(make([]byte, 0, expandedLen(tmpl, len(base), len(s.proxyURL))), tmpl, base, s.proxyURL)
		r.lines = splitLines(r.link)
		if x.rendered.CompareAndSwap(nil, r) {
			v.charge(renditionStruct + cache.SliceSize(r.link) + cache.AllocSize(cap(r.lines)*int(unsafe.Sizeof([]byte(nil)))))
		} else {
			r = x.rendered.Load()
		}
	}
	if r.srv != s {
		return nil
	}
	return r
}

// splitLines returns the lines of fields (separated by '\n'), each a
// sub-slice of fields; nil for none.
func splitLines(fields []byte) [][]byte {
	if len(fields) == 0 {
		return nil
	}
	lines := make([][]byte, 0, bytes.Count(fields, []byte{'\n'})+1)
	for f := fields; len(f) > 0; {
		line := f
		if i := bytes.IndexByte(f, '\n'); i >= 0 {
			line, f = f[:i:i], f[i+1:]
		} else {
			f = nil
		}
		lines = append(lines, line)
	}
	return lines
}

// span is a part of extras.buf.
type span struct{ off, n uint32 }

func (x *extras) at(s span) []byte { return x.buf[s.off : s.off+s.n : s.off+s.n] }

type location struct {
	href     span // canonical URL; empty when unusable
	body     span // the redirect page to href
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
	body     span // the redirect page to href
	typ, sub span
}

type headerLine struct{ name, value span }

// cand is a representation content negotiation may choose: its media type
// and ref, the index in extras.locs (≥ 0) or -1-index in extras.variants.
type cand struct {
	mediaType
	ref int16
}

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

// ext returns the view's extras, built by the first request that needs
// them. Concurrent first requests may each build; one set is published (and
// charged), the others are dropped. Published extras are never replaced.
func (v *view) ext() *extras {
	if x := v.xp.Load(); x != nil {
		return x
	}
	return v.buildExt()
}

// extrasStruct is the heap size of an extras.
var extrasStruct = cache.AllocSize(int(unsafe.Sizeof(extras{})))

func (v *view) buildExt() *extras {
	x := new(extras)
	b := builders.Get().(*extBuilder)
	b.reset(v, x)
	b.build()
	b.release()
	if v.xp.CompareAndSwap(nil, x) {
		v.charge(extrasStruct + x.bytes())
		return x
	}
	return v.xp.Load()
}

// linksetDocs are the two linkset documents of an entry, templates like
// extras.link: json and text are parts of buf.
type linksetDocs struct {
	buf        []byte
	json, text span
}

var linksetDocsStruct = cache.AllocSize(int(unsafe.Sizeof(linksetDocs{})))

func (d *linksetDocs) at(s span) []byte { return d.buf[s.off : s.off+s.n : s.off+s.n] }

// linksets returns the view's linkset documents, built by the first linkset
// request (most records are never asked for theirs) and published like the
// extras.
func (v *view) linksets(x *extras) *linksetDocs {
	if d := x.ls.Load(); d != nil {
		return d
	}
	// The links are collected again (the extras keep only the rendered Link
	// fields), into scratch extras: the published ones are read concurrently.
	b := builders.Get().(*extBuilder)
	b.reset(v, new(extras))
	b.collect(false)
	start := len(b.buf)
	js, ts := b.renderLinksetJSON(), b.renderLinksetText()
	d := &linksetDocs{buf: append(make([]byte, 0, len(b.buf)-start), b.buf[start:]...)}
	d.json = span{js.off - uint32(start), js.n}
	d.text = span{ts.off - uint32(start), ts.n}
	b.release()
	if x.ls.CompareAndSwap(nil, d) {
		v.charge(linksetDocsStruct + cache.SliceSize(d.buf))
		return d
	}
	return x.ls.Load()
}

// release returns b to the pool, unless a large record grew it.
func (b *extBuilder) release() {
	if cap(b.buf)+cap(b.aux) <= maxPooledBuilder {
		b.reset(nil, nil)
		builders.Put(b)
	}
}

// builders keeps extBuilders between builds: a build's working memory is
// several times what it keeps, and reusing it leaves less garbage between
// the entries' memory.
var builders = sync.Pool{New: func() any { return new(extBuilder) }}

// maxPooledBuilder: a builder grown past this by a large record is dropped.
const maxPooledBuilder = 256 << 10

// reset readies b to build v's extras into x (nil, nil: to be pooled,
// holding nothing of the last build but its buffers' capacity).
func (b *extBuilder) reset(v *view, x *extras) {
	*b = extBuilder{v: v, x: x, buf: b.buf[:0], aux: b.aux[:0], locs: b.locs[:0], attrs: b.attrs[:0], vars: b.vars[:0],
		headers: b.headers[:0], dropped: b.dropped[:0], links: clear0(b.links), rels: clear0(b.rels), cands: b.cands[:0],
		rvars: clear0(b.rvars[:cap(b.rvars)])}
}

// clear0 empties a slice of entries holding pointers, so that a pooled
// builder keeps nothing alive. The slices grow from empty by append, so
// nothing past len(s) was set since the last clear (rvars is passed whole).
func clear0[T any](s []T) []T {
	clear(s)
	return s[:0]
}

// bytes is what the extras hold beyond the view struct they live in.
func (x *extras) bytes() int64 {
	return cache.SliceSize(x.buf) +
		cache.AllocSize(cap(x.locs)*int(unsafe.Sizeof(location{}))) +
		cache.AllocSize(cap(x.attrs)*int(unsafe.Sizeof(locAttr{}))) +
		cache.AllocSize(cap(x.cands)*int(unsafe.Sizeof(cand{}))) +
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
	aux []byte // link targets and media types that only the rendering reads

	locs    []location
	attrs   []locAttr
	vars    []variant
	headers []headerLine
	dropped []byte
	links   []linkEntry
	rels    [][]byte
	cands   []candSpan
	rvars   []handlev.Variant // the derived variants, read into this
	cat     []byte            // schema.org type of the resource category, nil if none
	mdLic   []byte            // metadata license URL
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

// putTarget puts the form of raw the resolver redirects to
// (handlev.AppendTargetURL) and the redirect page to it; two empty spans if
// raw is not such a URL. Pre-rendered pages go out as they are
// (Response.SetBodyRaw), like the default target's.
func (b *extBuilder) putTarget(raw []byte) (href, body span) {
	start := len(b.buf)
	out, err := handlev.AppendTargetURL(b.buf, raw)
	if err != nil {
		return span{}, span{}
	}
	b.buf = out
	href = span{uint32(start), uint32(len(out) - start)}
	start = len(b.buf)
	b.buf = page.AppendRedirect(b.buf, b.at(href))
	return href, span{uint32(start), uint32(len(b.buf) - start)}
}

// collect runs the steps over the public values; each value type is read
// from its first public value only, except URL values and 10320/links and
// 10320/headers values (read when headers), which all count.
func (b *extBuilder) collect(headers bool) {
	vs := b.v.values
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
		case headers && ascii.EqualFold(vs[i].Type, handlev.TypeHeaders):
			b.recordHeaders(vs[i].Data)
		}
	}
}

// build collects and keeps what a redirect and a landing answer send.
func (b *extBuilder) build() {
	b.collect(true)
	x := b.x
	x.link = b.renderLinkHeader()
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
		x.cands = make([]cand, len(b.cands))
		for i, c := range b.cands {
			x.cands[i] = cand{mediaType{x.at(c.typ), x.at(c.sub)}, c.ref}
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
		loc.href, loc.body = b.putTarget(tmp)
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
		href, body := b.putTarget(v.Data)
		if href.n == 0 {
			continue
		}
		n := len(b.locs)
		b.locs = append(b.locs, location{href: href, body: body, legacy: true,
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
		m := chooseMethods[strings.ToLower(strings.TrimSpace(f))]
		if m == 0 || n == 4 || bytes.IndexByte(out[:n], m) >= 0 {
			continue
		}
		out[n] = m
		n++
	}
	return out, n
}

// chooseMethods are chooseby's method names.
var chooseMethods = map[string]uint8{"locatt": chooseLocatt, "country": chooseCountry, "score": chooseScore, "weighted": chooseWeighted}

// parseHTTPSC reads an http_sc attribute: 301, 302, 303, 307 or 308, else 0.
func parseHTTPSC(s string) uint16 {
	switch s = strings.TrimSpace(s); s {
	case "301", "302", "303", "307", "308":
		n, _ := strconv.Atoi(s)
		return uint16(n)
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

// schemaTypes maps a resource category to its schema.org type
// (docs/product.md §5).
var schemaTypes = map[string][]byte{
	"COLLECTION":   []byte("https://schema.org/Collection"),
	"SAMPLE":       []byte("https://schema.org/Thing"),
	"MATERIAL":     []byte("https://schema.org/Thing"),
	"DEVICE":       []byte("https://schema.org/Product"),
	"DATA_OBJECT":  []byte("https://schema.org/Dataset"),
	"DATA_SERVICE": []byte("https://schema.org/Service"),
}

// resource reads the resource category and the representation variants
// (handlev.ReadResource), from what the record's writer derived from val
// when it did (cache.Entry.Derived). A RESOURCE value that is not a JSON
// object gives neither.
func (b *extBuilder) resource(val *handlev.Value) {
	r, ok, known := b.v.entry.Derived.Resource(val, b.rvars)
	if !known {
		r, b.aux, ok = handlev.ReadResource(val.Data, b.aux)
	}
	if !ok {
		return
	}
	if cap(r.Variants) > cap(b.rvars) {
		b.rvars = r.Variants[:0]
	}
	b.cat = schemaTypes[string(r.Category)]
	b.x.varTTL, b.x.varTTLV = val.TTLType, val.TTL
	for _, rv := range r.Variants {
		if len(b.vars) >= maxVariants {
			break
		}
		typ, sub, ok := parseMediaType(string(rv.MediaType))
		if !ok {
			continue
		}
		href, body := b.putTarget(rv.URL)
		if href.n == 0 {
			continue
		}
		v := variant{href: href, body: body, typ: b.putString(typ), sub: b.putString(sub)}
		if negotiable(b.at(v.typ), b.at(v.sub)) {
			b.cands = append(b.cands, candSpan{v.typ, v.sub, int16(-1 - len(b.vars))})
		}
		b.vars = append(b.vars, v)
	}
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
