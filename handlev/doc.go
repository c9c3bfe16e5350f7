// Package handlev holds the Handle System's data model and its encodings: handle names
// (parsing, normalisation, storage keys, generated-id minting and check characters),
// handle values and records, what the public may see of a record (Public: the rule
// every public front renders from), the Handle JSON API encoding (byte-compatible
// with the reference server), the RFC 3651 binary encoding, and the one rule for
// the URLs a record may redirect to (AppendTargetURL, CheckTargetURL: the
// resolver redirects by it, the admin API accepts by it), the reader of
// 10320/loc values (ParseLocations, AppendHrefTemplate), and the one reader of
// RESOURCE values (ReadResource), which the resolver, the link checker and the
// admin console share.
//
// It imports the standard library, internal/ascii (ASCII case folding),
// internal/jsontext (the JSON tokenizer and string encoder),
// internal/unsafeconv (byte slices as strings without copying) and
// golang.org/x/net/idna (internationalized host names) only. It must not know
// about storage, caching or any network listener; those packages build on it.
//
// Codecs are append-style: AppendX(dst, …) appends to dst and returns the extended
// slice; decoders bounds-check every read and return typed errors, never panic.
// Decoded values own their memory: nothing returned aliases the input slice,
// except from DecodeValuesShared, whose caller hands the input over for good,
// and ReadResource, whose Resource points into the value's data.
package handlev
