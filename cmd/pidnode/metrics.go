package main

import (
	"io"
	"runtime/debug"

	"pidnode/internal/promtext"
	"pidnode/internal/shed"
	"pidnode/resolver"
)

// metricsSource is a part of the node other than a front with families of
// its own on /metrics (stats, cluster, webhook, linkcheck: each package's
// metrics.go).
type metricsSource interface {
	AppendMetrics(b []byte) []byte
}

// addMetrics adds src's families to /metrics; called where src is built,
// before the node serves.
func (n *node) addMetrics(src metricsSource) {
	n.sources = append(n.sources, src)
}

// writeMetrics is the node's part of the admin listener's /metrics (admin
// writes its own, the store's and build info first). Every family is written
// by the package that owns it (its metrics.go, docs/architecture.md practice
// 13), at scrape time from atomic counters, so no hot path does more than an
// atomic add; this only puts the parts in order. Only the Go runtime's
// settings, which the node itself chose (memory.go), are written here.
// admin's test lints the format and cmd/pidnode's tests lint this output on
// a running node.
func (n *node) writeMetrics(w io.Writer) error {
	b := make([]byte, 0, 8<<10)
	b = n.cache.AppendMetrics(b) // pidnode_cache_*
	b = promtext.GaugeFamily(b, "pidnode_go_memory_limit_bytes", "The Go runtime's soft memory limit (GOMEMLIMIT, or set from the cache budget).", debug.SetMemoryLimit(-1))
	b = promtext.GaugeFamily(b, "pidnode_go_gc_percent", "The Go collector's target (GOGC: 400 unless set in the environment).", gcPercentNow())
	for _, src := range n.sources {
		b = src.AppendMetrics(b)
	}
	// One family for the resolutions of every front, then each front's own.
	each := make([]func(func(kind, result string, n uint64)), len(n.fronts))
	for i, f := range n.fronts {
		each[i] = f.EachResolution
	}
	b = resolver.AppendResolutions(b, each...)
	for _, f := range n.fronts {
		b = f.AppendMetrics(b)
	}
	if n.conns != nil {
		b = shed.AppendMetrics(b, n.conns, n.accepts...) // pidnode_listener_*: connections, refusals, accept retries, budget
	}
	_, err := w.Write(b)
	return err
}
