package registry

import (
	"fmt"

	"pidnode/store"
)

// groupCommit runs the identifier writes' transactions with group commit: at
// most one commit is in flight, and every write that arrives while it commits
// (fsyncs) waits for the next one, which takes them all at once.
//
// Why not rely on store.Update's bbolt Batch alone: Batch closes a batch when
// its timer (MaxBatchDelay) fires, not when the writer is free. With a commit
// (two fdatasyncs) several times longer than the delay, the writers that
// arrive during one commit are cut into several batches that then queue on
// bbolt's writer lock and commit one after another, each with its own fsync,
// while the CPU idles. Here the next batch is closed exactly when the
// previous commit returns, so it holds everyone who waited.
//
// Each group commits at once (store.UpdateAlone), without Batch's window:
// the writers that arrive while a group commits wait in Groups for the next
// group, so a window would only delay every commit (BenchmarkCreate compares
// the two).
//
// The fns of one group share one bbolt transaction and are called in order;
// like store.Update's, they must be idempotent (a group is re-run without a
// member that failed), keep every effect inside tx, and do expensive work
// (validation, record building, JSON encoding) before they are queued.
//
// Fairness. Writes wait in one queue per owner (the admin API's owner is the
// SNAA), and Groups.take forms each group from them so that one owner's
// large or many writes delay another owner's write by at most one group: a
// group that took every waiting write would make one SNAA's concurrent
// 1000-item bulks delay another SNAA's single create by whole bulks.
type groupCommit struct {
	db *store.DB
	Groups[func(tx *store.Tx) error]

	// onCommit, if set, is told the number of writes of each committed group.
	onCommit func(writes int)
}

// newGroupCommit returns the group commit of db (one lane: bbolt has one
// writer).
func newGroupCommit(db *store.DB, onCommit func(writes int)) *groupCommit {
	g := &groupCommit{db: db, onCommit: onCommit}
	g.Run = g.run
	return g
}

// update is updateAs for an anonymous owner and a cost of 1.
func (g *groupCommit) update(fn func(tx *store.Tx) error) error {
	return g.updateAs("", 1, fn)
}

// updateAs runs fn, a write of owner costing cost (at least 1), in a write
// transaction shared with concurrent callers and returns after it is
// committed (on disk unless the store is NoSync). fn's error, if any, is
// returned and its changes are rolled back.
func (g *groupCommit) updateAs(owner string, cost int, fn func(tx *store.Tx) error) error {
	return g.Do(owner, cost, fn)
}

// run commits group in one transaction. If a member fails, the transaction is
// rolled back, that member is run alone (so its error is its own) and the
// others are committed again without it.
func (g *groupCommit) run(group []*Call[func(tx *store.Tx) error]) {
	for len(group) > 0 {
		failed := -1
		err := g.db.UpdateAlone(func(tx *store.Tx) error {
			failed = -1
			for i, c := range group {
				if err := safeCall(c.Fn, tx); err != nil {
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
				c.Finish(err)
			}
			return
		}
		c := group[failed]
		group = append(group[:failed:failed], group[failed+1:]...)
		c.Finish(g.db.UpdateAlone(func(tx *store.Tx) error { return safeCall(c.Fn, tx) }))
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
