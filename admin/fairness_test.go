//go:build !race

// The race detector slows the four bulks' decoding several times over, and
// on a two-core machine they then starve the create's way through the
// handler for seconds, so bulks that commit meanwhile count against the
// pipeline: `make test` runs this test in its race-free pass. registry's
// TestGroupCommitFair checks the queue's rule exactly, with and without it.

package admin

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pidnode/registry"
	"pidnode/store"
)

// TestWritersShareCommitsFairly: while one SNAA keeps four 1000-item bulks in
// flight, another SNAA's single creates are not queued behind them. A commit
// group (registry/commit.go) holds at most one bulk of an SNAA, and a create
// of an SNAA that was not writing goes into the next group formed, before any
// bulk that group cannot hold; so between the moment a create is queued and
// its commit, only the group then in flight, one bulk, is committed. The
// count is read from the audit log's sequence, which follows the commit
// order. It starts before the request is sent, so a group that commits while
// the request travels to the server and is checked counts too: on a loaded
// machine that can be another bulk or two, which says nothing about the
// pipeline. So the test asserts what the pipeline decides: the typical create
// (the median) has at most the one bulk in flight ahead of it, and none has
// all four; before, groups held every waiting bulk and a create found up to
// 4000 items committed ahead of it. registry's TestGroupCommitFair checks the
// same rule exactly, on the queue itself.
func TestWritersShareCommitsFairly(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "NOISY"})
	b := e.snaa(map[string]any{"namespace": "QUIET"})
	items := make([]any, MaxBulkItems)
	for i := range items {
		items[i] = validPayload()
	}
	bulkBody := mustJSON(t, items)
	lastSeq := func() uint64 {
		var seq uint64
		if err := e.db.View(func(tx *store.Tx) error {
			seq = tx.Bolt().Bucket(store.BucketAudit).Sequence()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return seq
	}

	var stop atomic.Bool
	var bulks atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if r := e.do("POST", "/pid/v2/handles/21.12345/NOISY/bulk", a.Key.Secret, bulkBody); r.Status != 200 {
					t.Errorf("bulk: %d %.200s", r.Status, r.Body)
					return
				}
				bulks.Add(1)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	// Wait until the bulks queue up.
	for bulks.Load() < 4 && !t.Failed() {
		e.do("GET", "/pid/v2/me", b.Key.Secret, nil)
	}

	var aheads []uint64
	for i := range 16 {
		before := lastSeq()
		var id Identifier
		wantStatus(t, e.do("POST", "/pid/v2/handles/21.12345/QUIET/", b.Key.Secret, validPayload()), 201).json(t, &id)
		var hist []registry.AuditEntry
		if err := e.srv.reg.View(func(tx registry.Tx) error {
			var err error
			hist, err = tx.HandleAudit(mustKey(t, e, id.Handle))
			return err
		}); err != nil || len(hist) != 1 {
			t.Fatalf("history of %s: %v %v", id.Handle, hist, err)
		}
		ahead := hist[0].Seq - before - 1
		aheads = append(aheads, ahead)
		t.Logf("create %d: %d writes of the other SNAA committed ahead of it", i, ahead)
	}
	slices.Sort(aheads)
	if median := aheads[len(aheads)/2]; median > MaxBulkItems {
		t.Errorf("the median create waited for %d writes of another SNAA; at most %d (the bulk in flight) expected: %v", median, MaxBulkItems, aheads)
	}
	if worst := aheads[len(aheads)-1]; worst >= 4*MaxBulkItems {
		t.Errorf("a single create waited for %d writes of another SNAA: every waiting bulk went first: %v", worst, aheads)
	}
}
