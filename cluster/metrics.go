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
func (n *Node) heartbeat(ctx context.Context) {
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
func (n *Node) checkAlarms(ctx context.Context) {
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
func (n *Node) noteRevision(rev int64) {
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
	TxnTime                                              time.Duration // total time of Txns
}

// Stats returns the node's replication state.
func (n *Node) Stats() Stats {
	s := Stats{Applied: n.applied.Load(), Known: n.known.Load(), RTT: time.Duration(n.rttNanos.Load()),
		Connected: n.Connected(), StorageFull: n.storageFull.Load(), RefusedFull: n.refusedFull.Load(), Resyncs: n.resyncs.Load(), WatchRestarts: n.watchRestarts.Load(),
		Conflicts: n.conflicts.Load(), Unavailable: n.unavailable.Load(), Txns: n.txns.Load(),
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
// (docs/architecture.md practice 13).
func (n *Node) AppendMetrics(b []byte) []byte {
	s := n.Stats()
	b = promtext.Header(b, "pidnode_cluster_node_info", promtext.Gauge, "This cluster node's name and etcd prefix.")
	b = promtext.Int(b, "pidnode_cluster_node_info", 1, promtext.L("node", n.cfg.NodeName), promtext.L("prefix", n.prefix))
	b = promtext.GaugeFamily(b, "pidnode_cluster_applied_revision", "etcd revision applied to the local database.", s.Applied)
	b = promtext.GaugeFamily(b, "pidnode_cluster_lag_revisions", "etcd revisions not yet applied here.", s.Known-s.Applied)
	b = promtext.Header(b, "pidnode_cluster_lag_seconds", promtext.Gauge, "How long the local database has been behind etcd (0 when caught up).")
	b = promtext.Float(b, "pidnode_cluster_lag_seconds", s.Lag.Seconds())
	b = promtext.Header(b, "pidnode_cluster_etcd_rtt_seconds", promtext.Gauge, "Round trip of the last heartbeat read from etcd (one without an answer: its wait).")
	b = promtext.Float(b, "pidnode_cluster_etcd_rtt_seconds", s.RTT.Seconds())
	conn := int64(0)
	if s.Connected {
		conn = 1
	}
	b = promtext.GaugeFamily(b, "pidnode_cluster_connected", "1 while the watch of etcd has a stream and etcd answered a linearizable read within 3 s (writes can be made).", conn)
	full := int64(0)
	if s.StorageFull {
		full = 1
	}
	b = promtext.GaugeFamily(b, "pidnode_cluster_storage_full", "1 while etcd's NOSPACE alarm is raised (its database reached its quota; writes answer 507).", full)
	b = promtext.GaugeFamily(b, "pidnode_cluster_leading", "Elections of the cluster's jobs (link checks, webhook deliveries) this node leads.", n.leading.Load())
	b = promtext.CounterFamily(b, "pidnode_cluster_resyncs_total", "Snapshots loaded because etcd had compacted the applied revision away.", s.Resyncs)
	b = promtext.CounterFamily(b, "pidnode_cluster_watch_restarts_total", "Times the watch of etcd ended and was started again.", s.WatchRestarts)
	b = promtext.CounterFamily(b, "pidnode_cluster_write_conflicts_total", "Write transactions that lost to a concurrent write and were rehearsed again.", s.Conflicts)
	b = promtext.CounterFamily(b, "pidnode_cluster_writes_unavailable_total", "Admin requests answered 503 because etcd did not answer or decide in time (writes, the sync before a keyed request, statistics reads).", s.Unavailable)
	b = promtext.CounterFamily(b, "pidnode_cluster_writes_storage_full_total", "Writes answered 507 because etcd's database is full (NOSPACE alarm).", s.RefusedFull)
	b = promtext.CounterFamily(b, "pidnode_cluster_etcd_txns_total", "Write transactions sent to etcd.", s.Txns)
	b = promtext.Header(b, "pidnode_cluster_etcd_txn_seconds_total", promtext.Counter, "Time spent in write transactions sent to etcd.")
	b = promtext.Float(b, "pidnode_cluster_etcd_txn_seconds_total", s.TxnTime.Seconds())
	return b
}
