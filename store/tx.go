package store

import (
	"fmt"
	"math"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/internal/unsafeconv"
)

// Tx is a transaction handed to View and Update callbacks. It is valid only
// during the callback and, like bbolt's Tx, must not be used from other goroutines.
type Tx struct {
	tx *bbolt.Tx
	// rec, if not nil, collects the writes made through the Tx's methods
	// (Rehearse).
	rec *[]Write
	// ov, if not nil, holds the writes of a rehearsal on a read
	// transaction (Rehearse): tx is read-only and ov is the state on top.
	ov *overlay
	// db and topics serve Signal: the database whose waiters a commit
	// wakes, and the topics this transaction changed.
	db     *DB
	topics []string
}

// Rehearsal says whether the transaction is a rehearsal (Rehearse): its
// writes are collected and rolled back, never committed, so data derived
// from them (an index) need not be computed.
func (tx *Tx) Rehearsal() bool { return tx.rec != nil }

// Bolt returns the underlying bbolt transaction, for admin's own buckets
// (BucketSNAAs, BucketKeys, …). Byte slices bbolt returns point into its mmap and
// are valid only until the transaction ends: copy what you keep. Slices passed to
// Put must not be modified until the transaction ends. In a rehearsal
// (Rehearse) the bbolt transaction does not see the rehearsal's own writes:
// using it there makes Rehearse run fn again in a write transaction.
func (tx *Tx) Bolt() *bbolt.Tx {
	if tx.ov != nil {
		tx.ov.tainted = true
	}
	return tx.tx
}

// Record returns the record stored under key, decoded into owned memory.
func (tx *Tx) Record(key string) (Stored, bool, error) {
	if v, ok := tx.ov.get(BucketRecords, []byte(key)); ok {
		if v == nil {
			return Stored{}, false, nil
		}
		st, err := decodeStored(v)
		if err != nil {
			setKey(err, key)
			return Stored{}, false, err
		}
		return st, true, nil
	}
	return getRecord(tx.tx, key)
}

// RecordCreated returns the created time of the record stored under key as
// the record holds it (unix nanoseconds), read from its header without
// decoding the record; 0 when no record is stored there or its header does
// not read (checkHeader).
func (tx *Tx) RecordCreated(key string) int64 {
	v := tx.Get(BucketRecords, unsafeconv.Bytes(key))
	if checkHeader(v) != nil {
		return 0
	}
	return storedCreated(v)
}

// PutRecord stores s under key, replacing any previous record. The version and
// times are written as given: the caller decides them (typically Version = old+1,
// Created kept, Updated = now). A record the binary format cannot hold exactly
// (see checkStorable) is refused with an error wrapping ErrNotStorable, so what is
// read back is always what was written.
func (tx *Tx) PutRecord(key string, s *Stored) error {
	if key == "" || s.Record.Handle == "" {
		return ErrEmptyKey
	}
	if err := checkStorable(key, s); err != nil {
		return err
	}
	b := tx.tx.Bucket(BucketRecords)
	if b == nil {
		return fmt.Errorf("store: bucket %s missing", BucketRecords)
	}
	// bbolt keeps both slices until commit: fresh allocations, never reused.
	v := encodeStored(s)
	k := []byte(key)
	tx.note(BucketRecords, k, v)
	if tx.ov != nil {
		tx.ov.put(BucketRecords, k, v)
		return nil
	}
	if err := b.Put(k, v); err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	return nil
}

// checkStorable reports whether s survives appendStored → decodeStored
// unchanged: lengths and counts within handlev's decoder limits, timestamps that
// fit the RFC 3651 uint32, permissions in the low four bits.
func checkStorable(key string, s *Stored) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: record %q: %s", ErrNotStorable, key, fmt.Sprintf(format, args...))
	}
	if len(key) > handlev.MaxHandleLen {
		return fmt.Errorf("%w: key of %d bytes (limit %d): %w", ErrNotStorable, len(key), handlev.MaxHandleLen, handlev.ErrTooLong)
	}
	if len(s.Record.Handle) > handlev.MaxHandleLen {
		return fmt.Errorf("%w: handle of %d bytes (limit %d): %w", ErrNotStorable, len(s.Record.Handle), handlev.MaxHandleLen, handlev.ErrTooLong)
	}
	if len(s.Record.Values) > handlev.MaxValues {
		return fmt.Errorf("%w: record %q: %d values (limit %d): %w", ErrNotStorable, key, len(s.Record.Values), handlev.MaxValues, handlev.ErrTooLong)
	}
	for i := range s.Record.Values {
		v := &s.Record.Values[i]
		switch {
		case len(v.Type) > handlev.MaxLength:
			return fmt.Errorf("%w: record %q value %d: type of %d bytes: %w", ErrNotStorable, key, v.Index, len(v.Type), handlev.ErrTooLong)
		case len(v.Data) > handlev.MaxLength:
			return fmt.Errorf("%w: record %q value %d: data of %d bytes (limit %d): %w", ErrNotStorable, key, v.Index, len(v.Data), handlev.MaxLength, handlev.ErrTooLong)
		case len(v.Refs) > handlev.MaxRefs:
			return fmt.Errorf("%w: record %q value %d: %d references (limit %d): %w", ErrNotStorable, key, v.Index, len(v.Refs), handlev.MaxRefs, handlev.ErrTooLong)
		case v.Timestamp < 0 || v.Timestamp > math.MaxUint32:
			return fail("value %d: timestamp %d outside 0..2^32-1", v.Index, v.Timestamp)
		case v.Perm&^0x0F != 0:
			return fail("value %d: permission bits %#x beyond the low four", v.Index, v.Perm)
		case v.TTLType > handlev.TTLAbsolute:
			return fail("value %d: ttl type %d", v.Index, v.TTLType)
		}
		for j := range v.Refs {
			if len(v.Refs[j].Handle) > handlev.MaxLength {
				return fmt.Errorf("%w: record %q value %d: reference %d handle: %w", ErrNotStorable, key, v.Index, j, handlev.ErrTooLong)
			}
		}
	}
	return nil
}

// ForEachRecord calls fn for every record in key order. Each call gets a freshly
// decoded *Stored that fn may keep. If fn returns an error, iteration stops and
// ForEachRecord returns it. fn must not modify BucketRecords.
func (tx *Tx) ForEachRecord(fn func(key string, s *Stored) error) error {
	b := tx.bucketRead(BucketRecords)
	if b == nil {
		return fmt.Errorf("store: bucket %s missing", BucketRecords)
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		s, err := decodeStored(v)
		key := string(k)
		if err != nil {
			setKey(err, key)
			return err
		}
		if err := fn(key, &s); err != nil {
			return err
		}
	}
	return nil
}

// encodedSize is the exact length of appendStored(nil, s).
func encodedSize(s *Stored) int {
	return plainSize(s) + 4 + len(handlev.AppendDerived(nil, s.Record.Values))
}

// plainSize is the length of s's encoding without the derived part.
func plainSize(s *Stored) int {
	n := recordHeaderLen + 4 + len(s.Record.Handle) + 4
	for i := range s.Record.Values {
		v := &s.Record.Values[i]
		// index, timestamp, ttl type, ttl, perm, type, data, ref count
		n += 4 + 4 + 1 + 4 + 1 + 4 + len(v.Type) + 4 + len(v.Data) + 4
		for _, r := range v.Refs {
			n += 4 + len(r.Handle) + 4
		}
	}
	return n
}
