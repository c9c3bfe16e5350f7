package resolver

import (
	"bytes"
	"errors"
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
	"pidnode/resolver/page"
)

// maxAliasHops is how many HS_ALIAS links the resolver follows before it
// stops redirecting (docs/handle-protocol.md §2).
const maxAliasHops = 20

// serveHandle is the proxy path GET|HEAD /{handle} (docs/product.md §5,
// docs/handle-protocol.md §2). rawPath is the path without its leading '/'.
func (s *Server) serveHandle(ctx *fasthttp.RequestCtx, sc *scratch, rawPath, query, frag []byte) {
	if !s.allowGet(ctx, sc) {
		return
	}
	var err error
	sc.handle, err = handlev.DecodePath(sc.handle[:0], rawPath)
	if err != nil {
		s.sendBadHandle(ctx, sc, handleProblem(err))
		return
	}
	p := &sc.p
	if len(query) > 0 {
		sc.arena = growArena(sc.arena, len(query))
		if sc.arena, err = parseQuery(p, query, sc.arena); err != nil {
			s.sendBadParam(ctx, sc, err)
			return
		}
	}
	e, form, found := s.loadPage(ctx, sc)
	if !found {
		return
	}
	if !e.Found {
		if form != handlev.FormOther {
			_, ns, id, _ := s.namer.Split(sc.key)
			if looks, valid := handlev.ValidGenerated(ns, id); looks && !valid {
				s.sendMalformed(ctx, sc, sc.handle)
				return
			}
		}
		s.sendNotFound(ctx, sc, sc.handle)
		return
	}
	v := viewOf(e)
	// Reserved (SUBMITTED) identifiers are not public: not even ?noredirect
	// shows their values.
	if v.reserved() {
		sendFormParts(ctx, fasthttp.StatusNotFound, v.statusPage()) // page.AppendReserved: a message page
		return
	}
	e.CountHit(s.counter) // resolution statistics (no allocation)
	x := v.ext()
	filtered := p.filtered()
	if p.showurls {
		sendParts(ctx, fasthttp.StatusOK, v.urlsPage())
		s.setLinks(ctx, sc, v, x, false)
		return
	}
	if p.noredirect {
		if filtered {
			sc.out = page.AppendValues(sc.out[:0], v.record(), p.match)
			sendComposed(ctx, fasthttp.StatusOK, sc.out)
		} else {
			sendParts(ctx, fasthttp.StatusOK, v.valuesPage())
		}
		s.setLinks(ctx, sc, v, x, false)
		return
	}
	if v.gone() {
		sendParts(ctx, fasthttp.StatusGone, v.statusPage())
		s.setLinks(ctx, sc, v, x, false)
		return
	}
	if v.alias != nil && !filtered {
		if s.aliasRedirect(ctx, sc, v) {
			return
		}
	}
	extended := p.hasURLAppend || len(frag) > 0
	if !filtered {
		// Content negotiation, on requests that do not choose a location
		// themselves (docs/handle-protocol.md §2.2).
		if len(x.cands) > 0 && len(p.locatt) == 0 && !extended {
			if c := s.negotiated(ctx, sc, x); c >= 0 {
				s.sendNegotiated(ctx, sc, v, x, c)
				return
			}
		}
		// The locations of a 10320/loc value (docs/handle-protocol.md §2.1).
		if x.choosable != 0 {
			in := selectIn{locatt: p.locatt, geo: s.geo, rnd: s.rnd}
			if x.country && s.geo != nil {
				in.ip = remoteAddr(ctx)
			}
			i := x.choose(&in)
			l := &x.locs[i]
			loc, body := x.at(l.href), x.at(l.body)
			if extended {
				loc = s.appendToTarget(sc, loc, loc, p.urlappend, frag)
				sc.out = page.AppendRedirect(sc.out[:0], loc)
				body = nil
			}
			s.sendRedirect(ctx, sc, v, x, x.status(i), loc, body, l.ttlType, l.ttl)
			return
		}
		if !extended {
			if v.target == nil {
				sendParts(ctx, fasthttp.StatusOK, v.valuesPage())
				s.setLinks(ctx, sc, v, x, true)
				return
			}
			s.sendRedirect(ctx, sc, v, x, fasthttp.StatusFound, v.target, v.redirectBody, v.targetTTL, v.targetTTLVal)
			return
		}
	}
	// A choice restricted by ?index/?type, or a target extended by ?urlappend
	// or a fragment: composed per request.
	i := chooseTarget(v.values, p)
	ok := false
	if i >= 0 {
		sc.loc, ok = appendLocation(sc.loc[:0], v.values[i].Data)
		if ok && extended {
			sc.loc = s.appendToTarget(sc, sc.loc, v.values[i].Data, p.urlappend, frag)
		}
	}
	if !ok {
		if filtered {
			sc.out = page.AppendValues(sc.out[:0], v.record(), p.match)
			sendComposed(ctx, fasthttp.StatusOK, sc.out)
		} else {
			sendParts(ctx, fasthttp.StatusOK, v.valuesPage())
		}
		s.setLinks(ctx, sc, v, x, false)
		return
	}
	sc.out = page.AppendRedirect(sc.out[:0], sc.loc)
	s.sendRedirect(ctx, sc, v, x, fasthttp.StatusFound, sc.loc, nil, v.values[i].TTLType, v.values[i].TTL)
}

