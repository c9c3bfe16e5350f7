package store

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"pidnode/handlev"
)

func putN(t *testing.T, db *DB, prefix string, n int) {
	t.Helper()
	err := db.Update(func(tx *Tx) error {
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("%s/%d", prefix, i)
			if err := tx.PutRecord(k, &Stored{Version: 1, Record: handlev.Record{Handle: k}}); err != nil {
				return err
			}
		}
		return tx.SetAppliedRevision(int64(n))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Replace swaps a fresh file in under readers that keep reading: none fails,
// and afterwards every read sees the new file only.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pidnode.db")
	db, err := Open(Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	putN(t, db, "OLD", 100)

	fresh := path + ".fresh"
	f, err := Open(Config{Path: fresh, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	putN(t, f, "NEW", 50)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, failures atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				// One transaction sees one file: exactly one of the two.
				err := db.View(func(tx *Tx) error {
					_, oldOK, err1 := tx.Record("OLD/1")
					_, newOK, err2 := tx.Record("NEW/1")
					if err1 != nil || err2 != nil || oldOK == newOK {
						failures.Add(1)
					}
					return nil
				})
				if _, _, err2 := db.Get("NEW/2"); err != nil || err2 != nil {
					failures.Add(1)
				}
				reads.Add(1)
			}
		}()
	}
	for reads.Load() < 100 {
	}
	if err := db.Replace(fresh); err != nil {
		t.Fatal(err)
	}
	n := reads.Load()
	for reads.Load() < n+100 {
	}
	stop.Store(true)
	wg.Wait()
	if failures.Load() != 0 {
		t.Errorf("%d reads failed or saw both files or neither", failures.Load())
	}
	if _, ok, _ := db.Get("OLD/1"); ok {
		t.Error("the old file's record is still there")
	}
	if rev, _ := db.AppliedRevision(); rev != 50 {
		t.Errorf("applied revision after Replace = %d, want 50", rev)
	}
	putN(t, db, "AFTER", 3) // writes go to the new file
	if _, ok, _ := db.Get("AFTER/2"); !ok {
		t.Error("a write after Replace is not there")
	}
}

// The audit log and the search index grow at the ends of their key ranges:
// written a commit at a time, as the registry writes them, their pages end
// up nearly full, not half empty (appendFillPercent), so that a commit writes
// fewer pages for what it appends.
func TestAppendBucketsFillTheirPages(t *testing.T) {
	db := openTest(t, "", true)
	value := make([]byte, 300)
	seq := uint64(0)
	for range 200 { // commits of a few entries each
		err := db.Update(func(tx *Tx) error {
			for range 5 {
				seq++
				k := binary.BigEndian.AppendUint64(nil, seq)
				if err := tx.Put(BucketAudit, k, value); err != nil {
					return err
				}
				if err := tx.PutDerived(BucketSearch, k, value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := db.View(func(tx *Tx) error {
		for _, name := range [][]byte{BucketAudit, BucketSearch} {
			st := tx.Bolt().Bucket(name).Stats()
			fill := float64(st.LeafInuse) / float64(st.LeafAlloc)
			if fill < 0.75 {
				t.Errorf("%s: %d leaf pages %.0f %% full, want at least 75 %%", name, st.LeafPageN, 100*fill)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
