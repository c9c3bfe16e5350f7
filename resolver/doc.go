// Package resolver is pidnode's public HTTP front (docs/product.md §5), built on fasthttp.
//
// It owns:
//   - the Handle proxy behaviour on /{handle} (docs/handle-protocol.md §2): both handle
//     forms, the 302 redirect to the first URL value (then URL.*), ?noredirect /
//     action=showvalues pages, ?urlappend, ?index and ?type, the 404 and
//     "Prefix X not found" pages, HS_ALIAS 301s;
//   - the locations of a 10320/loc value and their selection (?locatt,
//     action=metadata, action=showurls; select.go), content negotiation over
//     typed locations and representation variants (accept.go), FAIR
//     Signposting Link fields, 10320/links and 10320/headers (extras.go,
//     signpost.go) and the linksets on /api/linksets/{handle} (linkset.go),
//     §2.1–§2.4;
//   - the status-driven pages (docs/product.md §3, §5): SUBMITTED → 404 "reserved, not yet
//     public", OBSOLETED and DEPRECATED → 410 tombstone, a generated id with a bad
//     check character → 404 "malformed";
//   - the Handle JSON API on /api/handles/{handle} (docs/handle-protocol.md §1):
//     filters and their union, pretty, JSONP, CORS, POST parameters, the
//     responseCode → HTTP status map;
//   - the home page with a lookup form, /lookup, /healthz, /robots.txt and
//     /favicon.ico;
//   - the listener's limits: timeouts, header size (431), body size (413),
//     concurrency, and the optional per-client-address rate limit (429 with
//     Retry-After, ratelimit.go);
//   - counting (metrics.go): resolutions by kind and result for /metrics
//     (AppendResolutions), and each found record's resolutions into a *cache.Counter for
//     the statistics admin flushes — one atomic add on the counter the cache
//     entry keeps (cache.Entry.CountHit, which DNS and the native protocol
//     count through too), so a hit still allocates nothing.
//
// It reads records only through *cache.Cache. Render builds each cache entry's
// view on the miss that loads it (cmd passes it as cache.Config.Render), but
// only the default target and its body. The extras (locations, negotiable
// representations, Link fields, record headers) are built by the first
// request that sends them, the ?noredirect, showurls, tombstone and reserved
// pages, the linksets and the public values' JSON by the first request that
// needs each, once per entry and charged to it, so a miss that only
// redirects does not HTML-escape the whole record. After that first use, a
// cache hit for a plain, negotiated or location redirect, a ?noredirect page,
// a tombstone, a linkset or an unfiltered /api/handles request allocates
// nothing (allocation_test.go).
//
// Choices this package makes where docs/handle-protocol.md leaves them open:
//   - Every request here is anonymous, so values without the public-read
//     permission are never shown (not in JSON, pages or redirect choice);
//     publicOnly=false is accepted but reveals nothing.
//   - ?noredirect and /api/handles show the full record whatever its status
//     (docs/product.md §5) for OBSOLETED and DEPRECATED records. A SUBMITTED record is
//     reserved, not yet public: every route answers as for a handle that does
//     not exist yet (404 reserved page, RC 100), like DNS and the native protocol.
//   - ?urlappend is appended verbatim, then the whole target is made safe;
//     if that would change the target's host, the urlappend is dropped.
//   - Query and form values are form-decoded ('+' is a space); the handle in
//     the path keeps '+' literal (docs/handle-protocol.md §2).
//   - A path that is not a usable handle (bad escape, invalid UTF-8, control
//     byte, dot segment, too long) is 400; a bad ?index is 400 (RC 4 on /api).
//
// It must not import store or admin, must not write anything, and must never put
// anything but an absolute http or https URL, percent-encoded and free of control
// characters, into a Location header. Every user-supplied string is HTML-escaped
// on pages and JSON-escaped in JSON.
//
// # Ownership
//
// Views returned by Render are shared by all requests; each part is immutable
// once built (the lazily built ones are published through an atomic.Pointer), and
// the handler sends their bytes with Response.SetBodyRaw and never modifies
// them.
// Per-request scratch memory comes from a sync.Pool and is never retained past
// the request.
package resolver
