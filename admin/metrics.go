package admin

import (
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/internal/buildinfo"
	"pidnode/internal/promtext"
)

// Metrics (docs/product.md §4 /metrics, docs/architecture.md practice 13) are
// written in the Prometheus text format with internal/promtext: names
// pidnode_<subsystem>_<name>_{total,seconds,bytes}, labels from small fixed
// sets (route patterns as registered, status codes, write kinds), never a
// handle. The node's /metrics is admin's own metrics,
// the store's (bbolt), build info, and whatever Config.Metrics writes (the
// resolvers' and the cache's, wired by cmd/pidnode).

// latencyBuckets are the upper bounds (seconds) of the admin latency histogram.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10}

// metrics are the admin API's counters.
type metrics struct {
	creates      atomic.Uint64
	updates      atomic.Uint64
	authFail     atomic.Uint64
	insecure     atomic.Uint64
	eventStreams atomic.Int64
	// limitRefusals counts the refusals of the limits per key, per SNAA and
	// per node, by refusedKeyRate… (limits.go).
	limitRefusals [refusedLimits]atomic.Uint64

	mu     sync.Mutex
	routes map[string]*routeMetrics // by route pattern; the patterns are fixed at New
}

type routeMetrics struct {
	status  map[int]uint64
	buckets []uint64 // cumulative counts are computed at scrape time
	count   uint64
	sum     float64
}

// refused counts a refusal by the limit reason (refusedKeyRate…).
func (m *metrics) refused(reason int) { m.limitRefusals[reason].Add(1) }

