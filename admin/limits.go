package admin

import (
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"time"

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

// allow takes a token for key; if none is left it returns how long to wait.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	r := l.t.Take(key, now.UnixNano())
	return r.OK, r.Wait
}

// limit applies the per-key rate limit to an authenticated SNAA request.
func (s *Server) limit(keyID string) error {
	if s.rl == nil {
		return nil
	}
	ok, wait := s.rl.allow(keyID, s.now())
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	s.metrics.rateLimited.Add(1)
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

// backup streams a consistent snapshot of the database (SPEC §8).
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
