package resolver

import (
	"github.com/valyala/fasthttp"

	"pidnode/handlev"
)

// apiLinksetsPath is where each identifier's linkset lives
// (docs/handle-protocol.md §2.4): /api/linksets/{handle}.
const apiLinksetsPath = "/api/linksets/"

var (
	ctLinksetJSON = []byte("application/linkset+json")
	ctLinkset     = []byte("application/linkset")
	mtApplication = []byte("application")
	mtLinksetSub  = []byte("linkset")
	mtLinksetJSub = []byte("linkset+json")
)

// serveLinkset answers GET|HEAD /api/linksets/{handle} with the record's
// links (FAIR Signposting level 2, RFC 9264): application/linkset+json, or
// application/linkset when Accept ranks it higher. Unknown and reserved
// identifiers get the proxy's 404 page, like /{handle}; a tombstone's
// linkset is served, since its record still is. rawPath is the path after
// apiLinksetsPath.
func (s *Server) serveLinkset(ctx *fasthttp.RequestCtx, sc *scratch, rawPath []byte) {
	if !s.allowGet(ctx, sc) {
		return
	}
	var err error
	sc.handle, err = handlev.DecodePath(sc.handle[:0], rawPath)
	if err != nil {
		s.sendBadHandle(ctx, sc, handleProblem(err))
		return
	}
	e, _, ok := s.loadPage(ctx, sc)
	if !ok {
		return
	}
	if !e.Found || e.Public.Hidden() {
		s.sendNotFound(ctx, sc, sc.handle)
		return
	}
	v := viewOf(e)
	d := v.linksets(v.ext())
	tmpl := d.at(d.json)
	h := &ctx.Response.Header
	h.SetContentTypeBytes(ctLinksetJSON)
	if accept := ctx.Request.Header.PeekCanonical(hdrAccept); len(accept) > 0 {
		rs := sc.ranges[:parseAccept(&sc.ranges, accept)]
		if qFor(rs, mtApplication, mtLinksetSub) > qFor(rs, mtApplication, mtLinksetJSub) {
			tmpl = d.at(d.text)
			h.SetContentTypeBytes(ctLinkset)
		}
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	h.SetCanonical(hdrVary, valAccept)
	h.SetCanonical(hdrACAO, valStar)
	sc.base = s.appendBase(sc.base[:0], ctx)
	sc.out = appendExpanded(sc.out[:0], tmpl, sc.base, s.proxyURL)
	ctx.Response.ResetBody()
	_, _ = ctx.Write(sc.out)
}
