package resolver

import (
	"errors"

	"github.com/valyala/fasthttp"

	"pidnode/handlev"
	"pidnode/resolver/page"
)

// Header names and values, pre-made so that setting them allocates nothing
// (ResponseHeader.SetCanonical copies into the response's reused buffers).
var (
	ctHTML = []byte("text/html; charset=utf-8")
	ctText = []byte("text/plain; charset=utf-8")
	ctJSON = []byte("application/json;charset=UTF-8")
	ctJS   = []byte("application/javascript")
	ctCSS  = []byte("text/css; charset=utf-8")

	hdrLocation = []byte("Location")
	hdrExpires  = []byte("Expires")
	hdrLink     = []byte("Link")
	hdrAllow    = []byte("Allow")
	hdrNosniff  = []byte("X-Content-Type-Options")
	hdrCSP      = []byte("Content-Security-Policy")
	hdrACAO     = []byte("Access-Control-Allow-Origin")
	hdrACAM     = []byte("Access-Control-Allow-Methods")
	hdrACAH     = []byte("Access-Control-Allow-Headers")
	hdrACMA     = []byte("Access-Control-Max-Age")
	hdrCC       = []byte("Cache-Control")
	hdrVary     = []byte("Vary")
	hdrAccept   = []byte("Accept")

	valNosniff = []byte("nosniff")
	valCSP     = []byte("default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	// valCSPForm is valCSP for the pages that carry the lookup form (the home
	// page and the message pages). Chromium checks form-action against every
	// redirect that follows a form submission, and the lookup's chain ends at
	// the identifier's landing page, on any site: 'self' alone would block
	// every identifier whose landing page is elsewhere. Only http: and https:
	// are added (no javascript: or data:), and only on these pages, which hold
	// no secret and show user text only escaped; every other directive stays.
	valCSPForm   = []byte("default-src 'none'; style-src 'self'; form-action 'self' http: https:; base-uri 'none'; frame-ancestors 'none'")
	valStar      = []byte("*")
	valAllowGet  = []byte("GET, HEAD")
	valAllowAPI  = []byte("GET, HEAD, POST, OPTIONS")
	valMaxAge    = []byte("86400")
	valImmutable = []byte("public, max-age=31536000, immutable")
	valAccept    = []byte("Accept")
)

// setPageHeaders sets the headers every HTML response carries.
func setPageHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.SetContentTypeBytes(ctHTML)
	h.SetCanonical(hdrNosniff, valNosniff)
	h.SetCanonical(hdrCSP, valCSP)
}

// setFormPageHeaders sets the headers of a page that carries the lookup form
// (page.AppendHome, page.AppendMessage, page.AppendLookup,
// page.AppendReserved): those of every page, with valCSPForm.
func setFormPageHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.SetContentTypeBytes(ctHTML)
	h.SetCanonical(hdrNosniff, valNosniff)
	h.SetCanonical(hdrCSP, valCSPForm)
}

// sendPage sends a pre-rendered (immutable, shared) HTML page that carries
// the lookup form (the home page) without copying it.
func sendPage(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	setFormPageHeaders(ctx)
	ctx.Response.SetBodyRaw(body)
}

// sendParts sends a pre-rendered page: the shared parts and the page's own,
// written into the response's pooled body buffer (no allocation).
func sendParts(ctx *fasthttp.RequestCtx, status int, p page.Page) {
	ctx.SetStatusCode(status)
	setPageHeaders(ctx)
	writeParts(ctx, p)
}

// sendFormParts is sendParts for a page that carries the lookup form (the
// reserved page).
func sendFormParts(ctx *fasthttp.RequestCtx, status int, p page.Page) {
	ctx.SetStatusCode(status)
	setFormPageHeaders(ctx)
	writeParts(ctx, p)
}

func writeParts(ctx *fasthttp.RequestCtx, p page.Page) {
	ctx.Response.ResetBody()
	_, _ = p.WriteTo(ctx)
}

// sendComposed sends an HTML page built in scratch memory: it is copied into
// the response's own (pooled) body buffer.
func sendComposed(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	setPageHeaders(ctx)
	ctx.Response.ResetBody()
	_, _ = ctx.Write(body)
}

// sendFormPage is sendComposed for a page that carries the lookup form.
func sendFormPage(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	setFormPageHeaders(ctx)
	ctx.Response.ResetBody()
	_, _ = ctx.Write(body)
}

