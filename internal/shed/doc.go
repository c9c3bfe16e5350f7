// Package shed keeps a TCP listener serving when the process runs short of
// connections or file descriptors: it sheds load instead of dying. Every TCP
// front of the node (resolver, admin, DNS over TCP, native protocol) accepts
// through one of its Listeners.
//
// A Listener's Accept never returns a temporary error. EMFILE, ENFILE,
// ENOBUFS, ENOMEM, ECONNABORTED and whatever else net/http's accept loop
// would retry are logged (at most one line per LogEvery) and retried after a
// pause that starts at 5 ms and doubles to 1 s, as net/http's Server.Serve
// does; only a closed listener or an error no server retries ends Accept.
// Out of descriptors, a Spare (one descriptor held in reserve) is let go for
// the length of one accept, and that connection is closed at once, so the
// backlog drains instead of the loop spinning on EMFILE.
//
// A Budget counts the accepted connections of the whole process against a
// limit derived from the descriptor limit (RLIMIT_NOFILE), minus a share for
// everything else the process opens. Its last Reserve slots are open to
// Admin listeners only: when the public fronts have used theirs, a new public
// connection is accepted and closed at once while the admin listener (its
// /healthz, /readyz and writes) and every connection already open keep
// working.
//
// A Listener may also count connections per source with an
// internal/connlimit Limiter (its per-source, high-water and heavy rules).
//
// The package imports the standard library, internal/connlimit and
// internal/promtext only. It does not set deadlines: first-byte and
// handshake limits belong to the server above it (internal/conntimeout for
// the resolver, net/http's ReadHeaderTimeout for the admin listener).
package shed
