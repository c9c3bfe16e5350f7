package main

import (
	"fmt"
	"io"
)

// writeMetrics is the fronts' and the cache's part of the admin listener's
// /metrics (admin writes its own, the store's and build info first). The
// fronts and the cache keep atomic counters and expose snapshots (Stats); the
// text is written here, at scrape time, so no hot path does more than an
// atomic add. Names and labels follow STYLE practice 13; admin's test lints
// the format and cmd/pidnode's test lints this output on a running node.
func (n *node) writeMetrics(w io.Writer) error {
	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	head := func(name, typ, help string) { p("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ) }

	cs := n.cache.Stats()
	head("pidnode_cache_hits_total", "counter", "Cache lookups answered from a fresh entry.")
	p("pidnode_cache_hits_total %d\n", cs.Hits)
	head("pidnode_cache_misses_total", "counter", "Cache lookups that went to the database (coalesced or not).")
	p("pidnode_cache_misses_total %d\n", cs.Misses)
	head("pidnode_cache_evictions_total", "counter", "Cache entries pushed out by capacity.")
	p("pidnode_cache_evictions_total %d\n", cs.Evictions)
	head("pidnode_cache_entries", "gauge", "Cache entries held.")
	p("pidnode_cache_entries %d\n", cs.Entries)

	head("pidnode_stats_pending_keys", "gauge", "Identifiers with resolution counts not yet written to the database.")
	p("pidnode_stats_pending_keys %d\n", n.counter.Keys())
	head("pidnode_stats_dropped_total", "counter", "Resolutions not counted because the in-memory table was full.")
	p("pidnode_stats_dropped_total %d\n", n.counter.Dropped())

	// One family for every front: kind from {redirect, noredirect, api, dns,
	// hdl}, result from a small fixed set per kind.
	head("pidnode_resolver_resolutions_total", "counter", "Resolutions by front (kind) and outcome (result).")
	if n.resolver != nil {
		for _, r := range n.resolver.Stats().Resolutions() {
			p("pidnode_resolver_resolutions_total{kind=%q,result=%q} %d\n", r.Kind, r.Result, r.N)
		}
	}
	if n.dns != nil {
		s := n.dns.Stats()
		for _, r := range []struct {
			result string
			n      uint64
		}{{"found", s.NoError}, {"nodata", s.NoData}, {"not_found", s.NXDomain}, {"refused", s.Refused},
			{"error", s.ServFail}, {"bad_request", s.Other}} {
			p("pidnode_resolver_resolutions_total{kind=\"dns\",result=%q} %d\n", r.result, r.n)
		}
	}
	if n.hdl != nil {
		s := n.hdl.Stats()
		p("pidnode_resolver_resolutions_total{kind=\"hdl\",result=\"answered\"} %d\n", s.Requests-min(s.Requests, s.Errors))
		p("pidnode_resolver_resolutions_total{kind=\"hdl\",result=\"error\"} %d\n", s.Errors)
		p("pidnode_resolver_resolutions_total{kind=\"hdl\",result=\"dropped\"} %d\n", s.Dropped)
	}
	if n.dns != nil && err == nil {
		err = n.dns.WriteMetrics(w) // pidnode_dns_*: queries, responses by code, truncation, RRL
	}
	if n.resolver != nil {
		head("pidnode_resolver_rate_limited_total", "counter", "HTTP resolver requests refused with 429 by the per-address limit.")
		p("pidnode_resolver_rate_limited_total %d\n", n.resolver.Stats().RateLimited)
	}
	return err
}
