package registry

import (
	"errors"
	"fmt"
	"sync"

	"pidnode/store"
)

// groupCommit runs the identifier writes' transactions with group commit: at
// most one store.Update is in flight, and every write that arrives while it
// commits (fsyncs) waits for the next one, which takes them all at once.
//
// Why not rely on store.Update's bbolt Batch alone: Batch closes a batch when
// its timer (MaxBatchDelay) fires, not when the writer is free. With a commit
// (two fdatasyncs) several times longer than the delay, the writers that
// arrive during one commit are cut into several batches that then queue on
// bbolt's writer lock and commit one after another, each with its own fsync:
// BenchmarkCreate at 64 clients measured 5–6 creates per commit and 600–700
// creates/s with the CPU mostly idle. Here the next batch is closed exactly
// when the previous commit returns, so it holds everyone who waited.
//
// Groups are committed with store.Update, whose batch window lets the writers
// that arrive while a group is being built join its commit. Committing each
// group at once without the window (a store.UpdateNow, tried and removed)
// served one client twice as fast (~535 against ~265 creates/s, 1M-record
// database, server on one core) but made 64 clients commit in small groups:
// ~700 creates/s against ~2,000, p99 ~190 ms against ~55 ms.
//
// The fns of one group share one bbolt transaction and are called in order;
// like store.Update's, they must be idempotent (a group is re-run without a
// member that failed), keep every effect inside tx, and do expensive work
// (validation, record building, JSON encoding) before they are queued.
type groupCommit struct {
	db *store.DB

	mu      sync.Mutex
	pending []*commitCall
	busy    bool // a leader is running groups

	// onCommit, if set, is told the number of writes of each committed group.
	onCommit func(writes int)
}

// commitCall is one queued write; done receives its result, or errLead when
// the caller is to lead the next group.
type commitCall struct {
	fn   func(tx *store.Tx) error
	done chan error
}

// errLead hands the leadership of the queue to a waiting caller.
var errLead = errors.New("registry: lead the next commit group")

// update runs fn in a write transaction shared with concurrent callers and
// returns after it is committed (on disk unless the store is NoSync). fn's
// error, if any, is returned and its changes are rolled back.
func (g *groupCommit) update(fn func(tx *store.Tx) error) error {
	c := &commitCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	if g.busy {
		g.mu.Unlock()
		if err := <-c.done; err != errLead {
			return err
		}
		g.mu.Lock() // we lead now; busy stayed true
	}
	g.busy = true
	group := g.pending
	g.pending = nil
	g.mu.Unlock()

	g.run(group)

	// Hand over to the oldest waiter, if any, so that no caller keeps
	// committing for others while its own reply waits.
	g.mu.Lock()
	if len(g.pending) > 0 {
		g.pending[0].done <- errLead
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return <-c.done
}

// run commits group in one transaction. If a member fails, the transaction is
// rolled back, that member is run alone (so its error is its own) and the
// others are committed again without it.
func (g *groupCommit) run(group []*commitCall) {
	for len(group) > 0 {
		failed := -1
		err := g.db.Update(func(tx *store.Tx) error {
			failed = -1
			for i, c := range group {
				if err := safeCall(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 || len(group) == 1 {
			if err == nil && g.onCommit != nil {
				g.onCommit(len(group))
			}
			for _, c := range group {
				c.done <- err
			}
			return
		}
		c := group[failed]
		group = append(group[:failed:failed], group[failed+1:]...)
		c.done <- g.db.Update(func(tx *store.Tx) error { return safeCall(c.fn, tx) })
	}
}

// safeCall turns a panic of fn into its error, so that one bad write fails
// alone instead of taking the group (and the server) down.
func safeCall(fn func(tx *store.Tx) error, tx *store.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("registry: write panicked: %v", p)
		}
	}()
	return fn(tx)
}
