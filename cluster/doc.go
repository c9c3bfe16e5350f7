// Package cluster is pidnode's cluster mode (docs/product.md §10): etcd is
// the authority for everything written, and each node's bbolt file is its
// own complete copy, from which every front reads as on a single node.
//
// It owns the key layout in etcd, applying etcd's changes into the local
// database (Start, Run), and sending the admin API's writes to etcd as
// transactions (Commit). It imports handlev, store, model, registry and
// etcd's client; nothing but cmd imports it, and the read path never calls
// it: resolution on every front goes on from the local copy whatever etcd
// does.
//
// # Key layout
//
// Under the prefix P (--etcd-prefix, default /pidnode/), every entry of a
// replicated bucket (registry.Replicated) is one etcd key:
//
//	P records/<storage key>      a handle record, in store's record encoding (store/doc.go), compressed (below)
//	P snaas/<id>                 an SNAA, JSON (registry.SNAA)
//	P applications/<id>          an SNAA application, JSON
//	P keys/<sha-256 hex>         an API key's metadata, JSON (never the secret)
//	P idempotency/<snaa base key> an Idempotency-Key record, JSON
//	P sessions/<sha-256 hex>     a console session, JSON (never the token)
//	P audit/<id>.<i>             an audit entry written through a cluster, JSON without "seq" (keys.go)
//	P audit/<seq, 8 bytes big-endian> an audit entry of a seeded single node's log, JSON
//	P probe                      read by the start-up probe, never written
//	P stats/<hh>/<YYYYMMDD>/b/<node> a node's resolution totals of one shard and day (stats.go), not applied
//	P stats/<hh>/<YYYYMMDD>/d/<node> the totals changed since that base, not applied
//	P stats/ns/<YYYYMMDD>/<node> a node's namespace totals of one day (stats.go), not applied
//	P moved/<namespace>          in a shard a namespace moved off: refuses its writes there (move.go), not applied
//	P nodes/<node name>          the running node holding the name (nodes.go), not applied
//	P elect/<job>/<lease>        a node's candidacy to run the cluster's jobs (lead.go), not applied
//
// etcd holds the value compressed (codec.go: a zstd frame with a shipped
// dictionary, or the value as it is where that is not smaller, as every
// value written before compression is); decoded, it is byte for byte what
// the bucket holds on a single node (but for the sequence number of an
// audit entry written through a cluster, which each node derives from the
// revision: keys.go), so a node's database is a single node's database:
// `pidnode export` and `backup` work on it, and every node's export is the
// same. Not replicated:
// the URL index and the per-record audit index (derived: each node
// maintains them in the transaction that applies their data), resolution
// statistics and key last-used times (each node's own), and the store's
// meta bucket, which holds the node's applied revision.
//
// # Applying
//
// A node watches P from the revision after the one its database has applied
// and applies each watch response (under load, every response already
// waiting, together) in one bbolt transaction that also stores the
// revision of its last event (store.Tx.SetAppliedRevision) and maintains the
// derived data; after the commit it invalidates the cached records the
// response changed. A crash between two responses loses nothing and applies
// nothing twice: the revision and the data commit together, and a response
// at or below the stored revision is skipped. A database that has applied
// nothing loads a snapshot (range reads at one revision, in pages) before
// the node serves; one that holds data of its own is refused (ErrNotReplica).
// A snapshot always loads into a fresh file and swaps it in at once
// (store.DB.Replace): a node behind etcd's compaction serves its copy
// meanwhile, and a crash part way leaves the database as it was.
//
// # Writes
//
// Commit rehearses the admin API's write against the local copy (a read
// transaction, the write's own changes kept in memory: store.DB.Rehearse),
// sends the writes as one etcd transaction whose compares hold only if no
// key written has changed since the state the rehearsal saw, retries after
// applying the competing write when they fail, and returns once the local
// copy has applied the write (read-your-writes on every front of the
// accepting node). The local copy is written once per write, by the watch's
// apply, which takes the accepting node's own values as they were before
// compression rather than decoding etcd's copy (keepOwn).
// See Commit for the compares. A bulk write is one transaction: etcd needs
// --max-txn-ops of at least RequiredTxnOps and --max-request-bytes of at
// least RequiredRequestBytes, which Dial checks.
//
// API keys and SNAAs are read from the local copy, after Sync: before it
// looks a key up, the admin API reads etcd's current revision (one
// linearizable round trip) and waits until the local copy has applied it, so
// a key revoked or an SNAA suspended through any node is refused by every
// node from the next request on. A request that cannot sync answers 503,
// so the admin API is linearizable; the resolver fronts answer from the
// local copy whatever etcd does.
//
// # Liveness and a full etcd
//
// etcd's client retries a broken connection and watch without ending them,
// so a node knows it can write only from answers: Connected (and WriteState,
// /readyz's writes line) needs a linearizable read answered within
// LiveWindow, which the heartbeat makes every second. A write etcd refuses
// with its NOSPACE alarm raised is a *StorageFullError, a state the
// heartbeat keeps until the alarm is disarmed; Reclaim (`pidnode cluster
// reclaim`) compacts, defragments and disarms.
//
// # Shards
//
// A cluster may keep its data in several etcd clusters (Config.Shards,
// shard.go): the first, the registry shard, holds everything but the
// identifier writes of namespaces whose SNAA names another shard, which
// that shard's etcd holds under the same key layout. Each shard is watched,
// applied (with its own applied revision: store.Tx.ShardRevision), written
// (a write goes to its SNAA's shard) and checked for liveness on its own;
// a snapshot loads every shard while their appliers wait. Node's methods
// that are not about one write (elections, names, statistics, Sync's
// registry part) use the registry shard, which Node embeds. MoveNamespace
// moves a namespace between shards while the nodes run.
//
// Every call a stopping node makes to etcd (resigning, revoking leases,
// closing the client) is bounded, so a node stops in bounded time when etcd
// has stopped first.
package cluster
