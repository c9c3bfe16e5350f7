// Package hdldns serves handles over DNS (docs/product.md §6, docs/handle-protocol.md §4).
// It lives in directory resolver/dns but is named hdldns so that it does not
// shadow github.com/miekg/dns, which it is built on; import it as
//
//	import hdldns "pidnode/resolver/dns"
//
// # What it owns
//
//   - The zone → prefix mapping and the owner-name → handle rule: for a zone Z
//     mapped to prefix P, the name l1.l2…lk.Z is the handle P/lk/…/l2/l1 (labels
//     under the zone in reverse order, each after a "/"); the apex Z is the handle
//     P. Matching is ASCII case-insensitive (the storage key folds case anyway).
//   - hx-- labels: a label that starts with "hx--" (any case) is hex-unescaped.
//     After the four-byte marker, "-HH" (a dash and exactly two hex digits, any
//     case) is the byte 0xHH and every other byte stands for itself; a dash not
//     followed by two hex digits makes the name malformed (NXDOMAIN). So
//     hx--a-2fb is "a/b" and hx--2024-2d01 is "2024-01"; any handle, including one
//     with bytes a DNS label cannot carry or with "/" inside a segment, is
//     reachable. DNS presentation escapes (\. and \DDD) are undone first.
//   - Answers, built on every query from the cached record's public view
//     (cache.Entry.Public, handlev.Public), the one every front renders from:
//     a value without public read is never answered; a SUBMITTED record is
//     NXDOMAIN; OBSOLETED and DEPRECATED answer TXT with their status only.
//     Nothing is copied into a zone.
//   - TXT: the redirect target (handlev.ChooseTarget: the first public value
//     of type URL, else the first public URL.* value) as one character-string
//     per 255 bytes, followed by any public DNS.TXT values.
//   - URI (type 256, RFC 7553): priority 10, weight 1, target = that URL,
//     followed by any DNS.URI values. (A URL longer than miekg/dns can pack as
//     a URI target, about 1 KB, gets no URI record.)
//   - Any other type T: the values of type DNS.<T> (mnemonic, e.g. DNS.A) or
//     DNS.TYPE<n>, whose data is the RDATA in zone-file text (RFC 1035 §5.1;
//     RFC 3597 "\# len hex" for any type), parsed with miekg/dns on first use,
//     at most MaxRRsPerAnswer per answer, and remembered per cache entry and
//     type (memo.go: a lock-free memo bounded in bytes, Config.MemoBytes,
//     that holds cache entries weakly, so it never keeps an evicted one
//     alive; a changed record is a new entry, so nothing needs invalidating). Values that do not parse as one
//     RR of that type are skipped. A DNS.CNAME value answers queries for every other
//     type (no chasing). DNS.SOA and DNS.NS values are ignored: SOA and NS
//     exist only at the apex, from Config. ANY is answered with the TXT RRset
//     only (RFC 8482 §4.2); ANY at the apex with the SOA.
//   - TTLs from the values: relative TTLs as stored, absolute TTLs as the seconds
//     remaining (0 once passed); an RRset carries the smallest TTL of its values
//     (RFC 2181 §5.2).
//   - Lifecycle: SUBMITTED records do not exist (NXDOMAIN); OBSOLETED and
//     DEPRECATED records answer TXT "status=OBSOLETED" (or DEPRECATED) with the
//     STATUS value's TTL and nothing else (NODATA for every other type).
//   - Negative answers carry the zone's SOA in the authority section with TTL
//     min(SOA TTL, Minimum) (RFC 2308): NXDOMAIN for a name whose handle is not
//     found or cannot be formed (malformed hx-- label, too long, rejected by the
//     Namer); NODATA (NOERROR, empty answer) when the handle exists but has no
//     value for the type. Names between the apex and a handle (empty
//     non-terminals such as K7Q.svc.Z) are NXDOMAIN unless they are handles
//     themselves: the zone is not enumerable, and it is not DNSSEC-signed, so
//     resolvers do not apply RFC 8020 to it.
//   - REFUSED (authoritative bit clear) for names outside every zone, for
//     classes other than IN, and for AXFR/IXFR: the zones are not transferable.
//     FORMERR for requests without exactly one question or with more than one
//     OPT, NOTIMP for opcodes other than QUERY, BADVERS for EDNS versions > 0.
//     Responses (QR set) are never answered.
//   - Prefixes: every zone's prefix must be served by the Namer, or New fails
//     with a *ConfigError; so a query can never name an unserved prefix, and
//     every in-zone name that does not form a servable handle is NXDOMAIN.
//   - Message size: AA set, RA clear (no recursion), compression on. Over UDP
//     a response fits 512 bytes without EDNS0, or the client's advertised size
//     capped at Config.UDPSize (default 1232) with EDNS0; what does not fit is
//     dropped and TC set (miekg's Msg.Truncate), and the client retries over TCP,
//     where the full answer (up to 65535 bytes) is sent. The OPT is echoed with
//     our size, version 0 and the client's DO bit.
//   - Response-rate limiting (off by default): a token bucket per source prefix
//     (/24 for IPv4, /56 for IPv6) on UDP only. Over the limit a response is
//     dropped, except every RRLSlip-th, which is sent as a minimal TC=1 reply
//     (no records), as BIND's RRL "slip" does, so a real client behind a flooded
//     prefix still gets through over TCP while a spoofed victim receives at most
//     request-sized packets. The table is bounded (RRLTableSize).
//
// # Performance
//
// UDP on a *net.UDPConn is served by the package's own loop (udp.go) rather
// than miekg/dns's server, which answers each datagram in a new goroutine and
// allocates about a dozen objects per query (session, out-of-band buffers,
// writer, request): on a node whose heap holds a large cache, collecting that
// garbage cost more CPU than the answer. A few workers each read a datagram,
// parse the common query (one uncompressed question, at most an OPT without
// options) into reused storage, answer and write it, and read the next; other
// requests go through dns.Msg.Unpack, and whatever is rejected gets miekg's
// own FORMERR or NOTIMP reply (udp_test.go holds the loop to miekg's bytes).
// A cached TXT answer over UDP allocates nothing end to end.
//
// A cached TXT or URI answer allocates nothing in ServeDNS (allocation_test.go):
// replies and their records come from a sync.Pool, the URL is sent from the
// cache entry's bytes without a copy, and when the reply fits uncompressed and
// its only repeated names are answer owners equal to the question name, the
// owners are turned into pointers after packing (compressOwners) instead of
// through miekg/dns's per-message compression map. Other replies use miekg's
// compression. bench/dns/run.sh compares the node with a bare miekg/dns map
// server under dnsperf; BenchmarkServeDNS measures the handler alone.
//
// Counters (queries, answers by kind, truncations, RRL drops and slips) are
// exposed through Server.Stats and, in the Prometheus text format as
// pidnode_dns_*, through Server.WriteMetrics (metrics.go). Nothing is logged per
// query (failed cache loads and unpackable stored data log a warning).
//
// # What it must not do
//
// It imports handlev, cache, internal/ascii and miekg/dns only; it never imports
// the store or the admin API, and never writes: records reach it through the
// cache. It serves no recursion, no zone transfers and no DNSSEC.
//
// The zone names accepted by New are plain host names (letters, digits, "-",
// "_" and dots); the root zone is not accepted.
package hdldns
