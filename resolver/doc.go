// Package resolver is pidnode's public HTTP front (docs/product.md §5), built
// on fasthttp. It owns:
//   - the Handle proxy on /{handle} (docs/handle-protocol.md §2): redirects,
//     HS_ALIAS 301s, ?noredirect, ?urlappend, ?index and ?type, the locations
//     of a 10320/loc value and their selection (select.go), content
//     negotiation (accept.go), FAIR Signposting Link fields, 10320/links and
//     10320/headers (extras.go, signpost.go) and the linksets on
//     /api/linksets/{handle} (linkset.go);
//   - the status-driven answers: SUBMITTED → 404 reserved, OBSOLETED and
//     DEPRECATED → 410 tombstone, a generated id with a bad check character →
//     404 malformed;
//   - the Handle JSON API on /api/handles/{handle} (api.go), the home page,
//     /lookup, /healthz, /robots.txt and the style sheet;
//   - the listener's limits (timeouts, 431, 413, concurrency, the per-address
//     rate limit of ratelimit.go) and its counts (metrics.go; each found
//     record's resolutions through cache.Entry.CountHit).
//
// Which page an answer sends is decided here; its HTML is written by
// resolver/page.
//
// It reads records only through *cache.Cache. It must not import store or
// admin, must not write anything, and must never put anything but an absolute
// http or https URL, percent-encoded and free of control characters, into a
// Location header. Every request is anonymous: values without public read are
// never shown or redirected to, whatever publicOnly says.
//
// Choices where docs/handle-protocol.md leaves them open: ?noredirect and
// /api/handles show an OBSOLETED or DEPRECATED record in full; a SUBMITTED one
// answers on every route as a handle that does not exist yet (404, RC 100);
// ?urlappend is appended verbatim, then the target made safe, and dropped if
// it would change the target's host; query and form values are form-decoded
// ('+' is a space), the handle in the path keeps '+' literal; a path that is
// not a usable handle is 400, as is a bad ?index (RC 4 on /api).
//
// # Caveats
//
// Render (cmd passes it as cache.Config.Render) builds on each miss only what
// a plain redirect sends: the target, its body and the handle's path form.
// The other parts of an entry's view are built by the first request that
// needs them and charged to the entry: the ?noredirect and status pages under
// a sync.Once each (concurrent first requests wait), the extras, the showurls
// page, the linksets and the rendered Link fields each published once through
// an atomic.Pointer (concurrent first requests may each build; one copy wins),
// the public values' JSON by cache.Entry.JSONBytes. After that, a hit on the
// paths of allocation_test.go allocates nothing; that test runs without -race.
//
// A view is shared by all requests and immutable once built: the handler
// sends its bytes with Response.SetBodyRaw and never modifies them.
// Per-request scratch memory comes from a sync.Pool and is never kept past the
// request.
package resolver