// negotiated reads the request's Accept header and returns the index in
// x.cands of the representation it asks for, -1 for the default answer: a
// browser always gets the default (docs/handle-protocol.md §2.2).
func (s *Server) negotiated(ctx *fasthttp.RequestCtx, sc *scratch, x *extras) int {
	accept := ctx.Request.Header.PeekCanonical(hdrAccept)
	if len(accept) == 0 {
		return -1
	}
	rs := sc.ranges[:parseAccept(&sc.ranges, accept)]
	if isBrowser(ctx.Request.Header.UserAgent(), rs) {
		return -1
	}
	return negotiate(rs, x.cands)
}

// sendNegotiated redirects to the negotiated representation c: 303 to a
// representation variant, a location's own status to a location.
func (s *Server) sendNegotiated(ctx *fasthttp.RequestCtx, sc *scratch, v *view, x *extras, c int) {
	if ref := int(x.cands[c].ref); ref >= 0 {
		l := &x.locs[ref]
		s.sendRedirect(ctx, sc, v, x, x.status(ref), x.at(l.href), x.at(l.body), l.ttlType, l.ttl)
		return
	}
	vr := &x.variants[-1-int(x.cands[c].ref)]
	s.sendRedirect(ctx, sc, v, x, fasthttp.StatusSeeOther, x.at(vr.href), x.at(vr.body), x.varTTL, x.varTTLV)
}

// remoteAddr is the client's address, IPv4-mapped addresses unmapped; the
// zero Addr when the connection has none (tests calling Handler directly).
func remoteAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	a, _ := netip.AddrFromSlice(ctx.RemoteIP())
	return a.Unmap()
}

// appendToTarget returns the Location for data + urlappend (+ "#" frag),
// appended verbatim and then made safe like any target (docs/handle-protocol.md §2),
// or base when that is not possible. If the result would name another host
// than base (data "https://a.org" with urlappend ".evil.org" or "@evil.org"),
// the urlappend is dropped: it extends a target, it never changes where the
// target points. The result lives in sc.out2 or is base.
func (s *Server) appendToTarget(sc *scratch, base, data, urlappend, frag []byte) []byte {
	raw := append(sc.tmp[:0], handlev.TrimURLSpace(data)...)
	raw = append(raw, urlappend...)
	if len(frag) > 0 {
		raw = append(raw, '#')
		raw = append(raw, frag...)
	}
	sc.tmp = raw
	full, ok := appendLocation(sc.out2[:0], raw)
	sc.out2 = full
	if !ok || !bytes.Equal(authorityOf(full), authorityOf(base)) {
		return base
	}
	return full
}

// sendRedirect sends the redirect (status: 302, or a location's http_sc, or
// 303 to a negotiated variant) with Location, Expires (now + the value's TTL,
// capped), the Link header fields and the record's own headers
// (10320/headers) and a tiny HTML body. body nil means the body was
// composed in sc.out.
func (s *Server) sendRedirect(ctx *fasthttp.RequestCtx, sc *scratch, v *view, x *extras, status int, loc, body []byte, ttlType handlev.TTLType, ttl int32) {
	h := &ctx.Response.Header
	ctx.SetStatusCode(status)
	h.SetCanonical(hdrLocation, loc)
	// fasthttp has read the clock for this request already; a direct call of
	// Handler (tests) has not.
	now := ctx.Time()
	if now.IsZero() {
		now = time.Now()
	}
	sc.date = s.dates.appendDate(sc.date[:0], expiresAt(now.Unix(), ttlType, ttl))
	h.SetCanonical(hdrExpires, sc.date)
	s.setLinks(ctx, sc, v, x, true)
	for i := range x.headers {
		h.AddBytesKV(x.at(x.headers[i].name), x.at(x.headers[i].value))
	}
	if x.dropped.n > 0 && !x.logged.Load() && x.logged.CompareAndSwap(false, true) {
		s.log.Warn("resolver: 10320/headers lines not sent", "handle", v.handle, "headers", string(x.at(x.dropped)))
	}
	// No Content-Security-Policy here: browsers do not render a redirect's
	// body, and every header value costs a scan on the hottest path.
	h.SetContentTypeBytes(ctHTML)
	h.SetCanonical(hdrNosniff, valNosniff)
	if body != nil {
		ctx.Response.SetBodyRaw(body)
	} else {
		ctx.Response.ResetBody()
		_, _ = ctx.Write(sc.out)
	}
}

