package cache

import "pidnode/internal/promtext"

// AppendMetrics appends the cache's families (pidnode_cache_*, docs/architecture.md
// practice 13) to b and returns it. The counters are atomic and summed here,
// at scrape time, so a lookup does no more than an atomic add. Safe for
// concurrent use with lookups.
func (c *Cache) AppendMetrics(b []byte) []byte {
	cs := c.Stats()
	b = promtext.CounterFamily(b, "pidnode_cache_hits_total", "Cache lookups answered from a fresh entry.", cs.Hits)
	b = promtext.CounterFamily(b, "pidnode_cache_misses_total", "Cache lookups that went to the database (coalesced or not).", cs.Misses)
	u := c.Usage()
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
	b = promtext.GaugeFamily(b, "pidnode_cache_budget_bytes", "The cache's memory budget (cache_bytes): its entries, the statistics table, the DNS memo and the collector's room.", c.memory)
	b = promtext.GaugeFamily(b, "pidnode_cache_entries_limit_bytes", "The part of the budget the cache's entries may hold.", u.Budget)
	return b
}
