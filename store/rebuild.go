package store

import (
	"bytes"
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
// group, if set, stores several entries as one: it hears every key of
// buckets[i] once, in key order (a repeated key at most once more, with the
// same answer), and returns the key it is stored under and true, or false
// to store it as it is. Entries grouped under the same key one after
// another are stored as one, their values concatenated in key order. The
// key it returns is copied.
//
// It is not one transaction: a caller that needs all or nothing marks the
// buckets complete after it returns (an error or a crash on the way leaves
// them emptied or partly filled, and unmarked). It must not race with
// writers of the buckets.
func (db *DB) RebuildDerived(buckets [][]byte, group func(i int, k []byte) ([]byte, bool), fill func(tx *Tx, emit func(i int, k, v []byte) error) error) error {
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
	if group != nil {
		src = &groupedSource{src: src, group: group}
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

// groupedSource is src with the runs of records its group function puts
// under one key combined (RebuildDerived).
type groupedSource struct {
	src   sortedSource
	group func(i int, k []byte) ([]byte, bool)
	// held is a record read ahead, with what group said of it.
	held            sortedRec
	heldKey         []byte
	heldOK, holding bool
}

// read returns the next record and what group says of it.
func (g *groupedSource) read() (r sortedRec, gk []byte, grouped, ok bool, err error) {
	if g.holding {
		g.holding = false
		return g.held, g.heldKey, g.heldOK, true, nil
	}
	r, ok, err = g.src.next()
	if err != nil || !ok {
		return r, nil, false, ok, err
	}
	gk, grouped = g.group(int(r.key[0]), r.key[1:])
	return r, gk, grouped, true, nil
}

func (g *groupedSource) next() (sortedRec, bool, error) {
	r, gk, grouped, ok, err := g.read()
	if err != nil || !ok || !grouped {
		return r, ok, err
	}
	key := append([]byte{r.key[0]}, gk...)
	val := append([]byte(nil), r.val...)
	last, prev := 0, r.key // the last value's offset in val, and its key
	for {
		n, nk, ng, ok, err := g.read()
		if err != nil {
			return sortedRec{}, false, err
		}
		if !ok {
			break
		}
		if bytes.Equal(n.key, prev) {
			val = append(val[:last], n.val...) // the last of repeated keys wins
			continue
		}
		if !ng || n.key[0] != key[0] || !bytes.Equal(nk, key[1:]) {
			g.held, g.heldKey, g.heldOK, g.holding = n, append(g.heldKey[:0], nk...), ng, true
			break
		}
		last, prev = len(val), n.key
		val = append(val, n.val...)
	}
	return sortedRec{key: key, val: val, line: r.line}, true, nil
}
