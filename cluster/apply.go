package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

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
	if n.applied.Load() > 0 {
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
	if !empty {
		return 0, ErrNotReplica
	}
	rev, err := n.snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return rev, nil
}

// snapshot loads every entry of the prefix as of one revision into the
// database, in one transaction per page, and records that revision as
// applied in the last one. Local entries of the replicated buckets that the
// snapshot does not hold are deleted as the pages pass them (etcd's key
// order within a bucket is bbolt's), so a database that was behind ends up
// equal to the snapshot. A crash part way leaves the old applied revision,
// and the next start loads the snapshot again.
func (n *Node) snapshot(ctx context.Context) (int64, error) {
	rev, keys, err := n.load(ctx, n.cfg.Registry)
	if err != nil {
		return 0, err
	}
	n.invalidate(keys)
	if n.cfg.OnApply != nil {
		n.cfg.OnApply(map[string]bool{"keys": true, "snaas": true})
	}
	n.setApplied(rev)
	n.log.Info("cluster: loaded snapshot", "revision", rev)
	return rev, nil
}

// load loads the snapshot into the database of reg (see snapshot) and
// returns its revision and the record keys it wrote or deleted.
func (n *Node) load(ctx context.Context, reg *registry.Registry) (int64, []string, error) {
	var all []string
	first, err := n.cli.Get(ctx, n.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, nil, fmt.Errorf("cluster: snapshot: %w", err)
	}
	rev := first.Header.Revision
	end := clientv3.GetPrefixRangeEnd(n.prefix)
	from := n.prefix
	seen := map[string][]byte{} // bucket → last key the snapshot held
	for {
		r, err := n.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(snapshotPage))
		if err != nil {
			return 0, nil, fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
		}
		last := !r.More || len(r.Kvs) == 0
		var keys []string
		err = reg.Update(func(tx registry.Tx) error {
			keys = keys[:0]
			mark := map[string][]byte{}
			for b, k := range seen {
				mark[b] = k
			}
			for _, kv := range r.Kvs {
				bucket, key, ok := splitKey(n.prefix, kv.Key)
				if !ok || !registry.IsReplicated(bucket) {
					continue
				}
				gone, err := n.dropBetween(tx, bucket, mark[bucket], key, false)
				if err != nil {
					return err
				}
				keys = append(keys, gone...)
				if err := tx.ApplyPut(bucket, key, kv.Value); err != nil {
					return fmt.Errorf("applying %q: %w", kv.Key, err)
				}
				if bucket == string(store.BucketRecords) {
					keys = append(keys, string(key))
				}
				mark[bucket] = key
			}
			if !last {
				seen = mark
				return nil
			}
			for _, b := range registry.Replicated {
				gone, err := n.dropBetween(tx, string(b), mark[string(b)], nil, true)
				if err != nil {
					return err
				}
				keys = append(keys, gone...)
			}
			return tx.SetAppliedRevision(rev)
		})
		if err != nil {
			return 0, nil, fmt.Errorf("cluster: snapshot at revision %d: %w", rev, err)
		}
		all = append(all, keys...)
		if last {
			break
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
	return rev, all, nil
}

// dropBetween deletes the local entries of bucket after after (nil: from
// the first) and before before (toEnd: to the last), which the snapshot does
// not hold, and returns the record keys it deleted. In the audit bucket only
// entries (8-byte keys) are data; the index keys are left to their entries.
func (n *Node) dropBetween(tx registry.Tx, bucket string, after, before []byte, toEnd bool) ([]string, error) {
	c := tx.Bolt().Bucket([]byte(bucket)).Cursor()
	var k []byte
	if after == nil {
		k, _ = c.First()
	} else if k, _ = c.Seek(after); k != nil && string(k) == string(after) {
		k, _ = c.Next()
	}
	var drop [][]byte
	for ; k != nil && (toEnd || string(k) < string(before)); k, _ = c.Next() {
		if bucket == string(store.BucketAudit) && len(k) != 8 {
			continue
		}
		drop = append(drop, append([]byte(nil), k...))
	}
	var gone []string
	for _, k := range drop {
		if err := tx.ApplyPut(bucket, k, nil); err != nil {
			return nil, err
		}
		if bucket == string(store.BucketRecords) {
			gone = append(gone, string(k))
		}
	}
	return gone, nil
}

// invalidate drops the cached views of record keys.
func (n *Node) invalidate(keys []string) {
	if n.cfg.Invalidator == nil {
		return
	}
	for _, k := range keys {
		n.cfg.Invalidator.Invalidate(k)
	}
}

// applyKV applies one entry (value nil: deleted); keys that are not bucket
// entries of a replicated bucket are skipped.
func (n *Node) applyKV(tx registry.Tx, k, v []byte) error {
	bucket, key, ok := splitKey(n.prefix, k)
	if !ok || !registry.IsReplicated(bucket) {
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
func (n *Node) watch(ctx context.Context) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	from := n.applied.Load() + 1
	wch := n.cli.Watch(wctx, n.prefix, clientv3.WithPrefix(), clientv3.WithRev(from),
		clientv3.WithProgressNotify(), clientv3.WithCreatedNotify())
	for resp := range wch {
		if err := resp.Err(); err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return n.resync(ctx, resp.CompactRevision)
			}
			return err
		}
		n.connected.Store(true)
		if err := n.apply(resp); err != nil {
			return err
		}
	}
	return errors.New("watch channel closed")
}

