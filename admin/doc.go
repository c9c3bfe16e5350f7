// Package admin is pidnode's keyed admin API (SPEC §4, §4.1): the separate
// net/http listener through which the operator onboards Sub-Name Assigning
// Authorities (SNAAs) and issues their API keys, and through which each SNAA
// creates, updates and reads the identifiers of its own namespace.
//
// It owns:
//   - the routes /ops/v1/… (operator key), /pid/v2/… and /testpid/v2/… (SNAA keys),
//     /openapi.json, /healthz and /readyz, all served by Server.Handler;
//   - applications, SNAAs, API keys (stored only as SHA-256), the idempotency
//     records and the append-only audit log, kept as JSON in the store buckets
//     BucketApplications, BucketSNAAs, BucketKeys, BucketIdempotency and BucketAudit;
//   - the metadata model (model data loaded with LoadModel; the pid4cat model is
//     embedded as DefaultModel) and validation of write payloads against it;
//   - building handle records in the layout of SPEC §3 from validated payloads.
//
// It must not: bind listeners (cmd/pidnode does), import cache or resolver (it
// invalidates the read path through the Invalidator interface it declares), or
// write a record outside one store transaction. Every write is all-or-nothing,
// audited in the same transaction, and invalidated in the cache before the reply.
//
// Errors reach clients as RFC 9457 problem+json (see errors.go); the mapping from
// errors to HTTP statuses lives in one place, writeError.
package admin
