package main

import (
	"io"
	"runtime/debug"

	"pidnode/internal/promtext"
	"pidnode/internal/shed"
)

// writeMetrics is the fronts' and the cache's part of the admin listener's
// /metrics (admin writes its own, the store's and build info first). The
// fronts and the cache keep atomic counters and expose snapshots (Stats); the
// text is written here, at scrape time, so no hot path does more than an
// atomic add. Names and labels follow docs/architecture.md practice 13;
// admin's test lints the format and cmd/pidnode's test lints this output on a
// running node.
func (n *node) writeMetrics(w io.Writer) error {
	b := make([]byte, 0, 8<<10)

	cs := n.cache.Stats()
	b = promtext.CounterFamily(b, "pidnode_cache_hits_total", "Cache lookups answered from a fresh entry.", cs.Hits)
	b = promtext.CounterFamily(b, "pidnode_cache_misses_total", "Cache lookups that went to the database (coalesced or not).", cs.Misses)
	u := n.cache.Usage()
	// cause from a fixed set: bytes (over the budget), entries (the entry
	// cap), invalidation (a write, import or restore), expiry (an expired
	// negative or MaxAge entry replaced on reload).
	const ev = "pidnode_cache_evictions_total"
	b = promtext.Header(b, ev, promtext.Counter, "Cache entries removed, by cause.")
	b = promtext.Uint(b, ev, u.EvictedBytes, promtext.L("cause", "bytes"))
	b = promtext.Uint(b, ev, u.EvictedEntries, promtext.L("cause", "entries"))
	b = promtext.Uint(b, ev, u.Invalidated, promtext.L("cause", "invalidation"))
	b = promtext.Uint(b, ev, u.Expired, promtext.L("cause", "expiry"))
	b = promtext.CounterFamily(b, "pidnode_cache_not_admitted_total", "Misses answered but not kept: a first miss of the handle while its cache shard was full.", u.NotAdmitted)
	b = promtext.GaugeFamily(b, "pidnode_cache_entries", "Cache entries held.", int64(u.Entries))
	b = promtext.GaugeFamily(b, "pidnode_cache_bytes", "Bytes charged to the cache's entries (records, public views, rendered views, encodings).", u.Bytes)
	b = promtext.GaugeFamily(b, "pidnode_cache_budget_bytes", "The cache's memory budget (cache_bytes): its entries, the statistics table, the DNS memo and the collector's room.", n.budget)
	b = promtext.GaugeFamily(b, "pidnode_cache_entries_limit_bytes", "The part of the budget the cache's entries may hold.", u.Budget)
	b = promtext.GaugeFamily(b, "pidnode_go_memory_limit_bytes", "The Go runtime's soft memory limit (GOMEMLIMIT, or set from the cache budget).", debug.SetMemoryLimit(-1))
	b = promtext.GaugeFamily(b, "pidnode_go_gc_percent", "The Go collector's target (GOGC: 400 unless set in the environment).", gcPercentNow())

	if n.stats != nil {
		b = n.stats.AppendMetrics(b) // pidnode_stats_*: the statistics table, flushes
	}

	// One family for every front: kind from {redirect, noredirect, api, linkset, dns,
	// hdl}, result from a small fixed set per kind.
	const res = "pidnode_resolver_resolutions_total"
	b = promtext.Header(b, res, promtext.Counter, "Resolutions by front (kind) and outcome (result).")
	if n.resolver != nil {
		for _, r := range n.resolver.Stats().Resolutions() {
			b = promtext.Uint(b, res, r.N, promtext.L("kind", r.Kind), promtext.L("result", r.Result))
		}
	}
	if n.dns != nil {
		s := n.dns.Stats()
		for _, r := range []struct {
			result string
			n      uint64
		}{{"found", s.NoError}, {"nodata", s.NoData}, {"not_found", s.NXDomain}, {"refused", s.Refused},
			{"error", s.ServFail}, {"bad_request", s.Other}} {
			b = promtext.Uint(b, res, r.n, promtext.L("kind", "dns"), promtext.L("result", r.result))
		}
	}
	if n.hdl != nil {
		s := n.hdl.Stats()
		b = promtext.Uint(b, res, s.Requests-min(s.Requests, s.Errors), promtext.L("kind", "hdl"), promtext.L("result", "answered"))
		b = promtext.Uint(b, res, s.Errors, promtext.L("kind", "hdl"), promtext.L("result", "error"))
		b = promtext.Uint(b, res, s.Dropped, promtext.L("kind", "hdl"), promtext.L("result", "dropped"))
	}
	if n.dns != nil {
		b = n.dns.AppendMetrics(b) // pidnode_dns_*: queries, responses by code, truncation, RRL
	}
	if n.hdl != nil {
		s := n.hdl.Stats()
		b = promtext.CounterFamily(b, "pidnode_hdl_too_busy_total", "Certified native requests answered RC 3 by the per-source signed-reply limit (their turn was more than the wait away).", s.TooBusy)
		b = promtext.CounterFamily(b, "pidnode_hdl_signed_waits_total", "Waits of certified native requests for their turn under the per-source signed-reply limit.", s.SignedWaits)
		b = promtext.CounterFamily(b, "pidnode_hdl_tcp_refused_total", "Native-protocol TCP connections closed at accept by the connection limits (total, per source).", s.ConnsRefused)
		b = promtext.GaugeFamily(b, "pidnode_hdl_tcp_connections", "Native-protocol TCP connections open now.", int64(s.Conns))
	}
	if n.resolver != nil {
		b = promtext.CounterFamily(b, "pidnode_resolver_rate_limited_total", "HTTP resolver requests refused with 429 by the per-address limit.", n.resolver.Stats().RateLimited)
	}
	if n.conns != nil {
		b = shed.AppendMetrics(b, n.conns, n.accepts...) // pidnode_listener_*: connections, refusals, accept retries, budget
	}
	if n.cluster != nil {
		b = n.cluster.AppendMetrics(b) // pidnode_cluster_*: applied revision, lag, etcd round trip
	}
	if n.webhooks != nil {
		b = n.webhooks.AppendMetrics(b) // pidnode_webhook_*: deliveries, endpoints, backlog
	}
	if n.linkcheck != nil {
		b = n.linkcheck.AppendMetrics(b) // pidnode_linkcheck_*: checks by result, broken URLs per namespace
	}
	_, err := w.Write(b)
	return err
}
