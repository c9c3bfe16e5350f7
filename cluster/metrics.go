package cluster

import (
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/internal/promtext"
)

// heartbeatEvery is how often a node asks etcd for its current revision
// (a linearizable read: the round trip that makes the node Connected, the
// lag and the round-trip time) and its watch for progress (so that other
// prefixes' writes do not count as lag). Each read waits at most this long.
const heartbeatEvery = time.Second

// alarmEvery is how many heartbeats apart a node asks etcd for its alarms
// while none is raised; while NOSPACE is, it asks at every heartbeat, so
// that writes are ready again within a second or two of the alarm's
// disarming.
const alarmEvery = 5

// heartbeat runs until ctx ends.
func (n *shard) heartbeat(ctx context.Context) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for tick := 0; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, heartbeatEvery)
		start := time.Now()
		r, err := n.cli.Get(hctx, n.probeKey(), clientv3.WithCountOnly())
		// A read without an answer shows its whole wait: the gauge must not
		// keep the last good round trip through an outage.
		n.rttNanos.Store(int64(time.Since(start)))
		if err == nil {
			n.noteContact()
			n.noteRevision(r.Header.Revision)
			n.cli.RequestProgress(clientv3.WithRequireLeader(hctx))
			if tick%alarmEvery == 0 || n.storageFull.Load() {
				n.checkAlarms(hctx)
			}
		}
		cancel()
	}
}

// checkAlarms reads etcd's alarms and notes whether NOSPACE is raised.
func (n *shard) checkAlarms(ctx context.Context) {
	r, err := n.cli.AlarmList(ctx)
	if err != nil {
		return
	}
	full := false
	for _, a := range r.Alarms {
		full = full || a.Alarm == etcdserverpb.AlarmType_NOSPACE
	}
	if was := n.storageFull.Swap(full); was != full {
		if full {
			n.log.Error("cluster: etcd's database is full (NOSPACE alarm); every write is refused until space is freed and the alarm disarmed (pidnode cluster reclaim)")
		} else {
			n.log.Info("cluster: etcd's NOSPACE alarm is disarmed; writes accepted again")
		}
	}
}

// noteRevision records a revision etcd has reached.
func (n *shard) noteRevision(rev int64) {
	for {
		k := n.known.Load()
		if rev <= k {
			break
		}
		if n.known.CompareAndSwap(k, rev) {
			break
		}
	}
	if n.applied.Load() < rev {
		n.behindSince.CompareAndSwap(0, time.Now().UnixNano())
	}
}

// Stats is a snapshot of a node's replication state.
type Stats struct {
	Applied, Known                                       int64         // revision applied here; highest etcd revision seen
	Lag                                                  time.Duration // how long the node has been behind Known (0: caught up)
	RTT                                                  time.Duration // last heartbeat's round trip to etcd
	Connected                                            bool          // Connected()
	StorageFull                                          bool          // StorageFull()
	Resyncs, WatchRestarts, Conflicts, Unavailable, Txns uint64
	RefusedFull                                          uint64        // requests refused for StorageFull
	Applies                                              uint64        // local commits of the watch, each of one or more revisions
	TxnTime                                              time.Duration // total time of Txns
}

// Stats returns the replication state of the node's registry shard (the
// only one of a cluster of one shard); ShardStats has every shard's.
func (n *shard) Stats() Stats {
	s := Stats{Applied: n.applied.Load(), Known: n.known.Load(), RTT: time.Duration(n.rttNanos.Load()),
		Connected: n.Connected(), StorageFull: n.storageFull.Load(), RefusedFull: n.refusedFull.Load(), Resyncs: n.resyncs.Load(), WatchRestarts: n.watchRestarts.Load(),
		Conflicts: n.conflicts.Load(), Unavailable: n.unavailable.Load(), Txns: n.txns.Load(), Applies: n.applies.Load(),
		TxnTime: time.Duration(n.txnNanos.Load())}
	if s.Known < s.Applied {
		s.Known = s.Applied
	}
	if since := n.behindSince.Load(); since != 0 && s.Applied < s.Known {
		s.Lag = time.Since(time.Unix(0, since))
	}
	return s
}

