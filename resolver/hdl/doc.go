// Package hdl is the native Handle protocol front of pidnode (RFC 3652 as
// spoken by CNRI's 2.x client, protocol 2.11): one TCP and one UDP listener,
// normally on the same port (2641), answering from the same cache as the
// HTTP resolver. The wire format and the client's expectations are in
// docs/handle-protocol.md §3, what a node answers in docs/product.md §7.
//
// It owns:
//   - the resolution and site-information answers (OC_RESOLUTION with its
//     index and type filters, OC_GET_SITE_INFO from Config.Site); every other
//     op code gets RC 5, and replies, compressed and encrypted messages are
//     dropped;
//   - the reply envelope and header (what is copied from the request, AT,
//     the site's serial number, the version spoken, the request digest) and
//     the HS_SIGNED credential of a certified (CT) reply;
//   - the transports: TCP, one request per connection, with its deadlines
//     and connection limits (internal/connlimit); UDP, with replies cut into
//     492-byte pieces and requests reassembled within MaxPendingBytes;
//   - the per-source budget of signed replies (SignedRate, SignedWait: pace.go);
//   - the small client pidctl uses, key generation (pidnode keygen) and the
//     siteinfo.json rendering (pidnode siteinfo).
//
// It imports handlev, handlev/hsmsg and cache, and must never import store or
// admin: records reach it only through the cache. The hot path (cache hit, no
// filters, no CT) allocates nothing: the reply splices the cache entry's
// pre-encoded public values (cache.Entry.WireBytes).
//
// # Caveats
//
// Values without public read permission are never sent, whether or not the
// request set PO: the node has no authentication, so it answers as the
// client's default (PO set) expects rather than challenging (RC 402).
//
// A certified request beyond its source's budget waits for its turn and is
// answered signed; only one whose turn is further away than SignedWait gets
// an unsigned RC 3. The client checks the signature before the reply code,
// so no refusal of a certified request can be cheap (pace.go).
//
// Without Config.SignKey a CT request gets RC 2 "server has no signing key"
// with CT cleared, because an unsigned reply with CT set would fail in the
// client with a verification error that hides the reason. A node should
// always have a key: the CNRI client refuses an HS_SITE with an empty public
// key before it sends anything certified, so pidnode serve always sets one.
package hdl
