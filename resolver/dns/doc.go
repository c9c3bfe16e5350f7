// Package hdldns serves handles over DNS (docs/product.md §6, docs/handle-protocol.md §4).
// It lives in directory resolver/dns but is named hdldns so that it does not
// shadow github.com/miekg/dns, which it is built on; import it as
//
//	import hdldns "pidnode/resolver/dns"
//
// # What it owns
//
//   - The zone → prefix mapping and the owner-name → handle rule (labels under
//     zone Z of prefix P read right to left: l1.l2.Z is P/l2/l1; the apex is P;
//     "hx--" labels are hex-unescaped, so any handle is reachable): name.go.
//   - Answers built on every query from the cached record's public view
//     (cache.Entry.Public), the one every front renders from: a value without
//     public read is never answered, SUBMITTED is NXDOMAIN, OBSOLETED and
//     DEPRECATED answer TXT with their status only. TXT and URI carry the
//     redirect target (handlev.ChooseTarget); any other type comes from DNS.<T>
//     values, parsed on first use and kept in a memo bounded in bytes that
//     holds cache entries weakly (memo.go). Nothing is copied into a zone.
//   - TTLs from the values (RFC 2181 §5.2), negative answers with the zone's
//     SOA (RFC 2308), REFUSED outside the zones and for transfers, FORMERR,
//     NOTIMP and BADVERS as miekg/dns would, truncation with TC over UDP.
//   - UDP response-rate limiting per source prefix, off by default, with
//     BIND's "slip" (rrl.go).
//   - Its own UDP loop on a *net.UDPConn (udp.go): a few workers that parse
//     the common query into reused storage, so a cached answer allocates
//     nothing end to end; other requests go through dns.Msg.Unpack and get
//     miekg's own error replies (udp_test.go holds the loop to miekg's bytes).
//   - Its counters, as Server.Stats and as pidnode_dns_* through
//     Server.WriteMetrics (metrics.go).
//
// # What it must not do
//
// It imports handlev, cache, the internal leaves and miekg/dns only; it never
// imports the store or the admin API, and never writes: records reach it
// through the cache. It serves no recursion, no zone transfers and no DNSSEC,
// and logs nothing per query.
//
// # Caveats
//
// Every zone's prefix must be served by the Namer, or New fails with a
// *ConfigError; the root zone is not accepted. A URL longer than miekg/dns
// can pack as a URI target (about 1 KB) gets no URI record. Replies come
// from a sync.Pool and point into cache entries' bytes: a reply must be
// released after it is written and never kept.
package hdldns
