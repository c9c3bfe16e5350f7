// Package registry is the persistence of the admin API's buckets: the
// applications, SNAAs and API keys, people and their invitations
// (people.go, Tx.People), the idempotency records, the append-only
// audit log with its per-record index, the URL and search indexes, and the group commit
// of identifier writes. (The stats bucket is package stats'.)
//
// It owns:
//   - typed access to each bucket inside a transaction (Tx: Application,
//     PutApplication, SNAAs, KeyByHash, Idem, …), records stored as JSON;
//   - the audit log (Tx.Audit, Tx.AppendAudit, Tx.AppendHandleAudit), written
//     in the transaction of the change it records, and read back by record
//     (Tx.HandleAudit) or by sequence (AuditLog);
//   - the record indexes: the URL index (urlindex.go) and the search index
//     (search.go: words, in blocks of records (searchwords.go), status, sort
//     orders, totals), both maintained by
//     Tx.IndexRecord in every record write's transaction, walked by
//     Tx.ScanNamespace and Tx.Search, and rebuilt by Reindex;
//   - group commit (Commit, commit.go): identifier writes that arrive while a
//     transaction commits share the next one.
//   - of the features' buckets only what the audit log and cluster mode
//     share with them: the link check result type and states
//     (linkcheck.go), the webhook audit actions and kinds and the signal
//     of an applied change to an endpoint (webhook.go); packages linkcheck
//     and webhook own the buckets themselves.
//
// It must not know about HTTP or decide what a client may do: it stores and
// reads what the admin API (package admin) has decided. It imports handlev,
// store and bbolt. Every value it returns is decoded into memory of its own;
// a Tx and the []byte it passes to callbacks live only as long as the
// transaction.
package registry
