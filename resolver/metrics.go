package resolver

import (
	"sync/atomic"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// Resolution counters (docs/architecture.md practice 13): by kind (the
// route: redirect, noredirect, api, linkset) and result (found, not_found, gone,
// bad_request, error, limited), read at scrape time through Stats; cmd/pidnode
// writes them as pidnode_resolver_resolutions_total. Counting is one atomic
// add in a stripe picked by the request's pooled scratch (sync.Pool keeps one
// per P, so cores rarely share a stripe's cache line); nothing allocates.

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

// Stats is a snapshot of the resolver's counters since New.
type Stats struct {
	counts [numKinds][numResults]uint64
	// RateLimited counts requests refused with 429 by the per-address limit
	// (on any route; those on handle routes are also in Resolutions as limited).
	RateLimited uint64
}

// Resolution is one (kind, result) counter of Stats.
type Resolution struct {
	Kind, Result string
	N            uint64
}

// Stats sums the counters. It is safe to call concurrently with requests.
func (s *Server) Stats() Stats {
	var st Stats
	for i := range s.stats.stripes {
		for k := range numKinds {
			for r := range numResults {
				st.counts[k][r] += s.stats.stripes[i].n[k][r].Load()
			}
		}
	}
	st.RateLimited = s.stats.rateLimited.Load()
	return st
}

// Resolutions lists every counter with its kind and result names.
func (st Stats) Resolutions() []Resolution {
	out := make([]Resolution, 0, numKinds*numResults)
	for k := range numKinds {
		for r := range numResults {
			out = append(out, Resolution{Kind: kindNames[k], Result: resultNames[r], N: st.counts[k][r]})
		}
	}
	return out
}
