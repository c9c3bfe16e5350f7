// Package hdl is the native Handle protocol front of pidnode (RFC 3652 as spoken by
// CNRI's 2.x client, protocol 2.11; docs/handle-protocol.md §3, docs/product.md §7): one TCP and one
// UDP listener, normally on the same port (2641), answering from the same cache as
// the HTTP resolver. It also holds the small client pidctl uses, the node's key
// generation (pidnode keygen) and the siteinfo.json rendering (pidnode siteinfo).
//
// It imports handlev, handlev/hsmsg and cache. It must never import store or admin:
// records reach it only through the cache.
//
// # What it answers
//
//   - OC_RESOLUTION: index and type filters (a value is returned when its index is
//     requested OR its type matches a requested type; "URL." asks for URL and its
//     subtypes, as the reference server's Util.isParentTypeInArray). RC 100 for an
//     unknown handle, RC 200 when no value survives the filters, RC 301 for a prefix
//     this node does not serve, RC 102 for a handle that is not one (empty, control
//     bytes, invalid UTF-8, longer than 2048 bytes), RC 2 when the cache's source
//     fails.
//   - Restricted values: values without public read permission are never sent,
//     whether or not the request set PO. With PO unset the reference server would
//     ask the client to authenticate (RC 402 challenge); this node has no
//     authentication, so it answers as the Java client's default (PO set) expects.
//   - Records with STATUS SUBMITTED are not public yet: RC 100, the same as the
//     HTTP API. OBSOLETED and DEPRECATED records resolve with all their (public)
//     values; the native protocol has no tombstone, and their STATUS value says it.
//   - OC_GET_SITE_INFO: the node's HS_SITE built from Config.Site (with the public
//     key when a signing key is configured).
//   - Every other op code: RC 5. Replies to replies, and compressed or encrypted
//     messages, are dropped.
//
// Every reply copies RequestId, SessionId, the flags CT, CA, ENC, PO, DNRF and RD
// and the recursion count from the request, sets REC, sets AT when the node's
// site is primary (SiteConfig.NotPrimary unset) and clears it otherwise, carries
// the site's serial number (SiteConfig.Serial) as SiteInfoSerialNumber, as a CNRI
// server does (RFC 3652 §2.2.2), and ExpirationTime now+12h, and speaks
// min(client's suggested version, 2.11) while suggesting 2.11. With RD it starts
// with the request digest (SHA-256 from 2.7, SHA-1 from 2.1, MD5 below).
//
// # Certified requests (CT)
//
// With Config.SignKey set, every reply to a CT request carries an HS_SIGNED
// credential (RSA, SHA-256 from protocol 2.7, SHA-1 below) over the envelope fields
// and header+body, in the layout AbstractMessage.verifyMessage checks. Without a
// key, a CT request gets RC 2 "server has no signing key" with CT cleared in the
// reply: an unsigned reply with CT set would only make the client fail with a
// verification error that hides the reason. A node should always have a key:
// without one its HS_SITE publishes an empty public key, which the CNRI client
// refuses before it sends anything certified; pidnode serve always sets one.
//
// # Transports
//
// TCP: one request per connection; its envelope must arrive within
// HeaderTimeout and the whole request within ReadTimeout. At most MaxConns
// connections at once, at most MaxConnsPerSource from one source (an IPv4
// address, an IPv6 /64), and above three quarters of MaxConns heavy sources
// are refused first (internal/connlimit); refused connections are closed on
// accept. So one client holding idle connections cannot lock the others out. UDP:
// replies longer than 492 bytes go out in 492-byte pieces, each with the full
// envelope, MessageLength = the total and SequenceNumber = the piece number, and the
// TC flag; requests that set TC are reassembled with bounded memory
// (MaxPendingBytes) and dropped after ReadTimeout.
//
// Certified requests are limited per source (SignedRate): each signature costs
// about 15 plain replies of CPU, and anyone may ask. Beyond the limit a CT
// request waits for its turn, up to SignedWait, and is then answered signed;
// only one whose turn is further away gets RC 3 (SERVER_TOO_BUSY), unsigned
// (pace.go explains why a refusal cannot be made cheaply verifiable).
//
// The hot path (cache hit, no filters, no CT) allocates nothing: the reply splices
// the cache entry's pre-encoded public values (cache.Entry.WireBytes of
// cache.Entry.Public, built once per entry on first use).
package hdl
