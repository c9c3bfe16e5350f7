// Package admin is pidnode's keyed admin API (docs/product.md §4, §4.1): the separate
// net/http listener through which the operator onboards Sub-Name Assigning
// Authorities (SNAAs) and issues their API keys, and through which each SNAA
// creates, updates and reads the identifiers of its own namespace.
//
// It owns:
//   - the routes served by Server.Handler: /ops/v1/… (operator key: applications,
//     SNAAs, keys, audit log, backup), /pid/v2/… and /testpid/v2/… (SNAA keys:
//     create with generated or custom ids, merge update, read, list and search
//     by URL, history, bulk, the SNAA's own keys (snaakeys.go); DELETE of
//     an identifier answers 405; the features' routes under the namespace
//     (statistics, link checks, the change feed, webhooks) are their
//     packages'), the public application route /apply/v1/…,
//     /openapi.json, /healthz, /readyz and /metrics;
//   - the bearer key of a request (package access finds it, and admits it:
//     suspension, rate limits, maintenance), the SNAA's prefixes and
//     namespace on a path;
//   - the namespace route table (nsroutes.go), into which the features in
//     packages of their own (stats, linkcheck, webhook) hand their
//     internal/route rows, with what the API lends their handlers
//     (route.Call: the caller, the body decoder, the maintenance refusal);
//   - reading a request's body and writing the reply, problem+json
//     included.
//
// The work behind the routes is done below: the identifier writes (their
// checks in order, idempotency, id minting, the audit entry, the cache
// invalidation) by package write, the reads of identifiers by package read,
// the keys and admission by package access, the operator's decisions
// (applications, SNAAs) by package operator. The HTML console and the
// application form (the pages at /, /apply and /console/) are package
// console's: New builds it over the same services and Handler serves it on
// the same mux, so that a page and a route answer one request the same way.
// admin knows nothing else of it.
//
// It stores nothing itself: the features' data (link-check results,
// webhooks) is their packages', which store it through package registry.
//
// It must not: bind listeners (cmd/pidnode does), import cache or resolver (the
// write service invalidates the read path through write.Invalidator), write
// an identifier other than through package write, or write outside one
// registry transaction. The per-key rate limit charges a bulk its items.
//
// Reserved custom ids come from the namespace route table (nsroutes.go),
// which the write service is handed: "bulk", "stats", "events",
// "linkcheck", "webhooks" and ids under "webhooks/", and ids whose last
// segment is "history", "stats" or "linkcheck", which would collide with
// routes.
//
// Routes: each route set is a type of its own, opsAPI (the operator's) and
// snaaAPI (an SNAA's), both holding the shared gate (keys, auth, limits);
// every API route is registered with its OpenAPI operation (router.handle),
// and /openapi.json is built from what is registered; the
// routes under a namespace come from one table (nsroutes.go) whose rows
// each feature's file builds. A console page is not an API route and is not
// documented there.
//
// Errors reach clients as RFC 9457 problem+json (errors.go); one function,
// problemOf, maps errors to problems (through internal/httperr, which the
// console shares), for replies (writeError) and for the results of bulk
// items alike.
package admin
