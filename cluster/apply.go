package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"pidnode/registry"
	"pidnode/store"
)

// snapshotPage is how many keys one range read of a snapshot returns.
const snapshotPage = 1000

// ErrNotReplica: the database holds data but has never applied anything from
// etcd (a single node's file): applying etcd over it would mix two
// histories. Seed etcd from it with `pidnode cluster seed`, or start the
// node on an empty data directory.
var ErrNotReplica = errors.New("cluster: the database has data of its own and is not a replica of etcd")

// Start brings the local database up to etcd's current state before the
// node serves: a database that has applied nothing loads a snapshot of the
// prefix; one that has applied something catches up through the watch that
// Run starts. It returns the revision the database is at.
func (n *Node) Start(ctx context.Context) (int64, error) {
	some, all := false, true
	for _, s := range n.shards {
		some = some || s.applied.Load() > 0
		all = all && s.applied.Load() > 0
	}
	if all {
		return n.applied.Load(), nil
	}
	var empty = true
	err := n.cfg.DB.View(func(tx *store.Tx) error {
		for _, b := range registry.Replicated {
			if k, _ := tx.Bolt().Bucket(b).Cursor().First(); k != nil {
				// The audit bucket's index marker is not data.
				if string(b) == string(store.BucketAudit) && len(k) != 8 {
					continue
				}
				empty = false
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if !empty && !some {
		return 0, ErrNotReplica
	}
	// Empty, or a copy to which a shard was added: the snapshot loads every
	// shard (a shard's first snapshot cannot be applied as a change).
	rev, err := n.snapshot(ctx)
	if err != nil {
		return 0, err
	}
	n.log.Info("cluster: loaded snapshot", "revision", rev)
	return rev, nil
}

// snapshot makes the database a copy of the prefix as of one revision of
// each shard: it loads every entry into a fresh file beside the database
// (load), while the node goes on serving the copy it has, and swaps the
// fresh file in at once (store.DB.Replace). The node's own data
// (statistics) is copied over first. A crash part way leaves the fresh
// file, which the next snapshot starts again, and the database as it was.
// Every shard's applier waits meanwhile (applyMu), so that the swap loses
// none of their changes: each shard's watch goes on from where it was and
// skips what the snapshot already holds. It returns the registry shard's
// revision.
func (n *Node) snapshot(ctx context.Context) (int64, error) {
	n.applyMu.Lock()
	defer n.applyMu.Unlock()
	fresh := n.cfg.DB.Path() + ".resync"
	os.Remove(fresh)
	fdb, err := store.Open(store.Config{Path: fresh, Logger: n.log})
	if err != nil {
		return 0, fmt.Errorf("cluster: snapshot: %w", err)
	}
	done := false
	defer func() {
		if !done {
			fdb.Close()
			os.Remove(fresh)
		}
	}()
	freg, err := n.cfg.Registry.On(fdb)
	if err != nil {
		return 0, err
	}
	revs := make([]int64, len(n.shards))
	var keep func(s *shard, k []byte) bool
	for i, s := range n.shards {
		if revs[i], err = s.load(ctx, freg, keep); err != nil {
			return 0, err
		}
		if i == 0 && len(n.shards) > 1 {
			// The registry is loaded: it says which shard holds each
			// namespace's entries, which may also linger on a shard the
			// namespace moved off (MoveNamespace).
			if keep, err = n.ownership(freg); err != nil {
				return 0, err
			}
		}
	}
	if err := freg.MarkIndexesBuilt(); err != nil {
		return 0, err
	}
	if err := copyBucket(n.cfg.DB, fdb, store.BucketStats); err != nil {
		return 0, err
	}
	// The records the swap changes: every record of either file. Without a
	// way to drop every cached entry at once, they are dropped one by one.
	ia, all := n.cfg.Invalidator.(interface{ InvalidateAll() })
	var keys []string
	if !all && n.cfg.Invalidator != nil {
		for _, db := range []*store.DB{n.cfg.DB, fdb} {
			err := db.View(func(tx *store.Tx) error {
				return tx.Bolt().Bucket(store.BucketRecords).ForEach(func(k, _ []byte) error {
					keys = append(keys, string(k))
					return nil
				})
			})
			if err != nil {
				return 0, err
			}
		}
	}
	if err := fdb.Close(); err != nil {
		return 0, err
	}
	done = true
	if err := n.cfg.DB.Replace(fresh); err != nil {
		return 0, err
	}
	if all {
		ia.InvalidateAll()
	} else {
		n.invalidate(keys)
	}
	if n.cfg.OnApply != nil {
		n.cfg.OnApply(map[string]bool{"keys": true, "snaas": true})
	}
	for i, s := range n.shards {
		s.setApplied(revs[i])
	}
	if err := n.loadRoutes(); err != nil {
		return 0, err
	}
	return revs[0], nil
}

// load loads every entry of the prefix in this shard as of one revision
// into the database of reg (empty of this shard's entries), records the
// revision as the shard's applied one in the last transaction, and returns
// it. The entries come in one streamed range read at that
// revision (etcd sends it in chunks without counting the rest of the range
// for each, which paged reads with a limit do: quadratic over a large
// prefix), and are written in transactions of about snapshotPage entries.
// Records arrive in key order into an empty bucket, so their pages are
// filled (FillPercent 1).
//
// keep, if not nil, says which entries of the shard to load.
func (n *shard) load(ctx context.Context, reg *registry.Registry, keep func(s *shard, k []byte) bool) (int64, error) {
	first, err := n.cli.Get(ctx, n.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("cluster: snapshot: %w", err)
	}
	rev := first.Header.Revision
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := n.cli.GetStream(sctx, n.prefix, clientv3.WithRange(clientv3.GetPrefixRangeEnd(n.prefix)), clientv3.WithRev(rev))
	if err != nil {
		return 0, fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
	}
	var page []*mvccpb.KeyValue
	write := func(last bool) error {
		err := reg.UpdateAlone(func(tx registry.Tx) error {
			tx.Bolt().Bucket(store.BucketRecords).FillPercent = 1
			for _, kv := range page {
				if keep != nil && !keep(n, kv.Key) {
					continue
				}
				if err := n.applyKV(tx, kv.Key, kv.Value, kv.ModRevision, false); err != nil {
					return err
				}
			}
			if !last {
				return nil
			}
			return tx.SetShardRevision(n.metaKey, rev)
		})
		page = page[:0]
		if err != nil {
			return fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
		}
		return nil
	}
	got := 0
	for chunk := range stream {
		if err := chunk.Err(); err != nil {
			if status.Code(err) == codes.Unimplemented && got == 0 {
				// An etcd before 3.7 has no streamed range: read in pages.
				cancel()
				return rev, n.loadPaged(ctx, rev, write, &page)
			}
			return 0, fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
		}
		got += len(chunk.Kvs)
		page = append(page, chunk.Kvs...)
		if len(page) >= snapshotPage {
			if err := write(false); err != nil {
				return 0, err
			}
		}
	}
	if err := sctx.Err(); err != nil {
		return 0, fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
	}
	if err := write(true); err != nil {
		return 0, err
	}
	return rev, nil
}

// loadPaged is load's range read for an etcd without streamed ranges:
// pages of snapshotPage keys at revision rev, each written as it comes.
func (n *shard) loadPaged(ctx context.Context, rev int64, write func(last bool) error, page *[]*mvccpb.KeyValue) error {
	end := clientv3.GetPrefixRangeEnd(n.prefix)
	from := n.prefix
	for {
		r, err := n.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(snapshotPage))
		if err != nil {
			return fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
		}
		*page = append(*page, r.Kvs...)
		last := !r.More || len(r.Kvs) == 0
		if err := write(last); err != nil {
			return err
		}
		if last {
			return nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// invalidate drops the cached views of record keys.
func (n *shard) invalidate(keys []string) {
	if n.cfg.Invalidator == nil {
		return
	}
	for _, k := range keys {
		n.cfg.Invalidator.Invalidate(k)
	}
}

// applyKV applies one entry written at revision rev (value nil: deleted),
// as etcd holds it (encodeValue) or, plain, as it was before encodeValue:
// the bucket gets the value decoded. Keys that are not bucket entries of a
// replicated bucket are skipped. An audit entry under a transaction's key
// (auditKey) is numbered by rev.
func (n *shard) applyKV(tx registry.Tx, k, v []byte, rev int64, plain bool) error {
	bucket, key, ok := splitKey(n.prefix, k)
	if !ok || !registry.IsReplicated(bucket) {
		return nil
	}
	if v == nil && len(n.node.shards) > 1 && (bucket == string(store.BucketRecords) || bucket == string(store.BucketIdempotency)) {
		// No write deletes a record or an Idempotency-Key record: a delete
		// is a namespace moving off this shard (MoveNamespace), whose
		// entries the new shard holds, whichever of the two this node
		// applies first.
		return nil
	}
	if v != nil && !plain {
		var err error
		if v, err = decodeValue(v); err != nil {
			return fmt.Errorf("applying %q: %w", k, err)
		}
	}
	if bucket == string(store.BucketAudit) && len(key) != 8 {
		seq, ok := auditSeq(key, rev, n.idx)
		if !ok {
			return fmt.Errorf("applying %q: not an audit entry's key", k)
		}
		if v == nil {
			return nil // entries are never deleted; nothing to number
		}
		if err := tx.ApplyAuditAt(seq, v); err != nil {
			return fmt.Errorf("applying %q: %w", k, err)
		}
		return nil
	}
	if err := tx.ApplyPut(bucket, key, v); err != nil {
		return fmt.Errorf("applying %q: %w", k, err)
	}
	return nil
}

// Run applies etcd's changes to the prefix into the local database until ctx
// ends: it watches from the revision after the applied one and applies each
// watch response in one transaction that also records its revision, then
// invalidates the cached records it changed. When the watch breaks (etcd
// unreachable, no leader) it starts again from the applied revision.
func (n *Node) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range n.shards {
		wg.Add(1)
		go func() { defer wg.Done(); s.run(ctx) }()
	}
	wg.Wait()
}

// run is Run for one shard.
func (n *shard) run(ctx context.Context) {
	hb := make(chan struct{})
	go func() { n.heartbeat(ctx); close(hb) }()
	defer func() { <-hb }()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := n.watch(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("cluster: watch ended; resuming", "applied", n.applied.Load(), "err", err)
		}
		n.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		n.watchRestarts.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
}

// watch runs one watch stream until it ends.
func (n *shard) watch(ctx context.Context) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	from := n.applied.Load() + 1
	wch := n.cli.Watch(wctx, n.prefix, clientv3.WithPrefix(), clientv3.WithRev(from),
		clientv3.WithProgressNotify(), clientv3.WithCreatedNotify())
	var batch []clientv3.WatchResponse
	for resp := range wch {
		// Under load, responses queue while one is applied: take every one
		// already waiting (up to applyBatch) into one transaction, so that
		// the applier keeps up with one fsync per batch.
		batch = append(batch[:0], resp)
		closed := false
	drain:
		for len(batch) < applyBatch && batch[len(batch)-1].Err() == nil {
			select {
			case r, ok := <-wch:
				if !ok {
					closed = true
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if !closed {
			batch, closed = n.awaitOwn(wch, batch)
		}
		good := batch
		last := batch[len(batch)-1]
		if last.Err() != nil {
			good = batch[:len(batch)-1]
		}
		if len(good) > 0 {
			n.connected.Store(true)
			if err := n.apply(good); err != nil {
				return err
			}
		}
		if err := last.Err(); err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return n.resync(ctx, last.CompactRevision)
			}
			return err
		}
		if closed {
			break
		}
	}
	return errors.New("watch channel closed")
}

// applyBatch bounds how many watch responses one transaction applies.
const applyBatch = 256

// ownWait bounds how long the watch holds responses back for the node's
// own transactions in flight (awaitOwn).
const ownWait = 2 * time.Millisecond

// awaitOwn adds to batch the responses that bring the node's own
// transactions already sent, for at most ownWait: their callers wait for
// the apply anyway, and one bbolt commit (two fsyncs) for several
// revisions costs about what one does for one. It returns the batch and
// whether the watch channel closed.
func (n *shard) awaitOwn(wch clientv3.WatchChan, batch []clientv3.WatchResponse) ([]clientv3.WatchResponse, bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for len(batch) < applyBatch && batch[len(batch)-1].Err() == nil {
		pending, changed := n.ownPending(max(n.applied.Load(), deliveredRev(batch)))
		if !pending {
			return batch, false
		}
		if timer == nil {
			timer = time.NewTimer(ownWait)
		}
		select {
		case r, ok := <-wch:
			if !ok {
				return batch, true
			}
			batch = append(batch, r)
		case <-changed:
		case <-timer.C:
			return batch, false
		}
	}
	return batch, false
}

// deliveredRev is the revision up to which batch holds every change of
// the prefix: its last event's, or a progress notification's.
func deliveredRev(batch []clientv3.WatchResponse) int64 {
	var rev int64
	for _, r := range batch {
		if n := len(r.Events); n > 0 {
			rev = max(rev, r.Events[n-1].Kv.ModRevision)
		} else if r.IsProgressNotify() {
			rev = max(rev, r.Header.Revision)
		}
	}
	return rev
}

// resync catches up a node whose applied revision etcd has compacted away:
// the changes in between are gone, so it loads a snapshot.
func (n *shard) resync(ctx context.Context, compacted int64) error {
	n.resyncs.Add(1)
	n.log.Warn("cluster: applied revision compacted away; loading a snapshot into a fresh file", "applied", n.applied.Load(), "compacted", compacted)
	rev, err := n.node.snapshot(ctx)
	if err != nil {
		return err
	}
	n.log.Info("cluster: swapped in a snapshot", "revision", rev, "shard_revision", n.applied.Load())
	return nil
}

// copyBucket copies bucket from one database into the other, in one
// transaction.
func copyBucket(from, to *store.DB, bucket []byte) error {
	var kvs [][2][]byte
	err := from.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(bucket).ForEach(func(k, v []byte) error {
			kvs = append(kvs, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		})
	})
	if err != nil {
		return err
	}
	return to.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(bucket)
		for _, kv := range kvs {
			if err := b.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// apply applies watch responses, in order, in one transaction that also
// stores the revision of their last event.
func (n *shard) apply(resps []clientv3.WatchResponse) error {
	var (
		events   []*clientv3.Event
		progress int64 // a progress notification after the last event
	)
	for _, resp := range resps {
		if len(resp.Events) > 0 {
			events = append(events, resp.Events...)
			progress = 0
		} else if resp.IsProgressNotify() {
			// Every change of the prefix up to its revision has been
			// delivered, so the database is at that revision too (the
			// revisions between were other prefixes' writes).
			progress = resp.Header.Revision
		}
	}
	if len(events) == 0 {
		if progress > 0 {
			n.setApplied(progress)
		}
		return nil
	}
	rev := events[len(events)-1].Kv.ModRevision
	n.noteRevision(rev)
	var (
		keys    []string
		buckets map[string]bool
	)
	n.node.applyMu.RLock()
	defer n.node.applyMu.RUnlock()
	err := n.cfg.Registry.UpdateAlone(func(tx registry.Tx) error {
		keys, buckets = keys[:0], map[string]bool{}
		applied := tx.ShardRevision(n.metaKey)
		if applied >= rev {
			return nil // delivered again after a restart of the watch
		}
		for _, ev := range events {
			if ev.Kv.ModRevision <= applied {
				continue
			}
			v, plain := ev.Kv.Value, false
			if ev.Type == mvccpb.DELETE {
				v = nil
			} else if own, ok := n.ownPlain(ev.Kv.Key, v); ok {
				// This node's own write: the value it compressed.
				v, plain = own, true
				n.ownApplied.Add(1)
			}
			if err := n.applyKV(tx, ev.Kv.Key, v, ev.Kv.ModRevision, plain); err != nil {
				return err
			}
			if bucket, key, ok := splitKey(n.prefix, ev.Kv.Key); ok {
				buckets[bucket] = true
				if bucket == string(store.BucketRecords) {
					keys = append(keys, string(key))
				}
			}
		}
		return tx.SetShardRevision(n.metaKey, rev)
	})
	if err != nil {
		return fmt.Errorf("cluster: applying revision %d: %w", rev, err)
	}
	n.applies.Add(1)
	if buckets[string(store.BucketSNAAs)] {
		// Before the revision is published: a write routed after a Sync
		// that waited for it sees the SNAA's shard.
		if err := n.node.loadRoutes(); err != nil {
			return err
		}
	}
	n.invalidate(keys)
	if n.cfg.OnApply != nil && len(buckets) > 0 {
		n.cfg.OnApply(buckets)
	}
	n.setApplied(max(rev, progress))
	return nil
}