// resync catches up a node whose applied revision etcd has compacted away:
// the changes in between are gone, so it loads a snapshot into a fresh file
// beside its database, while it goes on serving the copy it has, and swaps
// the fresh file in at once (store.DB.Replace). The node's own data
// (statistics) is copied over first.
func (n *Node) resync(ctx context.Context, compacted int64) error {
	n.resyncs.Add(1)
	n.log.Warn("cluster: applied revision compacted away; loading a snapshot into a fresh file", "applied", n.applied.Load(), "compacted", compacted)
	fresh := n.cfg.DB.Path() + ".resync"
	os.Remove(fresh)
	fdb, err := store.Open(store.Config{Path: fresh, Logger: n.log})
	if err != nil {
		return fmt.Errorf("cluster: resync: %w", err)
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
		return err
	}
	rev, keys, err := n.load(ctx, freg)
	if err != nil {
		return err
	}
	if err := freg.MarkIndexesBuilt(); err != nil {
		return err
	}
	if err := copyBucket(n.cfg.DB, fdb, store.BucketStats); err != nil {
		return err
	}
	// Without a way to drop every cached entry, drop those of both files.
	ia, all := n.cfg.Invalidator.(interface{ InvalidateAll() })
	if !all && n.cfg.Invalidator != nil {
		err := n.cfg.DB.View(func(tx *store.Tx) error {
			return tx.Bolt().Bucket(store.BucketRecords).ForEach(func(k, _ []byte) error {
				keys = append(keys, string(k))
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	if err := fdb.Close(); err != nil {
		return err
	}
	done = true
	if err := n.cfg.DB.Replace(fresh); err != nil {
		return err
	}
	if all {
		ia.InvalidateAll()
	} else {
		n.invalidate(keys)
	}
	if n.cfg.OnApply != nil {
		n.cfg.OnApply(map[string]bool{"keys": true, "snaas": true})
	}
	n.setApplied(rev)
	n.log.Info("cluster: swapped in a snapshot", "revision", rev)
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

// apply applies one watch response in one transaction.
func (n *Node) apply(resp clientv3.WatchResponse) error {
	if len(resp.Events) > 0 {
		n.noteRevision(resp.Events[len(resp.Events)-1].Kv.ModRevision)
	}
	if len(resp.Events) == 0 {
		// A progress notification: every change of the prefix up to its
		// revision has been delivered, so the database is at that revision
		// too (the revisions between were other prefixes' writes).
		if resp.IsProgressNotify() {
			n.setApplied(resp.Header.Revision)
		}
		return nil
	}
	rev := resp.Events[len(resp.Events)-1].Kv.ModRevision
	var (
		keys    []string
		buckets map[string]bool
	)
	err := n.cfg.Registry.Update(func(tx registry.Tx) error {
		keys, buckets = keys[:0], map[string]bool{}
		applied := tx.AppliedRevision()
		if applied >= rev {
			return nil // delivered again after a restart of the watch
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision <= applied {
				continue
			}
			v := ev.Kv.Value
			if ev.Type == mvccpb.DELETE {
				v = nil
			}
			if err := n.applyKV(tx, ev.Kv.Key, v); err != nil {
				return err
			}
			if bucket, key, ok := splitKey(n.prefix, ev.Kv.Key); ok {
				buckets[bucket] = true
				if bucket == string(store.BucketRecords) {
					keys = append(keys, string(key))
				}
			}
		}
		return tx.SetAppliedRevision(rev)
	})
	if err != nil {
		return fmt.Errorf("cluster: applying revision %d: %w", rev, err)
	}
	n.invalidate(keys)
	if n.cfg.OnApply != nil && len(buckets) > 0 {
		n.cfg.OnApply(buckets)
	}
	n.setApplied(rev)
	return nil
}