// setLinks adds the Link header fields of the record (FAIR Signposting and
// the record's own links, docs/handle-protocol.md §2.3) and, for an answer
// that content negotiation could have changed (vary, and the record has
// negotiable representations), Vary: Accept. The fields are the
// entry's pre-rendered fields (Server.rendered), or its template with this
// request's base URL filled in.
func (s *Server) setLinks(ctx *fasthttp.RequestCtx, sc *scratch, v *view, x *extras, vary bool) {
	h := &ctx.Response.Header
	// hdrLink is already canonical: fasthttp need not validate and
	// normalise the name once per line (the values are still checked).
	normalizing := !h.DisableNormalizing()
	if r := s.rendered(v, x); r != nil {
		for _, line := range r.lines {
			h.AddBytesKV(hdrLink, line)
		}
	} else {
		sc.base = s.appendBase(sc.base[:0], ctx)
		sc.link = appendExpanded(sc.link[:0], x.at(x.link), sc.base, s.proxyURL)
		for f := sc.link; len(f) > 0; {
			line := f
			if i := bytes.IndexByte(f, '\n'); i >= 0 {
				line, f = f[:i], f[i+1:]
			} else {
				f = nil
			}
			h.AddBytesKV(hdrLink, line)
		}
	}
	if normalizing {
		h.EnableNormalizing()
	}
	if vary && len(x.cands) > 0 {
		h.SetCanonical(hdrVary, valAccept)
	}
}

// appendBase writes this resolver's base URL: Config.PublicURL, or else
// http(s)://{Host} with the Host header reduced to host-name characters
// ("localhost" if nothing usable is left).
func (s *Server) appendBase(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	if s.publicURL != "" {
		return append(dst, s.publicURL...)
	}
	if ctx.IsTLS() {
		dst = append(dst, "https://"...)
	} else {
		dst = append(dst, "http://"...)
	}
	host := ctx.Request.Header.Host()
	ok := len(host) > 0 && len(host) <= 255
	for _, c := range host {
		if !handlev.IsHostByte(c) && c != ':' && c != '[' && c != ']' {
			ok = false
			break
		}
	}
	if !ok {
		host = []byte("localhost")
	}
	return append(dst, host...)
}

// aliasRedirect answers 301 to this resolver's URL for the handle an HS_ALIAS
// value names, or to ProxyURL for a prefix served elsewhere. It follows the
// chain first and refuses (returns false, so the values page is shown) when it
// is longer than maxAliasHops or loops.
func (s *Server) aliasRedirect(ctx *fasthttp.RequestCtx, sc *scratch, v *view) bool {
	served := true
	cur := v
	for hop := 0; ; hop++ {
		if hop >= maxAliasHops {
			return false
		}
		key, _, err := s.namer.AppendKey(sc.key[:0], cur.alias)
		if err != nil {
			if hop > 0 {
				break
			}
			if !errors.Is(err, handlev.ErrPrefixNotServed) {
				return false
			}
			served = false
			break
		}
		sc.key = key
		var e *cache.Entry
		if e, err = s.cache.Get(key); err != nil || !e.Found || e.Public.Hidden() {
			break
		}
		if cur = viewOf(e); cur.alias == nil {
			break
		}
	}
	loc := sc.loc[:0]
	if served {
		loc = s.appendBase(loc, ctx)
	} else {
		loc = append(loc, s.proxyURL...)
	}
	loc = append(loc, '/')
	loc = appendPathEscaped(loc, v.alias)
	sc.loc = loc
	ctx.SetStatusCode(fasthttp.StatusMovedPermanently)
	ctx.Response.Header.SetCanonical(hdrLocation, loc)
	sc.out = page.AppendRedirect(sc.out[:0], loc)
	sendComposedKeepStatus(ctx, sc.out)
	return true
}

func sendComposedKeepStatus(ctx *fasthttp.RequestCtx, body []byte) {
	setPageHeaders(ctx)
	ctx.Response.ResetBody()
	_, _ = ctx.Write(body)
}

// growArena makes sure arena has spare capacity for n more bytes, so that
// slices parseQuery keeps stay valid.
func growArena(arena []byte, n int) []byte {
	if cap(arena)-len(arena) < n {
		na := make([]byte, len(arena), len(arena)+n+256)
		copy(na, arena)
		return na
	}
	return arena
}

