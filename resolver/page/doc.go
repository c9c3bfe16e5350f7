// Package page writes the HTML of the public resolver's pages
// (docs/product.md §5, docs/handle-protocol.md §2) as bytes: the frame and
// style sheet every page shares, the escaping of every string that goes on a
// page, and the pages themselves — the ?noredirect values page, the
// ?action=showurls locations page, the 410 tombstone, the reserved, message
// and home pages, and the tiny page sent with a redirect.
//
// It knows nothing of HTTP, of the cache or of when a page is built: the
// resolver decides which page an answer needs, builds it once per cache entry
// where it can (Compact keeps only a page's own parts) and sends it. It must
// not decide what a record shows: its callers hand it the values with public
// read only (Record), and the rules it shows by (handlev.ChooseTarget,
// handlev.AppendTargetURL, the resolver's weight rule) are those the
// resolver redirects by.
//
// Every string from a request or a record is escaped (AppendHTML for
// attribute values, AppendText for text, and characters that hide or reorder
// text made visible in record data), so pages are valid UTF-8 and
// well-formed XML; links go only to URLs the resolver would redirect to and
// to mailto: addresses. Pages link the one style sheet (StylePath) and carry
// no script or inline style, so the resolver's Content-Security-Policy can
// forbid both.
//
// The functions are safe for concurrent use; a Page and Style are shared and
// never modified.
package page
