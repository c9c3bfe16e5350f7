package registry

import (
	"path/filepath"
	"testing"
	"time"

	"pidnode/store"
)

// TestLeaderWhoseWriteWaits: a create handed the lead while another owner's
// bulk has just gone to the front of the ring (its owner was not waiting)
// does not fit behind that bulk, so the group it forms does not hold its own
// write. It must go on leading until its write is committed; it once handed
// the lead to itself, returned errLead as its result (a 500) and left every
// later writer waiting for a leader that never came.
func TestLeaderWhoseWriteWaits(t *testing.T) {
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "l.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := newGroupCommit(db, nil)
	noop := func(*store.Tx) error { return nil }

	// A leader is committing (busy): the bulk and then the create queue up.
	g.mu.Lock()
	g.active = 1
	g.mu.Unlock()
	pending := func(n int) { t.Helper(); waitPending(t, &g.Groups, n) }
	bulk, create := make(chan error, 1), make(chan error, 1)
	go func() { _, err := g.call("Q", 1, noop); create <- err }()
	pending(1)
	go func() { _, err := g.call("N", groupBudget, noop); bulk <- err }()
	pending(2) // N, newly waiting, is now first in the ring

	// The leader finishes and hands the lead to Q's create, as it would have
	// just before N's bulk arrived.
	g.mu.Lock()
	g.queues["Q"].calls[0].done <- errLead
	g.mu.Unlock()

	for name, ch := range map[string]chan error{"bulk": bulk, "create": create} {
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never committed: no leader", name)
		}
	}
	// And the pipeline still has a leader for the next writer.
	done := make(chan error, 1)
	go func() { done <- g.update(noop) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a later write never committed: the pipeline lost its leader")
	}
}
