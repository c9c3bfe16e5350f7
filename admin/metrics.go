package admin

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics (SPEC §4 /metrics, STYLE practice 13) are written by hand in the
// Prometheus text format: names pidnode_<subsystem>_<name>_{total,seconds,bytes},
// labels from small fixed sets (route patterns as registered, status codes,
// write kinds), never a handle. The node's /metrics is admin's own metrics,
// the store's (bbolt), build info, and whatever Config.Metrics writes (the
// resolvers' and the cache's, wired by cmd/pidnode).

// latencyBuckets are the upper bounds (seconds) of the admin latency histogram.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10}

// metrics are the admin API's counters.
type metrics struct {
	creates      atomic.Uint64
	updates      atomic.Uint64
	authFail     atomic.Uint64
	rateLimited  atomic.Uint64
	statsFlushes atomic.Uint64
	insecure     atomic.Uint64

	mu     sync.Mutex
	routes map[string]*routeMetrics // by route pattern; the patterns are fixed at New
}

type routeMetrics struct {
	status  map[int]uint64
	buckets []uint64 // cumulative counts are computed at scrape time
	count   uint64
	sum     float64
}

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

// promWriter writes Prometheus text, remembering the first error.
type promWriter struct {
	w   io.Writer
	err error
}

func (p *promWriter) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *promWriter) head(name, typ, help string) {
	p.printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (p *promWriter) one(name, typ, help string, v any) {
	p.head(name, typ, help)
	p.printf("%s %v\n", name, v)
}

// labelValue escapes a label value (\, ", newline).
func labelValue(s string) string {
	q := strconv.Quote(s)
	return q // Go quoting escapes \, " and \n as the text format wants; patterns are ASCII
}

func promFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// WriteMetrics writes the admin API's, the store's and the build's metrics in
// the Prometheus text format.
func (s *Server) WriteMetrics(w io.Writer) error {
	p := &promWriter{w: w}
	m := &s.metrics

	m.mu.Lock()
	routes := make([]string, 0, len(m.routes))
	for r := range m.routes {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	p.head("pidnode_admin_requests_total", "counter", "Admin API replies by route pattern and status code.")
	for _, r := range routes {
		rm := m.routes[r]
		codes := make([]int, 0, len(rm.status))
		for c := range rm.status {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			p.printf("pidnode_admin_requests_total{route=%s,status=\"%d\"} %d\n", labelValue(r), c, rm.status[c])
		}
	}
	p.head("pidnode_admin_request_duration_seconds", "histogram", "Admin API request latency by route pattern.")
	for _, r := range routes {
		rm := m.routes[r]
		var cum uint64
		for i, b := range latencyBuckets {
			cum += rm.buckets[i]
			p.printf("pidnode_admin_request_duration_seconds_bucket{route=%s,le=\"%s\"} %d\n", labelValue(r), promFloat(b), cum)
		}
		p.printf("pidnode_admin_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", labelValue(r), rm.count)
		p.printf("pidnode_admin_request_duration_seconds_sum{route=%s} %s\n", labelValue(r), promFloat(rm.sum))
		p.printf("pidnode_admin_request_duration_seconds_count{route=%s} %d\n", labelValue(r), rm.count)
	}
	m.mu.Unlock()

	p.head("pidnode_admin_writes_total", "counter", "Identifier writes committed, by kind.")
	p.printf("pidnode_admin_writes_total{op=\"create\"} %d\npidnode_admin_writes_total{op=\"update\"} %d\n", m.creates.Load(), m.updates.Load())
	p.one("pidnode_admin_commit_groups_total", "counter", "Write transactions of the identifier group commit.", s.writes.groups.Load())
	p.one("pidnode_admin_commit_group_writes_total", "counter", "Identifier writes in those transactions (divided by groups: mean group size).", s.writes.calls.Load())
	p.one("pidnode_admin_auth_failures_total", "counter", "Requests refused with 401.", m.authFail.Load())
	p.one("pidnode_admin_rate_limited_total", "counter", "Requests refused with 429.", m.rateLimited.Load())
	p.one("pidnode_admin_insecure_refused_total", "counter", "Requests refused because they sent a key over plain HTTP.", m.insecure.Load())
	p.one("pidnode_admin_stats_flushes_total", "counter", "Resolution statistics flushed to the store.", m.statsFlushes.Load())

	st := s.db.Stats()
	p.one("pidnode_store_read_transactions_total", "counter", "bbolt read transactions started.", st.TxN)
	p.one("pidnode_store_open_read_transactions", "gauge", "bbolt read transactions open now.", st.OpenTxN)
	p.one("pidnode_store_free_pages", "gauge", "bbolt free pages.", st.FreePageN)
	p.one("pidnode_store_pending_pages", "gauge", "bbolt pages freed but still pinned by readers.", st.PendingPageN)
	p.one("pidnode_store_free_alloc_bytes", "gauge", "bbolt bytes allocated in free pages.", st.FreeAlloc)
	p.one("pidnode_store_freelist_inuse_bytes", "gauge", "bbolt bytes used by the freelist.", st.FreelistInuse)
	p.one("pidnode_store_page_allocations_total", "counter", "bbolt page allocations by write transactions.", st.TxStats.GetPageCount())
	p.one("pidnode_store_page_alloc_bytes_total", "counter", "bbolt bytes allocated by write transactions.", st.TxStats.GetPageAlloc())
	p.one("pidnode_store_writes_total", "counter", "bbolt page writes (write(2) calls at commit).", st.TxStats.GetWrite())
	p.one("pidnode_store_write_seconds_total", "counter", "bbolt time spent writing at commit.", promFloat(st.TxStats.GetWriteTime().Seconds()))
	if fi, err := os.Stat(s.db.Path()); err == nil {
		p.one("pidnode_store_file_size_bytes", "gauge", "Size of the database file.", fi.Size())
	}

	version, revision := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" {
				revision = kv.Value
			}
		}
	}
	p.head("pidnode_build_info", "gauge", "Build of the running binary (always 1).")
	p.printf("pidnode_build_info{version=%s,revision=%s,goversion=%s} 1\n", labelValue(version), labelValue(revision), labelValue(runtime.Version()))

	if s.extraMetrics != nil && p.err == nil {
		p.err = s.extraMetrics(w)
	}
	return p.err
}

// serveMetrics serves GET /metrics (no key: scrapers are configured per
// listener; nothing here names an identifier or a key).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	return s.WriteMetrics(w)
}
