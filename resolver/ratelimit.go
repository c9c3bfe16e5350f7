package resolver

import (
	"encoding/binary"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/internal/tokenbucket"
)

// Per-client-address rate limiting of the HTTP resolver: a token
// bucket per address, IPv6 addresses grouped by their /64 (one host usually
// holds a whole /64). Off unless Config.RateLimit > 0. Beyond the limit the
// reply is 429 with Retry-After. /healthz is never limited, so load balancers
// polling from one address keep seeing the node alive.
//
// Memory is bounded: the table (internal/tokenbucket) holds at most
// Config.RateTable addresses (DefaultRateTable); when full, addresses whose
// bucket has refilled are forgotten first, which only ever hands a client a
// fresh burst (errs towards serving).
//
// A request from a known address allocates nothing: the table is keyed by a
// fixed-size array.

// DefaultRateTable is the default bound on addresses tracked by the limiter.
const DefaultRateTable = tokenbucket.DefaultSize

type clientKey [16]byte

type clientLimiter struct {
	t          *tokenbucket.Table[clientKey]
	retryAfter [61][]byte // "1".."60", preformatted
}

func newClientLimiter(rate float64, burst, table int) *clientLimiter {
	if burst <= 0 {
		burst = int(math.Ceil(2 * rate))
	}
	if table <= 0 {
		table = DefaultRateTable
	}
	l := &clientLimiter{t: tokenbucket.New(tokenbucket.Config{Rate: rate, Burst: float64(burst), Size: table}, hashClientKey)}
	for i := range l.retryAfter {
		l.retryAfter[i] = []byte(strconv.Itoa(i))
	}
	return l
}

func hashClientKey(k clientKey) uint64 {
	return binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
}

// keyOf returns the table key of a client address: IPv4 as is, IPv6 by /64.
func keyOf(ip net.IP) clientKey {
	var k clientKey
	if v4 := ip.To4(); v4 != nil {
		copy(k[12:], v4)
		k[10], k[11] = 0xff, 0xff
		return k
	}
	copy(k[:8], ip.To16())
	return k
}

// allow takes a token for ip at time now (unix nanoseconds); if none is left
// it returns the whole seconds to wait (at least 1).
func (l *clientLimiter) allow(ip net.IP, now int64) (bool, int) {
	r := l.t.Take(keyOf(ip), now)
	if r.OK {
		return true, 1
	}
	return false, max(int((r.Wait+time.Second-1)/time.Second), 1)
}

// len returns the number of addresses tracked (tests).
func (l *clientLimiter) len() int { return l.t.Len() }

var bodyTooMany = []byte("Too Many Requests: slow down and retry after the number of seconds in Retry-After.\n")

// limited applies the per-address limit to a request; it answers 429 and
// returns true when the request must not be served.
func (s *Server) limited(ctx *fasthttp.RequestCtx) bool {
	ok, wait := s.limiter.allow(ctx.RemoteIP(), ctx.Time().UnixNano())
	if ok {
		return false
	}
	s.stats.rateLimited.Add(1)
	ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
	ctx.Response.Header.SetContentTypeBytes(ctText)
	ctx.Response.Header.SetBytesV("Retry-After", s.limiter.retryAfter[min(wait, 60)])
	ctx.Response.SetBodyRaw(bodyTooMany)
	return true
}
