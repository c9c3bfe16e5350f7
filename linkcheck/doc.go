// Package linkcheck is the link check feature (docs/product.md §4.4), whole:
//
//   - the checker, a background job that visits every identifier's target
//     URL and its representation variants' URLs once per interval, spread
//     evenly over it, politely (one request at a time per host, a minimum
//     delay between a host's requests, a global cap on concurrent checks,
//     HEAD before a bounded GET), through internal/outbound's client, which
//     refuses non-public addresses after DNS resolution; it keeps each URL's
//     state (ok, failing, broken, recovering) and audits the changes to
//     broken and back, which the namespace's change feed shows;
//   - the results' storage (store.go): store.BucketLinkcheck, its
//     per-namespace, due and broken-count indexes, written in the result's
//     transaction so that they replicate with it, and the one listing of a
//     namespace's results (List, with its state filter States), which the
//     routes and the console's page both read;
//   - the API's routes GET …/{ns}/linkcheck and …/{ns}/{id}/linkcheck
//     (routes.go: JSON or CSV) as rows of the namespace route table
//     (internal/route), which serve the results whether or not the checker
//     runs on this node;
//   - its metrics (pidnode_linkcheck_*).
//
// The result type and its states are registry's (registry.LinkResult),
// because the audit log, the feed and the console name them too.
//
// cmd/pidnode builds the checker from its flags and runs Run as a job (on
// one node of a cluster, the election's leader); it writes through the
// Writer it is given, as admin does, so that in cluster mode its results
// are cluster data. cmd hands Routes to the API, which checks the caller's
// key and namespace before a handler runs and writes its errors as
// problem+json.
//
// It must not: run work on the resolver's path (it reads the records bucket
// at its own pace, in its own transactions), import admin, console, cache
// or the fronts, or send anything but a plain HEAD or GET with its User-Agent.
package linkcheck
