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
//     packages'),
//     /openapi.json, /healthz, /readyz and /metrics;
//   - the index page at / (links to the console, the form, the API
//     description and the metrics; every other unknown path is a
//     problem+json 404), the public application form and route (/apply,
//     /apply/v1/…, apply.go)
//     and the HTML console for SNAAs and the operator (/console/, console*.go,
//     templates/), docs/product.md §4.2: the session cookie (the sessions
//     themselves are package access's), the console's reads of
//     identifiers through package read, its creates, updates and bulks
//     through package write, its key actions through package access, the
//     operator pages' reads from the registry, and the remaining actions
//     (approve, reject, change an SNAA, statistics, link checks) run
//     through the API route's own handler (console_call.go);
//   - who may do what: admitting a request whose key package access has
//     found (the SNAA not suspended, the rate limit, writes possible), the
//     SNAA's prefixes and namespace, the decisions on applications and
//     SNAAs; the keys themselves (secrets stored only as SHA-256, looked
//     up by hash in constant time, cached, issued within the SNAA's limit,
//     revoked) are package access's, through which every operator write
//     commits with its audit entries (opWrite);
//   - the namespace route table (nsroutes.go), into which the features in
//     packages of their own (stats, linkcheck, webhook) hand their
//     internal/route rows, with what the API lends their handlers
//     (route.Call: the caller, the body decoder, the maintenance refusal);
//   - reading a request's body and mapping errors to problems; the reads
//     of identifiers (one, a namespace's page, the history) are package
//     read's; the identifier writes themselves (their checks in order,
//     idempotency, id minting, the audit entry, the cache invalidation)
//     are package write's, which the create, update and bulk handlers
//     call.
//
// What it stores (applications, SNAAs, keys, idempotency records, the audit
// log, the URL index) it stores through package registry,
// which also commits identifier writes in groups.
//
// It must not: bind listeners (cmd/pidnode does), import cache or resolver (the
// write service invalidates the read path through write.Invalidator), write
// an identifier other than through package write, or write outside one
// registry transaction. Every write is all-or-nothing, audited in the same
// transaction, and invalidated in the cache before the reply, so the next
// resolution on this node shows it (read-your-writes). The per-key rate
// limit charges a bulk its items.
//
// Reserved custom ids come from the namespace route table (nsroutes.go),
// which the write service is handed: "bulk", "stats", "events",
// "linkcheck", "webhooks" and ids under "webhooks/", and ids whose last
// segment is "history", "stats" or "linkcheck", which would collide with
// routes.
//
// Routes: every API route is registered with its OpenAPI operation
// (Server.handle), and /openapi.json is built from what is registered; the
// routes under a namespace come from one table (nsroutes.go) whose rows
// each feature's file builds. A page of the console or the form is not an
// API route and is not documented there.
//
// Errors reach clients as RFC 9457 problem+json (errors.go); one function,
// problemOf, maps errors to problems, for replies (writeError) and for the
// results of bulk items alike.
package admin
