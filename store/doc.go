// Package store is pidnode's persistence: one bbolt file holding the handle
// records and the admin data (docs/product.md §8).
//
// It owns the bucket layout (the Bucket variables; all are created by Open),
// the record encoding (record.go: a header, then the values in the bytes the
// native Handle protocol sends), the schema version, durable batched writes,
// online backup, JSON Lines export and import (Export, Import), and a cluster
// node's replica bookkeeping (Rehearse, Replace, the applied etcd revision),
// and warming the file into memory after start-up (Warm).
// It imports handlev, bbolt, internal/procfloor and internal/unsafeconv only.
//
// It must not know about the cache, the resolvers or HTTP: callers invalidate
// caches after a successful Update, and the layers above interpret the admin
// buckets themselves through Tx.Bolt.
//
// Update goes through bbolt's DB.Batch: concurrent callers share one
// transaction and one fsync, and each returns only once the commit is on disk.
// The callback may run more than once and must be idempotent. PutRecord refuses
// what the binary encoding cannot hold exactly (ErrNotStorable), so a record
// always reads back as written.
//
// Each record is stored with its derived part (handlev.AppendDerived: what a
// reader would otherwise parse out of its values on every cache miss), written
// by every writer through one encoder (record.go) and handed to the cache by
// LoadDerived. Records in the plain format of a file written before it are
// read as they are, without one (readers parse); each gets it when it is next
// written, and all of them when an import rewrites the file (`pidnode import`
// of any input, an empty one included).
//
// Record reads (Get, Load) share one read transaction between commits
// (sharedread.go); every write retires it before it begins.
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
// file from reusing freed pages, so the file may grow during it. Open reserves
// address space up front so that growth rarely needs a remap (which waits for
// open read transactions and stalls writers meanwhile). The file never
// shrinks; deleted and rewritten pages are reused.
//
// Times before 1678 or after 2262 do not fit in int64 nanoseconds and are not
// stored faithfully; the zero time is stored as 0 and read back as the zero
// time. Config.NoSync is for tests and benchmarks only.
package store
