package store

import (
	"fmt"
	"path/filepath"

	"go.etcd.io/bbolt"
)

// rebuildRunBytes bounds the entries RebuildDerived holds in memory; beyond
// it, sorted runs go to a temporary file and are merged (as Import's). A
// variable so that tests can make it small.
var rebuildRunBytes = 256 << 20

// rebuildTxBytes is how many bytes of entries one RebuildDerived
// transaction writes: large enough that commits are few, small enough that
// a transaction's dirty pages stay a modest share of memory.
const rebuildTxBytes = 64 << 20

// rebuildFill is how full RebuildDerived leaves its pages: appends never
// need room for a later insert between them.
const rebuildFill = 1.0

// RebuildDerived replaces every entry of the derived-data buckets (indexes)
// with those fill emits, from scratch. It first empties the buckets, in one
// transaction; then calls fill in a read transaction, where emit(i, k, v)
// files value v under key k in buckets[i] (emit copies both; the last of
// repeated keys wins); then sorts the entries (in memory up to
// rebuildRunBytes, beyond that in sorted runs in an unlinked temporary file
// next to the database) and writes them in key order, in transactions of
// rebuildTxBytes, each page filled before the next is begun: every Put is an
// append, bbolt's cheap case.
//
// It is not one transaction: a caller that needs all or nothing marks the
// buckets complete after it returns (an error or a crash on the way leaves
// them emptied or partly filled, and unmarked). It must not race with
// writers of the buckets.
func (db *DB) RebuildDerived(buckets [][]byte, fill func(tx *Tx, emit func(i int, k, v []byte) error) error) error {
	if len(buckets) == 0 || len(buckets) > 255 {
		return fmt.Errorf("store: rebuild of %d buckets", len(buckets))
	}
	err := db.UpdateAlone(func(tx *Tx) error {
		for _, b := range buckets {
			if err := tx.tx.DeleteBucket(b); err != nil {
				return err
			}
			if _, err := tx.tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: emptying the buckets to rebuild: %w", err)
	}
	// One sort for every bucket: each key is prefixed by its bucket's
	// number, and line (unique, increasing) makes the last of repeated keys
	// the last written.
	s := &importSort{dir: filepath.Dir(db.Path()), runBytes: rebuildRunBytes}
	defer s.close()
	line := 0
	var arena []byte
	var key []byte
	err = db.View(func(tx *Tx) error {
		return fill(tx, func(i int, k, v []byte) error {
			if i < 0 || i >= len(buckets) {
				return fmt.Errorf("store: rebuild: no bucket %d", i)
			}
			if cap(arena)-len(arena) < len(v) {
				arena = make([]byte, 0, max(len(v), 1<<20))
			}
			off := len(arena)
			arena = append(arena, v...)
			key = append(append(key[:0], byte(i)), k...)
			line++
			return s.add(string(key), arena[off:len(arena):len(arena)], line)
		})
	})
	if err != nil {
		return err
	}
	src, err := s.sorted()
	if err != nil {
		return err
	}
	for done := false; !done; {
		err := db.UpdateAlone(func(tx *Tx) error {
			bs := make([]*bbolt.Bucket, len(buckets))
			for i, name := range buckets {
				bs[i] = tx.tx.Bucket(name)
				bs[i].FillPercent = rebuildFill
			}
			for n := 0; n < rebuildTxBytes; {
				r, ok, err := src.next()
				if err != nil {
					return err
				}
				if !ok {
					done = true
					return nil
				}
				if err := bs[r.key[0]].Put(r.key[1:], r.val); err != nil {
					return err
				}
				n += len(r.key) + len(r.val)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: rebuilding derived data: %w", err)
		}
	}
	return nil
}