// AppendMetrics appends the node's Prometheus families
// (docs/architecture.md practice 13). In a cluster of several shards, each
// family of the replication state has one sample per shard, labelled
// shard.
func (n *Node) AppendMetrics(b []byte) []byte {
	stats := make([]Stats, len(n.shards))
	for i, s := range n.shards {
		stats[i] = s.Stats()
	}
	labels := func(i int) []promtext.Label {
		if len(n.shards) < 2 {
			return nil
		}
		return []promtext.Label{promtext.L("shard", n.shards[i].name)}
	}
	family := func(name, typ, help string, v func(s Stats) float64) {
		b = promtext.Header(b, name, typ, help)
		for i, s := range stats {
			b = promtext.Float(b, name, v(s), labels(i)...)
		}
	}
	flag := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	b = promtext.Header(b, "pidnode_cluster_node_info", promtext.Gauge, "This cluster node's name and etcd prefix.")
	b = promtext.Int(b, "pidnode_cluster_node_info", 1, promtext.L("node", n.cfg.NodeName), promtext.L("prefix", n.prefix))
	family("pidnode_cluster_applied_revision", promtext.Gauge, "etcd revision applied to the local database.", func(s Stats) float64 { return float64(s.Applied) })
	family("pidnode_cluster_lag_revisions", promtext.Gauge, "etcd revisions not yet applied here.", func(s Stats) float64 { return float64(s.Known - s.Applied) })
	family("pidnode_cluster_lag_seconds", promtext.Gauge, "How long the local database has been behind etcd (0 when caught up).", func(s Stats) float64 { return s.Lag.Seconds() })
	family("pidnode_cluster_etcd_rtt_seconds", promtext.Gauge, "Round trip of the last heartbeat read from etcd (one without an answer: its wait).", func(s Stats) float64 { return s.RTT.Seconds() })
	family("pidnode_cluster_connected", promtext.Gauge, "1 while the watch of etcd has a stream and etcd answered a linearizable read within 3 s (writes can be made).", func(s Stats) float64 { return flag(s.Connected) })
	family("pidnode_cluster_storage_full", promtext.Gauge, "1 while etcd's NOSPACE alarm is raised (its database reached its quota; writes answer 507).", func(s Stats) float64 { return flag(s.StorageFull) })
	b = promtext.GaugeFamily(b, "pidnode_cluster_leading", "Elections of the cluster's jobs (link checks, webhook deliveries) this node leads.", n.leading.Load())
	family("pidnode_cluster_resyncs_total", promtext.Counter, "Snapshots loaded because etcd had compacted the applied revision away.", func(s Stats) float64 { return float64(s.Resyncs) })
	family("pidnode_cluster_watch_restarts_total", promtext.Counter, "Times the watch of etcd ended and was started again.", func(s Stats) float64 { return float64(s.WatchRestarts) })
	family("pidnode_cluster_write_conflicts_total", promtext.Counter, "Write transactions that lost to a concurrent write and were rehearsed again.", func(s Stats) float64 { return float64(s.Conflicts) })
	family("pidnode_cluster_writes_unavailable_total", promtext.Counter, "Admin requests answered 503 because etcd did not answer or decide in time (writes, the sync before a keyed request, statistics reads).", func(s Stats) float64 { return float64(s.Unavailable) })
	family("pidnode_cluster_writes_storage_full_total", promtext.Counter, "Writes answered 507 because etcd's database is full (NOSPACE alarm).", func(s Stats) float64 { return float64(s.RefusedFull) })
	family("pidnode_cluster_etcd_txns_total", promtext.Counter, "Write transactions sent to etcd.", func(s Stats) float64 { return float64(s.Txns) })
	family("pidnode_cluster_applies_total", promtext.Counter, "Transactions in which the watch applied etcd's changes to the local database, each of one or more revisions.", func(s Stats) float64 { return float64(s.Applies) })
	family("pidnode_cluster_etcd_txn_seconds_total", promtext.Counter, "Time spent in write transactions sent to etcd.", func(s Stats) float64 { return s.TxnTime.Seconds() })
	return b
}
