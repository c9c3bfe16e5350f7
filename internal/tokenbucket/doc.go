// Package tokenbucket is a bounded table of token buckets, one per key: the
// rate limits of the admin API (per key and per SNAA), the HTTP resolver
// (per client address) and the DNS front's response-rate limiting (per
// source prefix).
//
// Each bucket is kept as a GCRA "theoretical arrival time", one int64 per
// key: the instant at which the bucket is full again. That is the same limit
// as a bucket of Burst tokens refilled at Rate per second, without floating
// point or a per-key allocation.
//
// Time is injected: every call passes now (unix nanoseconds), so a caller
// uses the clock it already has (a request's arrival time, a test clock).
//
// Memory is bounded by Config.Size. When a new key arrives at a full shard,
// the keys whose bucket is full again are forgotten first (a full bucket is
// indistinguishable from a new key, so nothing is lost); if that frees too
// little, arbitrary keys are forgotten until an eighth of the shard is free.
// Forgetting a key only ever gives it a full bucket: the error is towards
// serving.
//
// Take on a key already in the table allocates nothing; a new key may grow
// its shard's map. A Table is safe for concurrent use. It imports the
// standard library only.
package tokenbucket