// serveLookup is the home page form's target: GET /lookup?h=… redirects (302)
// to /{h} when h is a usable handle, else shows the home page with a message
// (400). A pasted resolver URL ("https://hdl.handle.net/21.T1/…") is reduced
// to its path.
func (s *Server) serveLookup(ctx *fasthttp.RequestCtx, sc *scratch, query []byte) {
	if !s.allowGet(ctx, sc) {
		return
	}
	sc.arena = growArena(sc.arena[:0], len(query))
	h, arena := queryValue(query, "h", sc.arena)
	sc.arena = arena
	h = bytes.TrimSpace(h)
	if ascii.HasPrefixFold(h, "http://") || ascii.HasPrefixFold(h, "https://") {
		rest := h[bytes.Index(h, []byte("://"))+3:]
		if i := bytes.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i+1:]
		} else {
			rest = nil
		}
		if i := bytes.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		h = rest
	}
	problem := ""
	if len(h) == 0 {
		problem = "Please enter an identifier."
	} else {
		sc.out2 = appendPathEscaped(sc.out2[:0], h)
		d, err := handlev.DecodePath(sc.handle[:0], sc.out2)
		sc.handle = d
		switch {
		case err != nil:
			problem = "That is not a valid identifier: " + handleProblem(err) + "."
		case !hasPrefixAndSuffix(d):
			problem = notAHandle
		}
	}
	if problem != "" {
		sc.out = page.AppendLookup(sc.out[:0], problem, h)
		sendFormPage(ctx, fasthttp.StatusBadRequest, sc.out)
		return
	}
	loc := s.appendBase(sc.link[:0], ctx)
	loc = append(loc, '/')
	loc = append(loc, sc.out2...)
	sc.link = loc
	ctx.SetStatusCode(fasthttp.StatusFound)
	ctx.Response.Header.SetCanonical(hdrLocation, loc)
	sc.out = page.AppendRedirect(sc.out[:0], loc)
	sendComposedKeepStatus(ctx, sc.out)
}

// notAHandle says what an identifier looks like, for text that has no '/'.
const notAHandle = "An identifier is a prefix and a suffix joined by a slash, PREFIX/SUFFIX, such as 21.T12345/ABC-123 (the prefixes served here are listed on the home page)."

// hasPrefixAndSuffix reports whether the decoded handle h has a non-empty
// prefix and suffix around its first '/', as every identifier does.
func hasPrefixAndSuffix(h []byte) bool {
	i := bytes.IndexByte(h, '/')
	return i > 0 && i < len(h)-1
}

// queryValue returns the form-decoded value of the first parameter called
// name in raw (pairs split on '&' and ';'), decoded into arena.
func queryValue(raw []byte, name string, arena []byte) ([]byte, []byte) {
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "&;")
		var pair []byte
		if i < 0 {
			pair, raw = raw, nil
		} else {
			pair, raw = raw[:i], raw[i+1:]
		}
		k, val, _ := bytes.Cut(pair, []byte{'='})
		var key []byte
		arena, key = unescapeQuery(arena, k)
		if string(key) == name {
			arena, val = unescapeQuery(arena, val)
			return val, arena
		}
	}
	return nil, arena
}

// loadPage keys sc.handle into sc.key and loads its cache entry for an
// answer in pages (the proxy, linksets), and answers the request itself when
// it cannot: an unknown prefix, a handle that has no key, a failed load.
func (s *Server) loadPage(ctx *fasthttp.RequestCtx, sc *scratch) (*cache.Entry, handlev.Form, bool) {
	key, form, err := s.namer.AppendKey(sc.key[:0], sc.handle)
	sc.key = key
	if err != nil {
		var pe *handlev.PrefixError
		switch {
		case !hasPrefixAndSuffix(sc.handle):
			// The namer reads a bare name as a prefix handle (0.NA/name):
			// "prefix 0.NA not found" would not tell a person what is wrong.
			s.sendMessage(ctx, sc, fasthttp.StatusNotFound, "Not an identifier", "<strong>", sc.handle, "</strong> is not an identifier. "+notAHandle)
		case errors.As(err, &pe):
			s.sendPrefixNotFound(ctx, sc, []byte(pe.Prefix))
		default:
			s.sendBadHandle(ctx, sc, handleProblem(err))
		}
		return nil, form, false
	}
	e, err := s.cache.Get(sc.key)
	if err != nil {
		s.log.Error("resolver: loading record", "key", string(sc.key), "err", err)
		s.sendInternalError(ctx, sc)
		return nil, form, false
	}
	return e, form, true
}
