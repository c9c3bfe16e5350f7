// Package linkcheck is the link checker (docs/product.md §4.4): a
// background job that visits every identifier's target URL and its
// representation variants' URLs once per interval, spread evenly over it,
// politely (one request at a time per host, a minimum delay between a host's
// requests, a global cap on concurrent checks, HEAD before a bounded GET),
// through internal/outbound's client, which refuses non-public addresses
// after DNS resolution. It keeps each URL's state (ok, failing, broken,
// recovering) in the registry's link check bucket and audits the changes to
// broken and back, which the namespace's change feed shows.
//
// It runs as a job of cmd/pidnode (on one node of a cluster, the election's
// leader) and writes through the Writer it is given, as admin does, so that
// in cluster mode its results are cluster data.
//
// It must not: run work on the resolver's path (it reads the records bucket
// at its own pace, in its own transactions), import admin, cache or the
// fronts, or send anything but a plain HEAD or GET with its User-Agent.
package linkcheck
