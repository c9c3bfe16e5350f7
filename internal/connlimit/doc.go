// Package connlimit counts the connections a listener holds per source, so
// that one client cannot take every slot: the native protocol's TCP listener
// and DNS over TCP use it, and internal/shed applies it to the resolver's and
// the admin listener's.
//
// A source is an IPv4 address or an IPv6 /64 (one customer's usual
// allocation, so a client cannot multiply itself by picking addresses in its
// own subnet). Three rules refuse a new connection:
//
//   - the listener holds Max connections already;
//   - the source holds PerSource already;
//   - the listener holds HighWater or more and the source holds Heavy or
//     more: the slots above the high-water mark are kept for sources that
//     hold few connections, so a handful of heavy sources together cannot
//     fill the listener either.
//
// A Limiter is safe for concurrent use; Acquire and Release take one mutex
// and allocate only when a source appears that holds nothing yet. Memory is
// bounded by Max (a source holding nothing is forgotten). The package
// imports the standard library only and knows nothing of the protocols.
package connlimit
