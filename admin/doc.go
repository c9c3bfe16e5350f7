// Package admin is pidnode's keyed admin API (SPEC §4, §4.1): the separate
// net/http listener through which the operator onboards Sub-Name Assigning
// Authorities (SNAAs) and issues their API keys, and through which each SNAA
// creates, updates and reads the identifiers of its own namespace.
//
// It owns:
//   - the routes served by Server.Handler: /ops/v1/… (operator key: applications,
//     SNAAs, keys, audit log, backup), /pid/v2/… and /testpid/v2/… (SNAA keys:
//     create with generated or custom ids, merge update, read, list and search
//     by URL, history, resolution statistics, bulk; DELETE answers 405),
//     /openapi.json, /healthz, /readyz and /metrics;
//   - the URL index (BucketURLIndex, urlindex.go), maintained by every write in
//     its transaction and rebuilt by ReindexURLs after offline imports;
//   - resolution statistics (BucketStats, stats.go): counts the resolvers keep
//     in memory (a CountSource, in practice *cache.Counter) are flushed every
//     StatsInterval by RunStats, by UTC day, per identifier and per namespace,
//     in short transactions in key order with rests between them, so that a
//     flush never holds a core the resolvers need for long;
//   - applications, SNAAs, API keys (stored only as SHA-256 of the secret, looked
//     up by hash and compared in constant time), idempotency records and the
//     append-only audit log, kept as JSON in the store buckets BucketApplications,
//     BucketSNAAs, BucketKeys, BucketIdempotency and BucketAudit;
//   - the order in which a write is checked (check.go), the same for the single
//     routes and every bulk item; the checks of the payload against the
//     metadata model and the building of handle records are package model's.
//
// It must not: bind listeners (cmd/pidnode does), import cache or resolver (it
// invalidates the read path through the Invalidator interface it declares), or
// write outside one store transaction. Every write is all-or-nothing, audited in
// the same transaction, and invalidated in the cache before the reply, so the
// next resolution on this node shows it (read-your-writes). Identifier writes
// are committed in groups (commit.go): one transaction and one fsync for all
// the writes that waited while the previous group committed; each write's
// expensive part (validation, record and audit JSON) is done before it joins.
//
// Reserved custom ids: "bulk", "stats" and ids whose last segment is
// "history" or "stats", which would collide with routes.
//
// Errors reach clients as RFC 9457 problem+json (errors.go); one function,
// writeError, maps errors to statuses.
package admin
