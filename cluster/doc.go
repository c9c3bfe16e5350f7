// Package cluster is pidnode's cluster mode: etcd is the authority for
// everything written, and each node's bbolt file is its own complete copy,
// from which every front reads as on a single node. The key layout, the
// guarantees and the operation (names, statistics, a full etcd, shards) are
// in docs/product.md §10; the write path of a create in docs/architecture.md.
//
// It owns:
//   - the key layout under the prefix P (--etcd-prefix): one etcd key
//     P<bucket>/<key> per entry of a replicated bucket (registry.Replicated),
//     and the keys no node applies (probe, nodes/, elect/, stats/, moved/);
//   - applying etcd's changes into the local database (Start, Run): each
//     watch response in one bbolt transaction with its revision
//     (store.Tx.SetAppliedRevision), a snapshot into a fresh file swapped in
//     at once (store.DB.Replace) for an empty or compacted-past copy;
//   - the admin API's writes as etcd transactions (Commit, write.Writer):
//     rehearsed against the local copy (store.DB.Rehearse), sent with
//     compares that hold only if nothing written changed since, answered once
//     the local copy has applied them;
//   - Sync, which the admin API calls before it looks a key up, so a key
//     revoked through any node is refused by every node at the next request;
//   - liveness and a full etcd (Connected, WriteState, *StorageFullError,
//     Reclaim), node names (nodes.go), the jobs' election (lead.go), the
//     published statistics (stats.go), the value codec (codec.go) and the
//     shards (shard.go, move.go).
//
// It imports handlev, store, model, registry, stats and etcd's client; only
// cmd imports it. It must not be on the read path: resolution on every front
// goes on from the local copy whatever etcd does.
//
// # Caveats
//
// A value decoded from etcd is byte for byte what the bucket holds on a
// single node (but an audit entry's sequence number, which each node derives
// from the revision: keys.go), so `pidnode export` and `backup` work on a
// node's file and every node's export is the same. Derived data (the URL,
// search and per-record audit indexes) is maintained by each node as it
// applies; statistics and key last-used times are each node's own.
//
// The accepting node applies its own writes from the values it sent
// (keepOwn), not by decoding etcd's copy: the local copy is written once per
// write. A database with data of its own that never applied etcd is refused
// (ErrNotReplica).
//
// A bulk write is one transaction: etcd needs --max-txn-ops of at least
// RequiredTxnOps and --max-request-bytes of at least RequiredRequestBytes,
// which Dial checks. With several shards, Node embeds the registry shard,
// which serves every call that is not about one write. Every call a stopping
// node makes to etcd is bounded, so it stops even when etcd stopped first.
package cluster
