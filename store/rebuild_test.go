package store

import (
	"bytes"
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
	err := db.RebuildDerived([][]byte{BucketURLIndex, BucketSearch}, nil, func(tx *Tx, emit func(i int, k, v []byte) error) error {
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
	err = db.RebuildDerived([][]byte{BucketSearch}, nil, func(tx *Tx, emit func(i int, k, v []byte) error) error {
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

// RebuildDerived's group stores runs of entries as one, their values in key
// order, the last of repeated keys once, across sorted runs on disk; the
// entries it does not group stay as they are.
func TestRebuildDerivedGroups(t *testing.T) {
	saved := rebuildRunBytes
	rebuildRunBytes = 2 << 10
	t.Cleanup(func() { rebuildRunBytes = saved })
	db := openTest(t, filepath.Join(t.TempDir(), "g.db"), true)
	const n = 3000
	rng := rand.New(rand.NewPCG(5, 6))
	// g/NNN/MMMM: grouped by g/NNN/ (a group's key changes at each
	// multiple of 7 of MMMM, as a stateful group would split it); other
	// keys stand alone.
	groupOf := func(i int, k []byte) ([]byte, bool) {
		if i != 0 || !bytes.HasPrefix(k, []byte("g/")) {
			return nil, false
		}
		var a, b int
		if _, err := fmt.Sscanf(string(k), "g/%03d/%04d", &a, &b); err != nil {
			t.Errorf("group heard %q", k)
			return nil, false
		}
		return []byte(fmt.Sprintf("g/%03d/%04d", a, b/7*7)), true
	}
	err := db.RebuildDerived([][]byte{BucketSearch, BucketURLIndex}, groupOf, func(tx *Tx, emit func(i int, k, v []byte) error) error {
		for _, j := range rng.Perm(n) {
			k := []byte(fmt.Sprintf("g/%03d/%04d", j%17, j))
			if err := emit(0, k, []byte("old,")); err != nil {
				return err
			}
			if err := emit(0, k, []byte(fmt.Sprintf("%d,", j))); err != nil {
				return err
			}
			if err := emit(1, k, []byte("alone")); err != nil {
				return err
			}
			if err := emit(0, []byte(fmt.Sprintf("h/%04d", j)), []byte("x")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for j := range n {
		k := fmt.Sprintf("g/%03d/%04d", j%17, j/7*7)
		want[k] += fmt.Sprintf("%d,", j)
		want[fmt.Sprintf("h/%04d", j)] = "x"
	}
	err = db.View(func(tx *Tx) error {
		for err := range tx.tx.Check() {
			t.Errorf("bbolt check: %v", err)
		}
		got := map[string]string{}
		c := tx.tx.Bucket(BucketSearch).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			got[string(k)] = string(v)
		}
		if len(got) != len(want) {
			t.Errorf("%d entries, want %d", len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		if k := tx.tx.Bucket(BucketURLIndex).Stats().KeyN; k != n {
			t.Errorf("the ungrouped bucket holds %d entries, want %d", k, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
