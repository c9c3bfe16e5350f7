package linkcheck

import (
	"slices"
	"strings"
	"sync/atomic"

	"pidnode/internal/outbound"
	"pidnode/internal/promtext"
	"pidnode/registry"
)

// results are the label values of pidnode_linkcheck_checks_total: ok, or
// the error class.
var results = []string{"ok", ClassHTTP, outbound.ClassDNS, outbound.ClassConnect, outbound.ClassTLS,
	outbound.ClassTimeout, outbound.ClassDenied, outbound.ClassRedirects, outbound.ClassScheme, outbound.ClassOther}

// metrics are the checker's counters (docs/architecture.md practice 13).
type metrics struct {
	checks      [10]atomic.Uint64 // by results' index
	queued      atomic.Int64
	inflight    atomic.Int64
	hosts       atomic.Int64
	lapRecords  atomic.Int64
	swept       atomic.Uint64
	laps        atomic.Uint64
	rechecks    atomic.Uint64
	written     atomic.Uint64
	writeErrors atomic.Uint64
}

func (m *metrics) count(class string) {
	if class == "" {
		class = "ok"
	}
	i := slices.Index(results, class)
	if i < 0 {
		i = len(results) - 1
	}
	m.checks[i].Add(1)
}

// AppendMetrics appends the checker's families to a /metrics page. The
// broken URLs per namespace are read from the database, so every node of a
// cluster shows the leader's figures.
func (c *Checker) AppendMetrics(b []byte) []byte {
	const checks = "pidnode_linkcheck_checks_total"
	b = promtext.Header(b, checks, promtext.Counter, "Link checks by result: ok, or the error class (http: a final status other than 2xx).")
	for i, r := range results {
		b = promtext.Uint(b, checks, c.m.checks[i].Load(), promtext.L("result", r))
	}
	b = promtext.CounterFamily(b, "pidnode_linkcheck_rechecks_total", "Early rechecks of failing and recovering URLs.", c.m.rechecks.Load())
	b = promtext.CounterFamily(b, "pidnode_linkcheck_records_swept_total", "Records the sweep has passed (checked or without URLs to check).", c.m.swept.Load())
	b = promtext.CounterFamily(b, "pidnode_linkcheck_laps_total", "Sweeps over every record completed.", c.m.laps.Load())
	b = promtext.CounterFamily(b, "pidnode_linkcheck_results_written_total", "Link check results written to the database.", c.m.written.Load())
	b = promtext.CounterFamily(b, "pidnode_linkcheck_write_errors_total", "Failed writes of link check results (retried).", c.m.writeErrors.Load())
	b = promtext.GaugeFamily(b, "pidnode_linkcheck_queued", "Link checks waiting in the hosts' queues.", c.m.queued.Load())
	b = promtext.GaugeFamily(b, "pidnode_linkcheck_in_flight", "Link checks being made now.", c.m.inflight.Load())
	b = promtext.GaugeFamily(b, "pidnode_linkcheck_hosts", "Hosts with a queue of link checks.", c.m.hosts.Load())
	b = promtext.GaugeFamily(b, "pidnode_linkcheck_lap_records", "Records in the current sweep's lap.", c.m.lapRecords.Load())
	const broken = "pidnode_linkcheck_broken_targets"
	b = promtext.Header(b, broken, promtext.Gauge, "Broken URLs per namespace (prefix/svc/namespace).")
	var counts map[string]uint64
	_ = c.reg.View(func(tx registry.Tx) error { counts = brokenCounts(tx.Tx); return nil })
	names := make([]string, 0, len(counts))
	for ns := range counts {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		b = promtext.Uint(b, broken, counts[ns], promtext.L("namespace", strings.TrimSuffix(ns, "/")))
	}
	return b
}
