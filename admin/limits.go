package admin

import (
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"strings"

	"pidnode/internal/tokenbucket"
)

// rateLimiter is a token bucket per API key (docs/product.md §4: 429 with
// Retry-After). Keys are few; the table's bound only guards against a flood
// of them.
type rateLimiter struct {
	t *tokenbucket.Table[string]
}

// rateTableSize bounds the keys the limiter tracks.
const rateTableSize = 100000

var rateSeed = maphash.MakeSeed()

func newRateLimiter(rate, burst float64) *rateLimiter {
	return &rateLimiter{t: tokenbucket.New(tokenbucket.Config{Rate: rate, Burst: burst, Size: rateTableSize},
		func(k string) uint64 { return maphash.String(rateSeed, k) })}
}

// limit applies the per-key rate limit to an authenticated SNAA request.
func (s *Server) limit(keyID string) error { return s.limitN(keyID, 1) }

// limitN charges a request that writes n identifiers (n ≥ 1) to the key's
// bucket: a bulk of n items costs what n creates cost, so that the rate
// limit bounds the identifiers a key writes, not its requests. A bulk of more
// items than the burst is let through only with a full bucket and leaves
// the key in debt: its next requests wait until the sustained rate has paid
// for every item (internal/tokenbucket TakeN). A bulk the bucket cannot cover
// now is refused whole, with 429 and the Retry-After after which it can.
func (s *Server) limitN(keyID string, n int) error {
	if s.rl == nil {
		return nil
	}
	r := s.rl.t.TakeN(keyID, n, s.now().UnixNano())
	ok, wait := r.OK, r.Wait
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	s.metrics.rateLimited.Add(1)
	if n > 1 {
		return problem(http.StatusTooManyRequests, "a bulk of %d items costs %d of this key's %g writes per second; retry in %d s", n, n, s.rl.t.Rate(), secs).
			with("Retry-After", strconv.Itoa(secs))
	}
	return problem(http.StatusTooManyRequests, "more than %g requests per second with this key; retry in %d s", s.rl.t.Rate(), secs).
		with("Retry-After", strconv.Itoa(secs))
}

// SetReadOnly switches maintenance mode: while on, every write answers 503
// (reads keep working). Safe for concurrent use.
func (s *Server) SetReadOnly(on bool) { s.readOnly.Store(on) }

func (s *Server) checkWritable() error {
	if s.readOnly.Load() {
		return problem(http.StatusServiceUnavailable, "the node is in maintenance (read-only); retry later").with("Retry-After", "60")
	}
	return nil
}

// backup streams a consistent snapshot of the database (docs/product.md §8).
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="pidnode-`+s.now().UTC().Format("20060102T150405Z")+`.db"`)
	if _, err := s.db.Backup(w); err != nil {
		// Headers are gone; the client sees a truncated body and the log the cause.
		s.log.Error("backup failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// isBulk reports whether r is a bulk write (POST …/{ns}/bulk), which limitN
// charges by its items.
func isBulk(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.EqualFold(r.PathValue("id"), "bulk")
}