// observe records one reply of route (a registered pattern, "" for none).
func (m *metrics) observe(route string, status int, d time.Duration) {
	if route == "" {
		route = "none"
	}
	sec := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.routes == nil {
		m.routes = map[string]*routeMetrics{}
	}
	rm := m.routes[route]
	if rm == nil {
		rm = &routeMetrics{status: map[int]uint64{}, buckets: make([]uint64, len(latencyBuckets))}
		m.routes[route] = rm
	}
	rm.status[status]++
	rm.count++
	rm.sum += sec
	for i, b := range latencyBuckets {
		if sec <= b {
			rm.buckets[i]++
			break
		}
	}
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

// counted wraps the mux to count replies by route and status, with latency.
func (s *Server) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			st := sw.status
			if st == 0 {
				st = http.StatusOK
			}
			// ServeMux set r.Pattern to the matched pattern (a fixed set).
			s.metrics.observe(r.Pattern, st, time.Since(start))
			if st == http.StatusUnauthorized {
				s.metrics.authFail.Add(1)
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

// latencyLe are latencyBuckets as "le" label values, written once.
var latencyLe = func() []string {
	le := make([]string, len(latencyBuckets))
	for i, b := range latencyBuckets {
		le[i] = string(promtext.AppendFloat(nil, b))
	}
	return le
}()

// WriteMetrics writes the admin API's, the store's and the build's metrics in
// the Prometheus text format, then Config.Metrics's.
func (s *Server) WriteMetrics(w io.Writer) error {
	b := make([]byte, 0, 16<<10)
	m := &s.metrics
	rateAll, rateKey, rateSNAA := s.gate.adm.Refusals()

	m.mu.Lock()
	routes := make([]string, 0, len(m.routes))
	for r := range m.routes {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	const reqs = "pidnode_admin_requests_total"
	b = promtext.Header(b, reqs, promtext.Counter, "Admin API replies by route pattern and status code.")
	for _, r := range routes {
		rm := m.routes[r]
		codes := make([]int, 0, len(rm.status))
		for c := range rm.status {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			b = promtext.Uint(b, reqs, rm.status[c], promtext.L("route", r), promtext.L("status", strconv.Itoa(c)))
		}
	}
	const dur = "pidnode_admin_request_duration_seconds"
	b = promtext.Header(b, dur, promtext.Histogram, "Admin API request latency by route pattern.")
	for _, r := range routes {
		rm := m.routes[r]
		var cum uint64
		for i := range latencyBuckets {
			cum += rm.buckets[i]
			b = promtext.Uint(b, dur+"_bucket", cum, promtext.L("route", r), promtext.L("le", latencyLe[i]))
		}
		b = promtext.Uint(b, dur+"_bucket", rm.count, promtext.L("route", r), promtext.L("le", "+Inf"))
		b = promtext.Float(b, dur+"_sum", rm.sum, promtext.L("route", r))
		b = promtext.Uint(b, dur+"_count", rm.count, promtext.L("route", r))
	}
	m.mu.Unlock()

	const writes = "pidnode_admin_writes_total"
	b = promtext.Header(b, writes, promtext.Counter, "Identifier writes committed, by kind.")
	b = promtext.Uint(b, writes, m.creates.Load(), promtext.L("op", "create"))
	b = promtext.Uint(b, writes, m.updates.Load(), promtext.L("op", "update"))
	b = promtext.CounterFamily(b, "pidnode_admin_commit_groups_total", "Write transactions of the identifier group commit.", s.commits.groups.Load())
	b = promtext.CounterFamily(b, "pidnode_admin_commit_group_writes_total", "Identifier writes in those transactions (divided by groups: mean group size).", s.commits.calls.Load())
	b = promtext.CounterFamily(b, "pidnode_admin_auth_failures_total", "Requests refused with 401.", m.authFail.Load())
	b = promtext.CounterFamily(b, "pidnode_admin_rate_limited_total", "Requests refused with 429.", rateAll)
	b = promtext.CounterFamily(b, "pidnode_admin_insecure_refused_total", "Requests refused because they sent a key over plain HTTP.", m.insecure.Load())
	const refusals = "pidnode_admin_limit_refusals_total"
	b = promtext.Header(b, refusals, promtext.Counter, "Requests refused by a limit per key, per SNAA or per node: rates (429), event streams (429, 503), keys an SNAA may hold (409).")
	for i, name := range refusedNames {
		n := m.limitRefusals[i].Load()
		switch i {
		case refusedKeyRate:
			n += rateKey
		case refusedSNAARate:
			n += rateSNAA
		}
		b = promtext.Uint(b, refusals, n, promtext.L("limit", name))
	}
	b = promtext.GaugeFamily(b, "pidnode_admin_event_streams", "Change feed event streams open now.", m.eventStreams.Load())

	st := s.db.Stats()
	b = promtext.CounterFamily(b, "pidnode_store_read_transactions_total", "bbolt read transactions started.", uint64(st.TxN))
	b = promtext.GaugeFamily(b, "pidnode_store_open_read_transactions", "bbolt read transactions open now.", int64(st.OpenTxN))
	b = promtext.GaugeFamily(b, "pidnode_store_free_pages", "bbolt free pages.", int64(st.FreePageN))
	b = promtext.CounterFamily(b, "pidnode_store_freelist_checkpoints_total", "Commits that only wrote bbolt's freelist (after writes pause, and at close).", s.db.FreelistSyncs())
	b = promtext.GaugeFamily(b, "pidnode_store_pending_pages", "bbolt pages freed but still pinned by readers.", int64(st.PendingPageN))
	b = promtext.GaugeFamily(b, "pidnode_store_free_alloc_bytes", "bbolt bytes allocated in free pages.", int64(st.FreeAlloc))
	b = promtext.GaugeFamily(b, "pidnode_store_freelist_inuse_bytes", "bbolt bytes used by the freelist.", int64(st.FreelistInuse))
	b = promtext.CounterFamily(b, "pidnode_store_page_allocations_total", "bbolt page allocations by write transactions.", uint64(st.TxStats.GetPageCount()))
	b = promtext.CounterFamily(b, "pidnode_store_page_alloc_bytes_total", "bbolt bytes allocated by write transactions.", uint64(st.TxStats.GetPageAlloc()))
	b = promtext.CounterFamily(b, "pidnode_store_writes_total", "bbolt page writes (write(2) calls at commit).", uint64(st.TxStats.GetWrite()))
	const wsec = "pidnode_store_write_seconds_total"
	b = promtext.Header(b, wsec, promtext.Counter, "bbolt time spent writing at commit.")
	b = promtext.Float(b, wsec, st.TxStats.GetWriteTime().Seconds())
	if fi, err := os.Stat(s.db.Path()); err == nil {
		b = promtext.GaugeFamily(b, "pidnode_store_file_size_bytes", "Size of the database file.", fi.Size())
	}

	b = promtext.Header(b, "pidnode_build_info", promtext.Gauge, "Build of the running binary (always 1): module version, VCS revision, commit time, modified tree, Go version.")
	var bl []promtext.Label
	for _, kv := range buildinfo.Read().Labels() {
		bl = append(bl, promtext.L(kv[0], kv[1]))
	}
	b = promtext.Uint(b, "pidnode_build_info", 1, bl...)

	if _, err := w.Write(b); err != nil {
		return err
	}
	if s.extraMetrics != nil {
		return s.extraMetrics(w)
	}
	return nil
}

// serveMetrics serves GET /metrics (no key: scrapers are configured per
// listener; nothing here names an identifier or a key).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	return s.WriteMetrics(w)
}
