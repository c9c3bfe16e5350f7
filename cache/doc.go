// Package cache is the read path's memory (docs/product.md §8, docs/architecture.md practice 7): a sharded LRU
// of immutable, pre-encoded entries in front of a Source (in production the store).
//
// It owns:
//   - the Entry: a record and everything the fronts send for it, each built once per
//     load: the public view (handlev.Public: what an anonymous client may see, the
//     one rule every front renders from) when loaded, a front-specific View from
//     Config.Render when loaded, the JSON and RFC 3651 wire encodings of the public
//     values on first use, so a miss pays only for what it sends;
//   - negative entries for handles that do not exist, aged out after Config.NegativeTTL;
//   - miss coalescing: concurrent misses for one key make one Source.Load;
//   - the short-form → full-form lookup fallback on a miss (Config.Alt);
//   - invalidation of a key and its Alt counterpart, without losing a race against a
//     load that is in flight.
//   - the memory budget (Config.Bytes): every entry is charged for the heap it
//     holds, each object at its allocator size class (size.go), at load and again
//     as each part is built (Entry.Charge, which a front's View calls too); a shard
//     over its share of the budget evicts its least recently used entries.
//     Config.Entries is only a cap on their number.
//   - admission (admit.go): once a shard is full, a loaded entry is added only
//     for a key missed before within the shard's recent misses; a one-off miss
//     is answered from an entry that is not kept (Config.AdmitAll turns this off).
//
// A hit allocates nothing and copies nothing: the caller's key bytes are used for the
// lookup as they are. Time is injected (Config.Now) and checked on read; there is no
// sweeper goroutine. Entries are shared by all readers and must never be modified.
//
// The package declares the Source interface it reads through and must never import
// the store (or any front); it imports handlev, golang-lru, x/sync and the
// internal leaves only. It does not log. Its counters are atomic and read through
// Stats and Usage; AppendMetrics writes them as the pidnode_cache_* families at
// scrape time (metrics.go), so a lookup never formats anything.
package cache
