// Package access answers who a secret is (docs/product.md §4.1): the
// operator's key, an SNAA's API key, or nobody. The admin API asks it for a
// bearer key, the console for the key hash its session holds.
//
// # What it owns
//
//   - the format of a key secret (KeyPrefix and KeyRandomBytes of base32,
//     NewSecret, WellFormed) and what is stored of it (Hash: SHA-256);
//   - the look-up of a key by its hash (Keys.Lookup, Keys.LookupSum), its
//     SNAA with it, compared in constant time, refusing unknown keys
//     (ErrUnknownKey) and revoked ones (*RevokedError);
//   - the cache of valid keys, which Keys.Invalidate drops after any change
//     of keys or SNAAs (the channel of Keys.Changes closes with it, so that
//     long-lived streams look their key up again);
//   - the keys' last-used times, kept in memory and written at most once
//     per Config.LastUsedInterval (Keys.Touch, Keys.Flush), so that
//     authenticating a request costs no write;
//   - issuing keys (Keys.Issue: a name, a fresh secret, the SNAA's limit of
//     unrevoked keys) and revoking them (Keys.Revoke), and the one shape of
//     the operator's writes of applications, SNAAs and keys (Keys.Update:
//     a refusal commits nothing, the audit entries commit with the write,
//     the cache of keys is invalidated after), issue.go;
//   - the console's sessions (sessions.go): started for a key the front
//     has checked, stored by the token's hash through the Writer (so that
//     every node of a cluster knows them), ended by their idle or absolute
//     lifetime or their key's revocation (typed errors, one per reason),
//     and the CSRF token derived from a session's token; a person's
//     session (registry.Session.PersonID) is ended by the person's removal,
//     the person being read afresh on every look-up.
//
// # What it must not do
//
// It imports no net/http and knows no status code or cookie: a front maps its errors
// to its replies in one place (admin's problemOf). It decides nothing about
// what a key may do (suspension, namespace, prefixes, rate limits belong to
// the front that admits the request). It writes keys, sessions and
// last-used times, and the audit entries of the writes it makes; the
// decisions on applications and SNAAs are the front's, which hands them to
// Keys.Update.
//
// # Caveats
//
// A cached entry stays valid until the next Invalidate: every writer of
// keys or SNAAs must call it after its commit (a cluster node also after
// applying another node's change), or a revoked key keeps working here.
package access
