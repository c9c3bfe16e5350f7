package cluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Resolution statistics across nodes: each node counts its own resolutions
// and flushes them into its own stats bucket, as a single node does
// (registry/stats.go). After each flush it publishes the totals it wrote to
// etcd, one key per (identifier or namespace, day, node):
//
//	P stats/<stats bucket key> 0x00 <node name>   uint64 big-endian: that node's total
//
// where the stats bucket key is 'i' <record key> 0x00 <YYYYMMDD> or
// 'n' <namespace key prefix> 0x00 <YYYYMMDD>. The statistics routes of any
// node read the range of an identifier or namespace and sum over nodes and
// days (StatsDays). The write rate on etcd is, per node and flush interval,
// one key per identifier resolved in the interval plus one per namespace;
// the values are totals, so a lost publish is made good by the next one.
// These keys are not applied into the nodes' databases. `pidnode cluster
// seed` publishes the totals of the database it loads under the node name
// SeedNodeName (Seed), which no serving node may have, so the statistics
// counted before the move stay in every node's sums.

const statsBatch = 1000

// statsKey is the etcd key of node's total for a stats bucket key.
func statsKey(prefix string, raw []byte, node string) string {
	b := make([]byte, 0, len(prefix)+6+len(raw)+1+len(node))
	b = append(b, prefix...)
	b = append(b, "stats/"...)
	b = append(b, raw...)
	b = append(b, 0)
	return string(append(b, node...))
}

// PublishStats writes this node's totals of the stats bucket keys to etcd
// (admin.Config.StatsWritten). Failures are logged: the next flush that
// touches a key publishes its total again. While another running node holds
// this node's name (nodes.go) it publishes nothing: the keys are that node's.
func (n *Node) PublishStats(keys [][]byte, totals []uint64) {
	if n.nameTaken() {
		n.log.Warn("cluster: statistics not published: another running node holds this node's name", "name", n.cfg.NodeName, "keys", len(keys))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.WriteTimeout)
	defer cancel()
	for lo := 0; lo < len(keys); lo += statsBatch {
		hi := min(lo+statsBatch, len(keys))
		ops := make([]clientv3.Op, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ops = append(ops, clientv3.OpPut(statsKey(n.prefix, keys[i], n.cfg.NodeName), string(binary.BigEndian.AppendUint64(nil, totals[i]))))
		}
		if _, err := n.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			n.log.Warn("cluster: publishing statistics; the next flush publishes them again", "keys", hi-lo, "err", err)
			return
		}
	}
}

// StatsDays calls fn for each day from from to to (UTC, inclusive) that has
// resolutions of the identifier stored under key (namespace false) or of the
// namespace with key prefix key, summed over every node, in date order
// (admin.Config.StatsDays). It reads etcd; when etcd does not answer it
// fails with *UnavailableError.
func (n *Node) StatsDays(ctx context.Context, namespace bool, key string, from, to time.Time, fn func(date string, count uint64)) error {
	kind := byte('i')
	if namespace {
		kind = 'n'
	}
	base := n.prefix + "stats/" + string(kind) + key + "\x00"
	lo := base + from.Format("20060102")
	hi := base + to.Format("20060102") + "\x01"
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	r, err := n.cli.Get(ctx, lo, clientv3.WithRange(hi))
	if err != nil {
		return &UnavailableError{Err: fmt.Errorf("reading statistics: %w", unwrapCtx(err))}
	}
	var day string
	var sum uint64
	for _, kv := range r.Kvs {
		k := string(kv.Key)
		if len(k) < len(base)+9 || len(kv.Value) != 8 {
			continue
		}
		d := k[len(base) : len(base)+8]
		if d != day && day != "" {
			fn(day[:4]+"-"+day[4:6]+"-"+day[6:], sum)
			sum = 0
		}
		day = d
		sum += binary.BigEndian.Uint64(kv.Value)
	}
	if day != "" {
		fn(day[:4]+"-"+day[4:6]+"-"+day[6:], sum)
	}
	return nil
}
