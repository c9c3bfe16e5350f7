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
// group at once, without the window, serves one client twice as fast (~535
// against ~265 creates/s, 1M-record database, server on one core) but makes
// 64 clients commit in small groups: ~700 creates/s against ~2,000, p99
// ~190 ms against ~55 ms. Many writers matter more than one.
//
// The fns of one group share one bbolt transaction and are called in order;
// like store.Update's, they must be idempotent (a group is re-run without a
// member that failed), keep every effect inside tx, and do expensive work
// (validation, record building, JSON encoding) before they are queued.
//
// Fairness. Writes wait in one queue per owner (the admin API's owner is the
// SNAA); a write's cost is the number of identifiers it writes (1 for a
// create or an update, the items of a bulk). A group takes the oldest write
// of each waiting owner in ring order, round after round, while the group's
// cost stays within groupBudget; a write that would take it over the budget
// waits, and its owner is due: the next group takes it whatever it costs. An
// owner whose queue was empty joins the ring at its front, served owners go
// to its back. So a create of an owner that was not writing goes into the
// next group, ahead of any bulk that group could not hold, and a bulk waits
// for at most one group of other owners' writes. Before, a group took every
// waiting write: four concurrent 1000-item bulks of one SNAA made groups of
// four bulks, and another SNAA's single create waited for up to two such
// groups (p99 4.6 ms → 1,257 ms).
type groupCommit struct {
	db *store.DB

	mu sync.Mutex
	// queues holds each owner's waiting writes, oldest first; ring the
	// owners with waiting writes, in the order the next group serves them.
	queues   map[string]*ownerQueue
	ring     []*ownerQueue
	npending int
	busy     bool   // a leader is running groups
	formed   uint64 // groups formed so far

	// onCommit, if set, is told the number of writes of each committed group.
	onCommit func(writes int)
}

// groupBudget bounds the cost (identifiers written) of a group, but for one
// due write: one full bulk (1000 items, the admin API's limit). Groups of
// small writes stay as large as concurrency makes them (BenchmarkCreate's 64
// clients), while two bulks never share a group.
const groupBudget = 1000

// ownerQueue is one owner's waiting writes, oldest first.
type ownerQueue struct {
	owner string
	calls []*commitCall
	due   bool   // its oldest write did not fit the last group
	taken uint64 // the last group (g.formed) that took one of its writes
}

// commitCall is one queued write; done receives its result, or errLead when
// the caller is to lead the next group.
type commitCall struct {
	fn   func(tx *store.Tx) error
	done chan error
	cost int
	// queued is the number of groups formed when the write was queued, group
	// the number of the group that took it (so group-queued is how many
	// groups it waited for, its own included).
	queued, group uint64
}

// errLead hands the leadership of the queue to a waiting caller.
var errLead = errors.New("registry: lead the next commit group")

// update is updateAs for an anonymous owner and a cost of 1.
func (g *groupCommit) update(fn func(tx *store.Tx) error) error {
	return g.updateAs("", 1, fn)
}

// updateAs runs fn, a write of owner costing cost (at least 1), in a write
// transaction shared with concurrent callers and returns after it is
// committed (on disk unless the store is NoSync). fn's error, if any, is
// returned and its changes are rolled back.
func (g *groupCommit) updateAs(owner string, cost int, fn func(tx *store.Tx) error) error {
	_, err := g.call(owner, cost, fn)
	return err
}

// call is updateAs that also returns the queued write (for tests: its group
// numbers).
func (g *groupCommit) call(owner string, cost int, fn func(tx *store.Tx) error) (*commitCall, error) {
	c := &commitCall{fn: fn, done: make(chan error, 1), cost: max(cost, 1)}
	g.mu.Lock()
	g.enqueue(owner, c)
	if g.busy {
		g.mu.Unlock()
		if err := <-c.done; err != errLead {
			return c, err
		}
		g.mu.Lock() // we lead now; busy stayed true
	}
	g.busy = true
	// Lead until the group that takes our own write is committed. It is
	// usually the first: we are alone (busy was false), or we were handed the
	// lead as the oldest write of the first owner. But an owner that starts
	// waiting between the hand-over and take goes to the front of the ring,
	// and a bulk that does not fit behind its write waits for the next group
	// (where it is due, so it is taken). Handing the lead on before our write
	// is committed would hand it to ourselves and leave no leader at all.
	for c.group == 0 {
		group := g.take()
		g.mu.Unlock()
		g.run(group)
		g.mu.Lock()
	}

	// Hand over to the write the next group starts with, so that no caller
	// keeps committing for others while its own reply waits.
	if g.npending > 0 {
		g.ring[0].calls[0].done <- errLead
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return c, <-c.done
}

// enqueue appends c to owner's queue. The caller holds g.mu.
func (g *groupCommit) enqueue(owner string, c *commitCall) {
	if g.queues == nil {
		g.queues = map[string]*ownerQueue{}
	}
	q := g.queues[owner]
	if q == nil {
		q = &ownerQueue{owner: owner}
		g.queues[owner] = q
	}
	if len(q.calls) == 0 {
		// Newly waiting: first in the ring (its last write is done, so it
		// has waited at least as long as anyone served since).
		g.ring = append(g.ring, nil)
		copy(g.ring[1:], g.ring)
		g.ring[0] = q
	}
	c.queued = g.formed
	q.calls = append(q.calls, c)
	g.npending++
}

// take forms the next group (see groupCommit) and reorders the ring:
// owners the group did not serve first, in their order, then the served ones
// that still wait, in the order served. The caller holds g.mu.
func (g *groupCommit) take() []*commitCall {
	g.formed++
	var group []*commitCall
	var served []*ownerQueue
	cost := 0
	for took := true; took && cost < groupBudget; {
		took = false
		for _, q := range g.ring {
			if len(q.calls) == 0 {
				continue
			}
			c := q.calls[0]
			if len(group) > 0 && cost+c.cost > groupBudget && !q.due {
				q.due = q.taken != g.formed // waited through this group
				continue
			}
			q.calls[0] = nil
			q.calls = q.calls[1:]
			q.due = false
			c.group = g.formed
			group = append(group, c)
			cost += c.cost
			g.npending--
			took = true
			if q.taken != g.formed {
				q.taken = g.formed
				served = append(served, q)
			}
		}
	}
	ring := g.ring[:0]
	for _, q := range g.ring {
		if q.taken != g.formed {
			ring = append(ring, q)
		}
	}
	for _, q := range served {
		if len(q.calls) > 0 {
			ring = append(ring, q)
		} else {
			delete(g.queues, q.owner)
		}
	}
	clear(g.ring[len(ring):])
	g.ring = ring
	return group
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
