// Package write is the write service of identifiers: create (generated or
// custom id), update and bulk, with idempotency, id minting and its retry,
// the one validation order (check.go) and the audit entry of each write.
// Every front that writes an identifier goes through a Service: the JSON
// admin API, the HTML console and, through the Writer a Service commits
// with, a cluster node's etcd transactions.
//
// # What it owns
//
//   - the order of the checks of a write and the errors they fail with
//     (model's *ValidationError and *SyntaxError for the payload, *Error
//     wrapping one of this package's sentinels for the rest);
//   - building the record from a payload (through model) and putting it,
//     its record index entries (URL, search) and its audit entry in one transaction;
//   - Idempotency-Key records: a repeated create with the same request
//     replays the first one's identifier, with another request it fails;
//   - telling the cache (Invalidator) about every written key after the
//     commit and before the caller answers (read-your-writes).
//
// # What it must not do
//
// It imports no net/http and knows no route, status code or reply body:
// the API maps its errors to problem+json in one place (admin's problemOf),
// and the API decides which ids are reserved for its routes
// (Config.ReservedID). It does not authenticate: a caller passes the Actor
// it has admitted and the Target it has checked the Actor may write under.
//
// # Caveats
//
// The functions a Service hands to Writer.CommitAs may run more than once
// (a commit group re-runs its members after a failed partner); they keep
// every effect inside the transaction and set their results anew on each
// run. A write refused inside the transaction returns nil to the Writer, so
// that its group partners are not rolled back, and the refusal is returned
// to the caller after the commit.
package write
