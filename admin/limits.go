package admin

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
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

// metrics are the admin API's counters (SPEC §9 /metrics), labels from fixed sets.
type metrics struct {
	requests     [6]atomic.Uint64 // by status class 1xx…5xx (index 1–5)
	creates      atomic.Uint64
	updates      atomic.Uint64
	authFail     atomic.Uint64
	rateLimited  atomic.Uint64
	statsFlushes atomic.Uint64
}

// WriteMetrics writes the admin API's metrics in the Prometheus text format,
// for the node's /metrics endpoint.
func (s *Server) WriteMetrics(w io.Writer) error {
	m := &s.metrics
	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	p("# HELP pidnode_admin_requests_total Admin API requests by status class.\n# TYPE pidnode_admin_requests_total counter\n")
	for c := 1; c <= 5; c++ {
		p("pidnode_admin_requests_total{class=\"%dxx\"} %d\n", c, m.requests[c].Load())
	}
	p("# HELP pidnode_admin_writes_total Identifier writes committed.\n# TYPE pidnode_admin_writes_total counter\n")
	p("pidnode_admin_writes_total{op=\"create\"} %d\npidnode_admin_writes_total{op=\"update\"} %d\n", m.creates.Load(), m.updates.Load())
	p("# HELP pidnode_admin_auth_failures_total Requests refused with 401.\n# TYPE pidnode_admin_auth_failures_total counter\n")
	p("pidnode_admin_auth_failures_total %d\n", m.authFail.Load())
	p("# HELP pidnode_admin_rate_limited_total Requests refused with 429.\n# TYPE pidnode_admin_rate_limited_total counter\n")
	p("pidnode_admin_rate_limited_total %d\n", m.rateLimited.Load())
	return err
}

// statusWriter records the status of a reply for the metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// counted wraps the mux to count replies by status class.
func (s *Server) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		st := sw.status
		if st == 0 {
			st = http.StatusOK
		}
		if c := st / 100; c >= 1 && c <= 5 {
			s.metrics.requests[c].Add(1)
		}
		if st == http.StatusUnauthorized {
			s.metrics.authFail.Add(1)
		}
	})
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
