package registry

import (
	"errors"
	"sync"
	"time"
)

// Groups forms commit groups from concurrent writes, fairly between their
// owners, and hands each group to a runner: a single node's group commit
// (groupCommit, one bbolt transaction per group) and a cluster node's (one
// etcd transaction per group) share it. See groupCommit for why groups, and
// take for how a group is formed.
//
// At most Lanes groups run at once (0 means 1). A single node runs one: bbolt
// has one writer. A cluster node may run several (groups in flight at once
// only conflict on keys they both write, which etcd's compares catch), but
// runs one too (cluster.commitLanes), and with Linger, so that its groups,
// each costing an etcd transaction, are as large as the load allows.
//
// The first caller that finds a free lane leads: it forms a group, runs it,
// and goes on until the group holding its own write has run; then it hands
// the lane to the oldest waiting write that is not already leading, or frees
// it. So no caller keeps committing for others while its own reply waits.
type Groups[T any] struct {
	// Run commits the group and calls Finish on every member exactly once.
	Run func(group []*Call[T])
	// Lanes bounds the groups running at once; 0 means 1.
	Lanes int
	// Linger, if positive, bounds how long a leader waits before forming a
	// group for the writers the previous group just released (see linger).
	Linger time.Duration

	mu sync.Mutex
	// queues holds each owner's waiting writes, oldest first; ring the
	// owners with waiting writes, in the order the next group serves them.
	queues   map[string]*ownerQueue[T]
	ring     []*ownerQueue[T]
	npending int
	active   int    // lanes in use: callers leading or handed the lead
	formed   uint64 // groups formed so far

	// lastSize and lastRun are the previous group's size and how long Run
	// took with it; arrived, when set, is closed by the enqueue that brings
	// npending to want (linger).
	lastSize int
	lastRun  time.Duration
	arrived  chan struct{}
	want     int
}

// groupBudget bounds the cost (identifiers written) of a group, but for one
// due write: one full bulk (1000 items, the admin API's limit). Groups of
// small writes stay as large as concurrency makes them (BenchmarkCreate's 64
// clients), while two bulks never share a group.
const groupBudget = 1000

// ownerQueue is one owner's waiting writes, oldest first.
type ownerQueue[T any] struct {
	owner string
	calls []*Call[T]
	due   bool   // its oldest write did not fit the last group
	taken uint64 // the last group (formed) that took one of its writes
}

// Call is one queued write.
type Call[T any] struct {
	// Fn is the write, as passed to Do.
	Fn   T
	cost int
	// done receives errLead when the caller is to lead, then its result;
	// room for both, as another lane may run the write of a caller that was
	// just handed the lead.
	done    chan error
	leading bool // handed the lead (errLead sent)
	// queued is the number of groups formed when the write was queued, group
	// the number of the group that took it (so group-queued is how many
	// groups it waited for, its own included).
	queued, group uint64
}

// Finish delivers the write's result to its caller. Run calls it once per
// member.
func (c *Call[T]) Finish(err error) { c.done <- err }

// errLead hands a lane to a waiting caller.
var errLead = errors.New("registry: lead the next commit group")

// Do queues fn, a write of owner costing cost (at least 1), and returns its
// result once a group holding it has run.
func (g *Groups[T]) Do(owner string, cost int, fn T) error {
	_, err := g.call(owner, cost, fn)
	return err
}

// call is Do that also returns the queued write (for tests: its group
// numbers).
func (g *Groups[T]) call(owner string, cost int, fn T) (*Call[T], error) {
	c := &Call[T]{Fn: fn, done: make(chan error, 2), cost: max(cost, 1)}
	g.mu.Lock()
	g.enqueue(owner, c)
	if g.active >= max(g.Lanes, 1) {
		g.mu.Unlock()
		if err := <-c.done; err != errLead {
			return c, err
		}
		g.mu.Lock() // we lead now; the lane stayed counted
	} else {
		g.active++
	}
	// Lead until the group that takes our own write has run. It is usually
	// the first: we were alone, or we were handed the lead as the oldest
	// waiting write. But an owner that starts waiting between the hand-over
	// and take goes to the front of the ring, and a bulk that does not fit
	// behind its write waits for the next group (where it is due, so it is
	// taken). Another lane may also have taken our write meanwhile: then
	// there is nothing to lead, and the lane goes on.
	for c.group == 0 {
		g.linger()
		group := g.take()
		g.lastSize = len(group)
		g.mu.Unlock()
		start := time.Now()
		g.Run(group)
		run := time.Since(start)
		g.mu.Lock()
		g.lastRun = run
	}
	if next := g.nextLeader(); next != nil {
		next.leading = true
		next.done <- errLead
	} else {
		g.active--
	}
	g.mu.Unlock()
	return c, <-c.done
}

// nextLeader is the oldest waiting write, in ring order, that has not been
// handed the lead; nil if there is none. The caller holds g.mu.
func (g *Groups[T]) nextLeader() *Call[T] {
	for _, q := range g.ring {
		for _, c := range q.calls {
			if !c.leading {
				return c
			}
		}
	}
	return nil
}

// enqueue appends c to owner's queue. The caller holds g.mu.
func (g *Groups[T]) enqueue(owner string, c *Call[T]) {
	if g.queues == nil {
		g.queues = map[string]*ownerQueue[T]{}
	}
	q := g.queues[owner]
	if q == nil {
		q = &ownerQueue[T]{owner: owner}
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
	if g.arrived != nil && g.npending >= g.want {
		close(g.arrived)
		g.arrived = nil
	}
}

// linger waits, before a group is formed, until the writers the previous
// group released are back in the queue, for at most half the previous
// group's run and at most Linger. The caller holds g.mu; linger releases it
// while it waits.
//
// Under steady concurrent load without it the writers split into cohorts:
// those released by one group send their next write while the following
// group runs, so each group takes about half of them, and every group's
// fixed cost (a cluster's etcd transaction with each member's fsync, each
// node's apply commit) is paid twice as often as the load needs. A lone
// writer (a previous group of one) never waits.
func (g *Groups[T]) linger() {
	if g.Linger <= 0 || g.lastSize < 2 || g.arrived != nil {
		return // off, a lone writer, or another lane lingers already
	}
	g.want = min(g.npending+g.lastSize, groupBudget)
	if g.npending >= g.want {
		return
	}
	wait := min(g.Linger, g.lastRun/2)
	if wait <= 0 {
		return
	}
	ch := make(chan struct{})
	g.arrived = ch
	g.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
	g.mu.Lock()
	if g.arrived == ch {
		g.arrived = nil
	}
}

// take forms the next group and reorders the ring: owners the group did not
// serve first, in their order, then the served ones that still wait, in the
// order served. The caller holds g.mu.
//
// A write's cost is the number of identifiers it writes (1 for a create or
// an update, the items of a bulk). A group takes the oldest write of each
// waiting owner in ring order, round after round, while the group's cost
// stays within groupBudget; a write that would take it over the budget
// waits, and its owner is due: the next group takes it whatever it costs. An
// owner whose queue was empty joins the ring at its front, served owners go
// to its back. So a create of an owner that was not writing goes into the
// next group, ahead of any bulk that group could not hold, and a bulk waits
// for at most one group of other owners' writes.
func (g *Groups[T]) take() []*Call[T] {
	g.formed++
	var group []*Call[T]
	var served []*ownerQueue[T]
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
