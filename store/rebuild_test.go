package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// RebuildDerived replaces a bucket's entries with what fill emits, in any
// order and repeated (the last wins), through sorted runs on disk when they
// exceed the memory bound; the file passes bbolt's check; a fill that fails
// leaves the bucket emptied, as a crash on the way would.
func TestRebuildDerived(t *testing.T) {
	saved := rebuildRunBytes
	rebuildRunBytes = 4 << 10 // many runs, merged from the file
	t.Cleanup(func() { rebuildRunBytes = saved })
	db := openTest(t, filepath.Join(t.TempDir(), "r.db"), true)
	if err := db.UpdateAlone(func(tx *Tx) error {
		return tx.PutDerived(BucketSearch, []byte("stale"), []byte("x"))
	}); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	rng := rand.New(rand.NewPCG(3, 4))
	order := rng.Perm(n)
	err := db.RebuildDerived([][]byte{BucketURLIndex, BucketSearch}, func(tx *Tx, emit func(i int, k, v []byte) error) error {
		for _, i := range order {
			k := []byte(fmt.Sprintf("key-%05d", i))
			if err := emit(i%2, k, []byte("first")); err != nil {
				return err
			}
			if err := emit(i%2, k, []byte(fmt.Sprintf("v%d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *Tx) error {
		for err := range tx.tx.Check() {
			t.Errorf("bbolt check: %v", err)
		}
		for b, name := range [][]byte{BucketURLIndex, BucketSearch} {
			i, c := b, tx.tx.Bucket(name).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if want := fmt.Sprintf("key-%05d", i); string(k) != want || string(v) != fmt.Sprintf("v%d", i) {
					t.Fatalf("%s: %q=%q, want %q=v%d", name, k, v, want, i)
				}
				i += 2
			}
			if i != n+b {
				t.Errorf("%s ends before entry %d", name, i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	boom := errors.New("boom")
	err = db.RebuildDerived([][]byte{BucketSearch}, func(tx *Tx, emit func(i int, k, v []byte) error) error {
		if err := emit(0, []byte("a"), nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("a failing fill: %v, want boom", err)
	}
	err = db.View(func(tx *Tx) error {
		if k, _ := tx.tx.Bucket(BucketSearch).Cursor().First(); k != nil {
			t.Errorf("after a failing fill the bucket still holds %q", k)
		}
		if k, _ := tx.tx.Bucket(BucketURLIndex).Cursor().First(); k == nil {
			t.Error("a bucket not rebuilt lost its entries")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
