package resolver

import (
	"encoding/binary"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Per-client-address rate limiting of the HTTP resolver (issue 4): a token
// bucket per address, IPv6 addresses grouped by their /64 (one host usually
// holds a whole /64). Off unless Config.RateLimit > 0. Beyond the limit the
// reply is 429 with Retry-After. /healthz is never limited, so load balancers
// polling from one address keep seeing the node alive.
//
// Memory is bounded: the table holds at most Config.RateTable addresses
// (DefaultRateTable), split over shards. When a shard is full, addresses whose
// bucket has refilled (indistinguishable from a new address) are dropped
// first; if that frees too little, arbitrary entries are dropped, which only
// ever hands a client a fresh burst (errs towards serving).
//
// A request from a known address allocates nothing: the table is keyed by a
// fixed-size array; a new address allocates its bucket.

// DefaultRateTable is the default bound on addresses tracked by the limiter.
const DefaultRateTable = 1 << 16

const limitShards = 64

type clientKey [16]byte

type clientBucket struct {
	tokens float64
	last   int64 // unix nanoseconds of the last refill
}

type limitShard struct {
	mu sync.Mutex
	m  map[clientKey]*clientBucket
	_  [40]byte
}

type clientLimiter struct {
	rate, burst float64 // tokens per second, bucket size
	perShard    int
	shards      [limitShards]limitShard
	retryAfter  [61][]byte // "1".."60", preformatted
}

func newClientLimiter(rate float64, burst, table int) *clientLimiter {
	if burst <= 0 {
		burst = int(math.Ceil(2 * rate))
	}
	if table <= 0 {
		table = DefaultRateTable
	}
	l := &clientLimiter{rate: rate, burst: math.Max(float64(burst), 1), perShard: max(1, table/limitShards)}
	for i := range l.shards {
		l.shards[i].m = make(map[clientKey]*clientBucket)
	}
	for i := range l.retryAfter {
		l.retryAfter[i] = []byte(strconv.Itoa(i))
	}
	return l
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

// allow takes a token for ip at time now; if none is left it returns the
// whole seconds to wait (at least 1).
func (l *clientLimiter) allow(ip net.IP, now int64) (bool, int) {
	k := keyOf(ip)
	h := (binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])) * 0x9e3779b97f4a7c15
	sh := &l.shards[h>>58] // top 6 bits: 64 shards
	sh.mu.Lock()
	b := sh.m[k]
	if b == nil {
		if len(sh.m) >= l.perShard {
			l.makeRoom(sh, now)
		}
		b = &clientBucket{tokens: l.burst, last: now} // the only allocation: a new address
		sh.m[k] = b
	}
	if el := now - b.last; el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(el)/1e9*l.rate)
		b.last = now
	}
	allowed := b.tokens >= 1
	wait := 0
	if allowed {
		b.tokens--
	} else {
		wait = int(math.Ceil((1 - b.tokens) / l.rate))
	}
	sh.mu.Unlock()
	return allowed, max(wait, 1)
}

// makeRoom drops refilled buckets from a full shard, then arbitrary ones
// until an eighth of the shard is free.
func (l *clientLimiter) makeRoom(sh *limitShard, now int64) {
	full := float64(time.Second) * l.burst / l.rate // ns for an empty bucket to refill
	for k, b := range sh.m {
		if float64(now-b.last)+b.tokens/l.rate*float64(time.Second) >= full {
			delete(sh.m, k)
		}
	}
	for k := range sh.m {
		if len(sh.m) <= l.perShard-max(1, l.perShard/8) {
			break
		}
		delete(sh.m, k)
	}
}

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
