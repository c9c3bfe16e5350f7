package resolver

import (
	"sync/atomic"
	"unsafe"

	"github.com/valyala/fasthttp"

	"pidnode/internal/promtext"
)

// Resolution counters (docs/architecture.md practice 13) by kind (redirect,
// noredirect, api, linkset) and result (found, not_found, gone, bad_request,
// error, limited), summed at scrape time. Counting is one atomic add in a
// stripe picked by the request's pooled scratch (sync.Pool keeps one per P,
// so cores rarely share a stripe's cache line); nothing allocates.

// Kinds and results, in the order of the counter arrays.
var (
	kindNames   = [...]string{"redirect", "noredirect", "api", "linkset"}
	resultNames = [...]string{"found", "not_found", "gone", "bad_request", "error", "limited"}
)

const (
	kindRedirect = iota
	kindNoRedirect
	kindAPI
	kindLinkset
	numKinds
)

const (
	resFound = iota
	resNotFound
	resGone
	resBadRequest
	resError
	resLimited
	numResults
)

const statStripes = 16

type statStripe struct {
	n [numKinds][numResults]atomic.Uint64
	_ [64]byte
}

type resolverStats struct {
	stripes     [statStripes]statStripe
	rateLimited atomic.Uint64
}

// resultOf maps a reply status to a result.
func resultOf(status int) int {
	switch {
	case status == fasthttp.StatusTooManyRequests:
		return resLimited
	case status == fasthttp.StatusGone:
		return resGone
	case status == fasthttp.StatusNotFound:
		return resNotFound
	case status >= 500:
		return resError
	case status >= 400:
		return resBadRequest
	}
	return resFound
}

// count records one handle or API request of sc by its reply status.
func (s *Server) count(sc *scratch, kind int, status int) {
	i := (uintptr(unsafe.Pointer(sc)) >> 7) % statStripes
	s.stats.stripes[i].n[kind][resultOf(status)].Add(1)
}

// EachResolution calls f with every (kind, result) counter since New, summed
// over the stripes. It is safe to call concurrently with requests.
func (s *Server) EachResolution(f func(kind, result string, n uint64)) {
	for k := range numKinds {
		for r := range numResults {
			var n uint64
			for i := range s.stats.stripes {
				n += s.stats.stripes[i].n[k][r].Load()
			}
			f(kindNames[k], resultNames[r], n)
		}
	}
}

// AppendResolutions appends pidnode_resolver_resolutions_total, the one family
// of every public front's resolutions: its header, then each front's counters
// in order. A front is its EachResolution (this package's Server, resolver/dns,
// resolver/hdl), which gives kind and result from small fixed sets.
func AppendResolutions(b []byte, fronts ...func(f func(kind, result string, n uint64))) []byte {
	const name = "pidnode_resolver_resolutions_total"
	b = promtext.Header(b, name, promtext.Counter, "Resolutions by front (kind) and outcome (result).")
	for _, each := range fronts {
		each(func(kind, result string, n uint64) {
			b = promtext.Uint(b, name, n, promtext.L("kind", kind), promtext.L("result", result))
		})
	}
	return b
}

// AppendMetrics appends the HTTP front's own families (requests refused by
// the per-address limit; on handle routes also counted as limited resolutions).
func (s *Server) AppendMetrics(b []byte) []byte {
	return promtext.CounterFamily(b, "pidnode_resolver_rate_limited_total", "HTTP resolver requests refused with 429 by the per-address limit.", s.stats.rateLimited.Load())
}
