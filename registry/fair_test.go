package registry

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"pidnode/store"
)

// TestGroupCommitFair: with one owner keeping four writes of cost 1000 (a
// full bulk each) waiting, another owner's single writes are each committed
// by the first group formed after they were queued, and no group holds more
// than one of the heavy writes (before, a group took every waiting write).
func TestGroupCommitFair(t *testing.T) {
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "f.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := newGroupCommit(db, nil)
	put := func(tx *store.Tx, k string, n int) error {
		b := tx.Bolt().Bucket(store.BucketMeta)
		for i := range n {
			if err := b.Put([]byte(fmt.Sprintf("%s-%d", k, i)), []byte("x")); err != nil {
				return err
			}
		}
		return nil
	}
	var mu sync.Mutex
	heavyIn := map[uint64]int{} // group → heavy writes in it
	var stop atomic.Bool
	var heavy atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				c, err := g.call("noisy", groupBudget, func(tx *store.Tx) error { return put(tx, fmt.Sprintf("n%d-%d", w, i), 200) })
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				heavyIn[c.group]++
				mu.Unlock()
				heavy.Add(1)
			}
		}()
	}
	for heavy.Load() < 4 {
		g.update(func(tx *store.Tx) error { return nil })
	}
	for i := range 50 {
		c, err := g.call("quiet", 1, func(tx *store.Tx) error { return put(tx, fmt.Sprintf("q%d", i), 1) })
		if err != nil {
			t.Fatal(err)
		}
		if c.group != c.queued+1 {
			t.Errorf("write %d queued after group %d was committed by group %d", i, c.queued, c.group)
		}
	}
	stop.Store(true)
	wg.Wait()
	for grp, n := range heavyIn {
		if n > 1 {
			t.Errorf("group %d held %d writes of cost %d", grp, n, groupBudget)
		}
	}
}