// sendMessage sends a page with a title and one paragraph: before (trusted
// HTML), subject (escaped), after (trusted HTML), and the lookup form.
func (s *Server) sendMessage(ctx *fasthttp.RequestCtx, sc *scratch, status int, title, before string, subject []byte, after string) {
	sc.out = page.AppendMessage(sc.out[:0], title, before, subject, after)
	sendFormPage(ctx, status, sc.out)
}

// The proxy's pages for lookups that fail (docs/handle-protocol.md §2, docs/product.md §5).

func (s *Server) sendNotFound(ctx *fasthttp.RequestCtx, sc *scratch, handle []byte) {
	s.sendMessage(ctx, sc, fasthttp.StatusNotFound, "Not Found",
		"Not Found: the handle you requested -- ", handle, " -- cannot be found.")
}

func (s *Server) sendMalformed(ctx *fasthttp.RequestCtx, sc *scratch, handle []byte) {
	s.sendMessage(ctx, sc, fasthttp.StatusNotFound, "Malformed identifier",
		"The identifier <strong>", handle, "</strong> is malformed: its check character does not match "+
			"the rest of the identifier, so it was probably mistyped. Please check it against the original.")
}

func (s *Server) sendPrefixNotFound(ctx *fasthttp.RequestCtx, sc *scratch, prefix []byte) {
	s.sendMessage(ctx, sc, fasthttp.StatusNotFound, "Prefix not found",
		"Prefix ", prefix, " not found. This resolver does not serve identifiers under that prefix.")
}

func (s *Server) sendBadHandle(ctx *fasthttp.RequestCtx, sc *scratch, reason string) {
	s.sendMessage(ctx, sc, fasthttp.StatusBadRequest, "Bad Request",
		"The identifier in this URL is malformed: ", []byte(reason), ".")
}

func (s *Server) sendBadParam(ctx *fasthttp.RequestCtx, sc *scratch, err error) {
	msg := "bad parameter"
	if pe, ok := err.(*ParamError); ok {
		msg = pe.Name + "=" + pe.Value
	}
	s.sendMessage(ctx, sc, fasthttp.StatusBadRequest, "Bad Request", "Invalid parameter: ", []byte(msg), ".")
}

func (s *Server) sendInternalError(ctx *fasthttp.RequestCtx, sc *scratch) {
	s.sendMessage(ctx, sc, fasthttp.StatusInternalServerError, "Internal Server Error",
		"The record could not be read. Please try again later.", nil, "")
}

// handleProblem says why a handle could not be turned into a key.
func handleProblem(err error) string {
	switch {
	case errors.Is(err, handlev.ErrEmpty):
		return "the identifier is empty"
	case errors.Is(err, handlev.ErrTooLong):
		return "the identifier is too long"
	case errors.Is(err, handlev.ErrBadEscape):
		return "it has a '%' that is not followed by two hexadecimal digits"
	case errors.Is(err, handlev.ErrInvalidUTF8):
		return "it is not valid UTF-8 text"
	case errors.Is(err, handlev.ErrControl):
		return "it contains a control character"
	case errors.Is(err, handlev.ErrDotSegment):
		return "it contains a '.' or '..' path segment"
	}
	return "it is not a valid identifier"
}

// Handle JSON responseCodes the resolver answers (docs/handle-protocol.md §1.3).
const (
	rcSuccess          = 1
	rcError            = 2
	rcProtocolError    = 4
	rcHandleNotFound   = 100
	rcInvalidHandle    = 102
	rcValuesNotFound   = 200
	rcServerNotResp    = 301 // "prefix doesn't live here"
	msgEmptyHandle     = "Empty handle invalid"
	msgPrefixNotHere   = "That prefix doesn't live here"
	msgInternalError   = "Internal error"
	msgUnknownEndpoint = "Unknown HTTP API endpoint "
	msgReadOnlyMethod  = "Method not allowed: this node's HTTP API is read-only"
)

// rcStatus is the reference server's responseCode → HTTP status map
// (docs/handle-protocol.md §1.3), for resolution requests.
func rcStatus(rc int) int {
	switch rc {
	case 1, 200:
		return fasthttp.StatusOK
	case 100:
		return fasthttp.StatusNotFound
	case 101, 201:
		return fasthttp.StatusConflict
	case 4, 102, 202, 301:
		return fasthttp.StatusBadRequest
	case 5:
		return fasthttp.StatusNotImplemented
	case 3, 7:
		return fasthttp.StatusServiceUnavailable
	case 402:
		return fasthttp.StatusUnauthorized
	case 400, 401, 403, 404:
		return fasthttp.StatusForbidden
	}
	return fasthttp.StatusInternalServerError
}
