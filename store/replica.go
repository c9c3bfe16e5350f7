package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
)

// A cluster node's database is a replica of its etcd prefix
// (docs/product.md §10): it is written by applying what etcd holds, and it
// remembers in BucketMeta the etcd revision it has applied, so that a restart
// resumes from there. The functions here are that seam; a single node never
// calls them and its file carries no applied revision.

// metaAppliedKey is the key of the applied etcd revision (uint64 big-endian)
// in BucketMeta. Absent in a single node's file.
var metaAppliedKey = []byte("applied")

// AppliedRevision returns the etcd revision this database has applied, 0 if
// it has never applied any (a single node's file, or a new replica).
func (tx *Tx) AppliedRevision() int64 {
	v := tx.tx.Bucket(BucketMeta).Get(metaAppliedKey)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// SetAppliedRevision records rev as the applied etcd revision, in the
// transaction that applies it.
func (tx *Tx) SetAppliedRevision(rev int64) error {
	if rev < 0 {
		return fmt.Errorf("store: applied revision %d", rev)
	}
	return tx.Bolt().Bucket(BucketMeta).Put(metaAppliedKey, binary.BigEndian.AppendUint64(nil, uint64(rev)))
}

// metaShardKey is the key of the applied revision of etcd shard name: a
// cluster with several etcd clusters (docs/product.md §10) applies each
// one's revisions, which are unrelated, and keeps each shard's applied
// revision in the transaction that applies its changes. The registry
// shard's is metaAppliedKey (name "").
func metaShardKey(name string) []byte {
	if name == "" {
		return metaAppliedKey
	}
	return []byte("applied/" + name)
}

// ShardRevision is AppliedRevision of etcd shard name ("" is the registry
// shard's, AppliedRevision itself).
func (tx *Tx) ShardRevision(name string) int64 {
	v := tx.tx.Bucket(BucketMeta).Get(metaShardKey(name))
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// SetShardRevision is SetAppliedRevision of etcd shard name.
func (tx *Tx) SetShardRevision(name string, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("store: applied revision %d", rev)
	}
	return tx.Bolt().Bucket(BucketMeta).Put(metaShardKey(name), binary.BigEndian.AppendUint64(nil, uint64(rev)))
}

// ShardRevision is Tx.ShardRevision in a read transaction of its own.
func (db *DB) ShardRevision(name string) (int64, error) {
	var rev int64
	err := db.View(func(tx *Tx) error { rev = tx.ShardRevision(name); return nil })
	return rev, err
}

// AppliedRevision is Tx.AppliedRevision in a read transaction of its own.
func (db *DB) AppliedRevision() (int64, error) {
	var rev int64
	err := db.View(func(tx *Tx) error { rev = tx.AppliedRevision(); return nil })
	return rev, err
}

// DecodeStored decodes a record in this package's encoding (doc.go), as
// EncodeStored or the records bucket holds it. The result owns its memory.
func DecodeStored(raw []byte) (Stored, error) { return decodeStored(raw) }

// EncodeStored returns the encoding of s that PutRecord stores, refusing
// what PutRecord refuses.
func EncodeStored(key string, s *Stored) ([]byte, error) {
	if key == "" || s.Record.Handle == "" {
		return nil, ErrEmptyKey
	}
	if err := checkStorable(key, s); err != nil {
		return nil, err
	}
	return encodeStored(s), nil
}

// PutRecordRaw stores raw, a record in this package's encoding, under key,
// after checking that it decodes. A record in the plain format (written by
// an older node) is stored re-encoded with its derived part. raw must not be
// modified until the transaction ends.
func (tx *Tx) PutRecordRaw(key string, raw []byte) error {
	if key == "" {
		return ErrEmptyKey
	}
	s, err := decodeStored(raw)
	if err != nil {
		setKey(err, key)
		return err
	}
	if raw[0] == recordFormatPlain {
		raw = encodeStored(&s)
	}
	return tx.Put(BucketRecords, []byte(key), raw)
}

// DeleteRecord removes the record stored under key, if any.
func (tx *Tx) DeleteRecord(key string) error {
	tx.note(BucketRecords, []byte(key), nil)
	if tx.ov != nil {
		tx.ov.put(BucketRecords, []byte(key), nil)
		return nil
	}
	return tx.tx.Bucket(BucketRecords).Delete([]byte(key))
}

// Put writes value under key in an admin bucket (not BucketRecords, whose
// values PutRecord encodes). Writes that are data of their own, not derived
// from other data, go through Put (or PutRecord), so that a recording
// transaction (Rehearse) sees them; indexes are written on Tx.Bolt directly.
// key and value must not be modified until the transaction ends.
func (tx *Tx) Put(bucket, key, value []byte) error {
	b, err := tx.writeBucket(bucket)
	if err != nil {
		return err
	}
	tx.note(bucket, key, value)
	if tx.ov != nil {
		tx.ov.put(bucket, key, value)
		return nil
	}
	return b.Put(key, value)
}

// Delete removes key from an admin bucket (not BucketRecords: DeleteRecord),
// seen by a recording transaction (Rehearse) as a write of nil.
func (tx *Tx) Delete(bucket, key []byte) error {
	b := tx.tx.Bucket(bucket)
	if b == nil {
		return fmt.Errorf("store: bucket %s missing", bucket)
	}
	if tx.Get(bucket, key) == nil {
		return nil
	}
	tx.note(bucket, key, nil)
	if tx.ov != nil {
		tx.ov.put(bucket, key, nil)
		return nil
	}
	return b.Delete(key)
}

// Write is one write of a recording transaction: Value nil is a delete.
// The slices are the caller's, kept as they were passed. Existed says
// whether the key held a value just before this write.
type Write struct {
	Bucket, Key, Value []byte
	Existed            bool
}

// note records a write if the transaction records; it must be called before
// the write itself.
func (tx *Tx) note(bucket, key, value []byte) {
	if tx.rec != nil {
		existed := tx.Get(bucket, key) != nil
		*tx.rec = append(*tx.rec, Write{Bucket: bucket, Key: key, Value: value, Existed: existed})
	}
}

// Rehearse runs fn without committing anything and returns the writes fn
// made through PutRecord, PutRecordRaw, DeleteRecord and Put, in order, with
// the applied revision of the state fn saw. A cluster node runs a write this
// way against its replica to learn what to send to etcd; etcd decides, and
// the write reaches the database when it is applied. fn's error is returned
// as it is.
//
// fn runs on a read transaction, its writes kept in memory on top of it
// (Get, NextSequence, PutDerived and the record methods read and write
// through them), so that a rehearsal takes no writer lock. A fn that uses
// what memory cannot stand for (Tx.Bolt, a cursor over a bucket it wrote)
// is run again in a write transaction that is rolled back, which holds
// bbolt's writer lock while fn runs (no fsync): fn must be quick.
func (db *DB) Rehearse(fn func(tx *Tx) error) ([]Write, int64, error) {
	return db.RehearseShard("", fn)
}

// RehearseShard is Rehearse returning the applied revision of etcd shard
// name (Tx.ShardRevision).
func (db *DB) RehearseShard(name string, fn func(tx *Tx) error) ([]Write, int64, error) {
	w, rev, tainted, err := db.rehearse(name, false, fn)
	if tainted {
		w, rev, _, err = db.rehearse(name, true, fn)
	}
	return w, rev, err
}

// rehearse is one run of fn for RehearseShard: on a read transaction with
// an overlay, or on a write transaction that is rolled back. tainted says
// that fn read past what the overlay follows, and its outcome is void.
func (db *DB) rehearse(name string, writable bool, fn func(tx *Tx) error) (w []Write, rev int64, tainted bool, err error) {
	var btx *bbolt.Tx
	err = db.retry(func(b *bbolt.DB) (err error) {
		btx, err = b.Begin(writable)
		return err
	})
	if err != nil {
		return nil, 0, false, fmt.Errorf("store: %w", err)
	}
	defer btx.Rollback()
	tx := &Tx{tx: btx, rec: &w}
	if !writable {
		tx.ov = &overlay{}
	}
	rev = tx.ShardRevision(name)
	err = fn(tx)
	if tx.ov != nil && tx.ov.tainted {
		return nil, rev, true, nil
	}
	if err != nil {
		return nil, rev, false, err
	}
	return w, rev, false, nil
}

// overlay is a rehearsal's writes on top of its read transaction.
type overlay struct {
	vals    map[overlayKey][]byte // nil value: deleted
	seqs    map[string]uint64     // bucket → its sequence as NextSequence left it
	wrote   map[string]bool       // buckets written
	tainted bool                  // fn read past what the overlay follows
}

type overlayKey struct{ bucket, key string }

// get returns the value written under key in the overlay, if any (nil:
// deleted). A nil overlay holds nothing.
func (o *overlay) get(bucket, key []byte) ([]byte, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[overlayKey{string(bucket), string(key)}]
	return v, ok
}

func (o *overlay) put(bucket, key, value []byte) {
	if o.vals == nil {
		o.vals, o.wrote = map[overlayKey][]byte{}, map[string]bool{}
	}
	o.vals[overlayKey{string(bucket), string(key)}] = value
	o.wrote[string(bucket)] = true
}

// Get returns the value under key in bucket, nil if absent. The slice is
// valid only until the transaction ends.
func (tx *Tx) Get(bucket, key []byte) []byte {
	if v, ok := tx.ov.get(bucket, key); ok {
		return v
	}
	b := tx.tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Get(key)
}

// NextSequence is bbolt's Bucket.NextSequence of bucket; in a rehearsal
// the sequence advances in memory only.
func (tx *Tx) NextSequence(bucket []byte) (uint64, error) {
	b := tx.tx.Bucket(bucket)
	if b == nil {
		return 0, fmt.Errorf("store: bucket %s missing", bucket)
	}
	if tx.ov == nil {
		return b.NextSequence()
	}
	if tx.ov.seqs == nil {
		tx.ov.seqs = map[string]uint64{}
	}
	seq, ok := tx.ov.seqs[string(bucket)]
	if !ok {
		seq = b.Sequence()
	}
	seq++
	tx.ov.seqs[string(bucket)] = seq
	return seq, nil
}

// appendFillPercent is how full a split leaves the left page in the
// buckets whose writes go to the ends of key ranges: the audit log (its
// sequence numbers and its indexes by namespace and by creation time,
// registry/audit.go) and the search index (registry/search.go). bbolt's
// default, half, suits inserts at random places; at the end of a range the
// left page is never written again, so half of it would stay empty for good,
// and every commit would write twice the pages for what it appends. Not
// full: an update's entry in the audit index by creation time goes between
// existing ones.
const appendFillPercent = 0.9

// writeBucket returns bucket of the write transaction, with its split fill
// set (appendFillPercent). bbolt keeps the handle, and so the fill, for the
// rest of the transaction.
func (tx *Tx) writeBucket(bucket []byte) (*bbolt.Bucket, error) {
	b := tx.tx.Bucket(bucket)
	if b == nil {
		return nil, fmt.Errorf("store: bucket %s missing", bucket)
	}
	if bytes.Equal(bucket, BucketAudit) || bytes.Equal(bucket, BucketSearch) {
		b.FillPercent = appendFillPercent
	}
	return b, nil
}

// PutDerived writes value (nil: deletes) under key in bucket as data
// derived from other data (an index), which a rehearsal does not report
// (Put). key and value must not be modified until the transaction ends.
func (tx *Tx) PutDerived(bucket, key, value []byte) error {
	if tx.ov != nil {
		tx.ov.put(bucket, key, value)
		return nil
	}
	b, err := tx.writeBucket(bucket)
	if err != nil {
		return err
	}
	if value == nil {
		return b.Delete(key)
	}
	return b.Put(key, value)
}

// bucketRead returns bucket for reading every key of it: in a rehearsal
// that wrote to it, the read transaction's bucket lacks those writes, and
// Rehearse runs fn again in a write transaction.
func (tx *Tx) bucketRead(bucket []byte) *bbolt.Bucket {
	if tx.ov != nil && tx.ov.wrote[string(bucket)] {
		tx.ov.tainted = true
	}
	return tx.tx.Bucket(bucket)
}

// Replace makes the database file at fresh, a complete database written and
// closed by another DB (Open, writes, Close), this database: it renames
// fresh over the file, opens it and swaps it in, then closes the old file
// once its transactions have ended. Transactions that begin after the swap
// see the new file; one that loaded the old file as it closed is run again
// on the new one (retry). Writes committed to the old file after the caller
// built fresh are lost: the caller must be the only writer of data it
// cares about (a cluster node's applier is; statistics flushes are its own
// business). The rename is atomic, so a crash leaves either file whole; the
// directory is synced after it (unless Config.NoSync), so that the new file
// is the database once Replace returns.
func (db *DB) Replace(fresh string) error {
	if err := os.Rename(fresh, db.cfg.Path); err != nil {
		return fmt.Errorf("store: replace: %w", err)
	}
	// The rename reaches the disk with the directory.
	if !db.cfg.NoSync {
		if err := syncDir(filepath.Dir(db.cfg.Path)); err != nil {
			db.log.Warn("store: replace: syncing the directory; a crash may bring the old file back", "err", err)
		}
	}
	os.Remove(LockFile(fresh))
	bdb, err := bbolt.Open(db.cfg.Path, 0o600, boltOptions(db.cfg))
	if err != nil {
		return fmt.Errorf("store: replace: open %s: %w", db.cfg.Path, err)
	}
	bdb.MaxBatchDelay = batchDelay
	bdb.MaxBatchSize = batchSize
	db.beginWrite() // the old file's shared read transaction would keep it open
	old := db.bdb.Swap(bdb)
	db.endWrite()
	db.wake(nil, true) // every topic may have changed
	if err := old.Close(); err != nil {
		db.log.Warn("store: closing the replaced file", "err", err)
	}
	db.log.Info("store replaced", "path", db.cfg.Path)
	return nil
}

// syncDir fsyncs the directory dir, so that a rename in it is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
