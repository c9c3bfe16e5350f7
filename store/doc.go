// Package store is pidnode's persistence: one bbolt file holding the handle
// records and the admin data (docs/product.md §8).
//
// It owns the bucket layout, the record encoding, the schema version, durable
// batched writes, online backup and JSON Lines export/import. It imports
// handlev, bbolt and internal/procfloor (which keeps a second Go processor
// while a commit waits in fsync) only. It must not know about the cache, the
// resolvers or HTTP: callers invalidate caches after a successful Update, and
// admin interprets its own buckets through Tx.Bolt.
//
// # Bucket layout
//
// All buckets are created by Open.
//
//	records      storage key (handlev.Namer.AppendKey bytes) → encoded record, below
//	snaas        admin: SNAAs
//	applications admin: SNAA applications
//	keys         admin: API keys by hash
//	audit        admin: audit log
//	urlindex     admin: URL → handles (reverse lookup)
//	stats        admin: statistics counters
//	idempotency  admin: idempotency keys of write requests
//	sessions     admin: console sessions by SHA-256 of the session token
//	webhooks     admin: webhook endpoints, their cursors and delivery logs
//	meta         "schema" → uint32 big-endian SchemaVersion (currently 1)
//
// A record value is, big-endian:
//
//	format   byte    1 (anything else: ErrUnknownFormat)
//	version  uint64  bumped by every write, starts at 1
//	created  int64   unix nanoseconds, 0 = unknown
//	updated  int64   unix nanoseconds, 0 = unknown
//	handle   int4 length + UTF-8 bytes: the display handle
//	values   handlev.AppendValues: int4 count + RFC 3651 values
//
// so the values are in the same bytes the native Handle protocol sends.
//
// # Writes
//
// Update goes through bbolt's DB.Batch: concurrent callers share one transaction
// and one fsync, and each returns only once the commit is on disk. The callback
// may run more than once and must be idempotent. PutRecord refuses what the
// binary encoding cannot hold exactly (ErrNotStorable), so a record always reads
// back as written.
//
// # Export and import
//
// Export writes one line per record in key order, {"handle":…,"values":[…]} in
// the Handle JSON encoding, from one read transaction. Import reads such lines
// (responseCode optional) and decodes and encodes them on GOMAXPROCS
// goroutines; it checks the whole input before it writes anything, so a
// failing line stops the import with an *ImportError naming it and nothing
// written. The records are sorted by key (stably, so repeated handles keep
// their input order): in memory up to 2 GiB, beyond that in sorted runs in an
// unlinked temporary file next to the database, merged afterwards. They are
// then written in key order, in plain (unbatched) transactions of up to 50000
// records or 64 MiB, one fsync each, while the next one is merged: into an
// empty database that only appends, and pages are left full (1M generated
// records: 1.4 GB, against 2.0 GB when each chunk of random input was
// inserted where its keys fell). A record replaced by Import is read only as
// far as its header (format, version, created). Export → Import into an empty
// database → Export gives the same bytes.
//
// Every import transaction is fsynced when it commits, so a crash loses at
// most the transaction in flight (the records committed before stay, a prefix
// of the input in key order). Transactions without fsync and one sync at the
// end were measured (1M records): about 10 % less CPU and no fewer bytes
// reaching the disk, while a power loss mid-import could leave a meta page on
// disk that points at pages that never got there, losing the whole file rather
// than a few transactions.
//
// # Replicas
//
// A cluster node's file is a replica of etcd (docs/product.md §10): meta holds
// "applied", the etcd revision applied (uint64 big-endian; absent on a single
// node). Rehearse runs a write in a transaction that is rolled back and returns
// the writes it made; Replace swaps in a fresh file built beside the database
// (renamed over it), under transactions that keep running.
//
// # Caveats
//
// Memory returned by bbolt (Tx.Bolt().Bucket(…).Get, cursors) points into the
// read-only mmap and is valid only inside the transaction; writing to it crashes
// the process. Everything this package returns (Stored, Record, ForEachRecord's
// arguments) is copied out and owned by the caller.
//
// Only one process may open the file; a second one gets ErrLocked after one
// second. Close the DB before copying the file by other means; use Backup
// while it is open.
//
// A read transaction pins the pages it sees: a long Backup or Export keeps the
// file from reusing freed pages, so the file may grow during it. Open maps 1 GiB
// of address space up front so that growth rarely needs a remap (which would
// wait for open read transactions and stall writers meanwhile).
//
// Times before 1678 or after 2262 do not fit in int64 nanoseconds and are not
// stored faithfully; the zero time is stored as 0 and read back as the zero time.
//
// The database file never shrinks; deleted and rewritten pages are reused.
// Config.NoSync is for tests and benchmarks only.
package store
