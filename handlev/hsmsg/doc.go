// Package hsmsg is the message codec of the native Handle protocol (RFC 3652 as
// spoken by CNRI's 2.x client, protocol 2.11; docs/handle-protocol.md §3): the 20-byte
// envelope, the 24-byte header, the bodies a resolution node sends and receives
// (RESOLUTION request and reply, error reply, GET_SITE_INFO reply), the request
// digest, the credential trailer with its HS_SIGNED signature, UDP fragmentation and
// reassembly of one message, and the HS_SITE value data with its public-key encoding.
//
// It imports handlev, internal/ascii and the standard library only. It must not
// know about storage, caches or sockets: resolver/hdl owns the listeners and the
// reply policy.
//
// Codecs are append-style (AppendX(dst, …) returns the extended slice). Decoders
// bounds-check every read, reject lengths that are negative or larger than
// MaxMessageLen with a *FormatError wrapping one of the sentinel errors in errors.go,
// and never panic on input.
//
// # Aliasing
//
// Unlike handlev, the message-level decoders (ParseEnvelope, ParseMessage,
// ResolutionRequest.Decode, ParseReply) return slices that alias their input, so
// that the server's hot path allocates nothing; the input must outlive them. Values
// (handlev.DecodeValue) and HS_SITE data (DecodeSite) are copied.
package hsmsg
