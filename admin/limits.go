package admin

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rateLimiter is a token bucket per API key (SPEC §4: 429 with Retry-After).
type rateLimiter struct {
	rate  float64 // tokens per second
	burst float64
	mu    sync.Mutex
	keys  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// allow takes a token for key; if none is left it returns how long to wait.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.keys[key]
	if b == nil {
		if len(l.keys) > 100000 { // keys are few; never let the map grow without bound
			l.keys = map[string]*bucket{}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.keys[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
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
	return problem(http.StatusTooManyRequests, "more than %g requests per second with this key; retry in %d s", s.rl.rate, secs).
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
