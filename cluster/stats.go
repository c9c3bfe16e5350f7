package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/stats"
	"pidnode/store"
)

// Resolution statistics across nodes (docs/product.md §10): each node counts
// its own resolutions and flushes them into its own stats bucket, as a single
// node does (package stats). After each flush it publishes its totals of
// the day to etcd in a bounded number of keys per node and UTC day:
//
//	P stats/<hh>/<YYYYMMDD>/b/<node>   base: the node's totals of shard hh that day
//	P stats/<hh>/<YYYYMMDD>/d/<node>   delta: totals changed since the base was written
//	P stats/ns/<YYYYMMDD>/<node>       the node's namespace totals that day
//
// A stats bucket key is an entry and a day (stats.SplitStatsKey, the
// format's one decoder). An identifier's entry is an entry of the day's
// shard hh, the two lowercase hex digits of statsShard (FNV-1a of the entry
// modulo statsShards = 256), so every day of one identifier is in the same
// shard. A namespace's entry (stats.NamespaceEntry) is an entry of the
// day's namespace key, which holds them all (a few per node: small, and kept
// forever). Shards published before namespace keys existed hold namespace
// entries too; StatsDays reads both.
// A value is a shard encoding (appendShardEntry): a version byte, then
// entries in ascending key order, each the key's length (uvarint), the key
// and the total (uvarint). A node's total of an entry on a day is its delta's
// if the delta holds the entry, else its base's. The statistics routes of any
// node read one shard's keys over the days asked (one range read; every
// node's base and delta), and sum over nodes (StatsDays).
//
// Publishing: a node keeps its current day's shard values in memory (and an
// earlier day's until published), the encodings it publishes, built from the
// totals each flush wrote (and, the first time a day is seen after the
// process started, from one scan of its stats bucket, which then holds
// everything counted before). A flush
// rewrites the day's namespace key and, for each shard it touched, that
// shard's delta, which holds every entry changed since the base was
// written; once the deltas written since the base would, with this one,
// outweigh the base, the delta is folded into the base, and the base is
// put and the delta deleted in one transaction.
// With n entries in a node's day and k of them changed per flush, a delta is
// folded after about sqrt(2n/k) flushes, so a flush puts about sqrt(2nk)
// entries (of some 25 to 45 bytes) in min(k, 256) values, and never more
// than the whole day's n entries (BenchmarkStatsPublish measures it;
// docs/product.md §10 has the figures). Values are totals, so a publication that fails is made good
// by the next one (the shards stay marked until published). A base larger
// than statsShardMax (with 45-byte entries, ~23,000 entries; some 6 million
// distinct identifiers and namespaces per node and day) is not published:
// the node logs it once and its other shards go on.
//
// Retention (docs/product.md §10): identifier shards of days before a
// node's --stats-retention are deleted by that node (ExpireStats), as its
// stats bucket's identifier keys are (stats.Service.Expire);
// namespace keys are kept forever. Keys of any other form under P stats/
// (such as one key per entry, node and day) are not read. These keys are
// not applied into the nodes' databases. `pidnode cluster seed` publishes
// the totals of the database it loads as bases and namespace keys of the
// node name SeedNodeName (Seed), which no serving node may have, so the
// statistics counted before the move stay in every node's sums.
const (
	statsShards   = 256
	statsVersion  = 1
	statsShardMax = 1 << 20
	statsTxnBytes = 4 << 20 // bytes of values per publishing transaction
	statsReadPage = 32      // keys per read of StatsDays (each at most statsShardMax)
	statsListPage = 4096    // keys per read of keys alone (ExpireStats)
	statsKeepDays = 8       // days of shards held while not all published
)

// statsShard is the shard of an entry key.
func statsShard(key []byte) int {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % statsShards)
}

// statsDayPrefix is the prefix of the keys of shard on day (YYYYMMDD).
func statsDayPrefix(prefix string, shard int, day string) string {
	const hex = "0123456789abcdef"
	return prefix + "stats/" + string([]byte{hex[shard>>4], hex[shard&15]}) + "/" + day + "/"
}

// statsNSKey is the etcd key of node's namespace totals of day.
func statsNSKey(prefix, day, node string) string {
	return prefix + "stats/ns/" + day + "/" + node
}

// statsKey is the etcd key of node's base (delta false) or delta of shard on
// day.
func statsKey(prefix string, shard int, day string, delta bool, node string) string {
	kind := "b/"
	if delta {
		kind = "d/"
	}
	return statsDayPrefix(prefix, shard, day) + kind + node
}

// appendShardEntry appends one entry of a shard encoding (after its version
// byte) to b.
func appendShardEntry(b, key []byte, total uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return binary.AppendUvarint(b, total)
}

var errShard = errors.New("cluster: malformed statistics shard")

// decodeShard calls fn with each entry of the shard encoding b in order,
// until fn returns false. b comes from etcd: anything but a version byte
// statsVersion and whole entries in strictly ascending key order is an
// error (errShard), reported after the entries before it.
func decodeShard(b []byte, fn func(key []byte, total uint64) bool) error {
	if len(b) == 0 || b[0] != statsVersion {
		return fmt.Errorf("%w: version %v", errShard, b[:min(len(b), 1)])
	}
	b = b[1:]
	var last []byte
	for i := 0; len(b) > 0; i++ {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return fmt.Errorf("%w: entry %d: bad key length", errShard, i)
		}
		key := b[w : w+int(n)]
		b = b[w+int(n):]
		total, w := binary.Uvarint(b)
		if w <= 0 {
			return fmt.Errorf("%w: entry %d: bad total", errShard, i)
		}
		b = b[w:]
		if i > 0 && bytes.Compare(last, key) >= 0 {
			return fmt.Errorf("%w: entry %d: keys out of order", errShard, i)
		}
		last = key
		if !fn(key, total) {
			return nil
		}
	}
	return nil
}

// statsEntry is one entry of a shard: the stats bucket key without the day.
type statsEntry struct {
	key   []byte
	total uint64
}

// mergeShard returns the encoding of shard encoding old (ours: well formed)
// with the entries of upd (sorted by key, keys unique) set.
func mergeShard(old []byte, upd []statsEntry) []byte {
	out := make([]byte, 1, len(old)+len(upd)*48+1)
	out[0] = statsVersion
	i := 0
	if len(old) > 0 {
		decodeShard(old, func(k []byte, t uint64) bool {
			for i < len(upd) && bytes.Compare(upd[i].key, k) < 0 {
				out = appendShardEntry(out, upd[i].key, upd[i].total)
				i++
			}
			if i < len(upd) && bytes.Equal(upd[i].key, k) {
				t = max(t, upd[i].total)
				i++
			}
			out = appendShardEntry(out, k, t)
			return true
		})
	}
	for ; i < len(upd); i++ {
		out = appendShardEntry(out, upd[i].key, upd[i].total)
	}
	return out
}

// sortEntries sorts es by key and keeps the largest total of a key.
func sortEntries(es []statsEntry) []statsEntry {
	slices.SortFunc(es, func(a, b statsEntry) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return -compareUint(a.total, b.total)
	})
	return slices.CompactFunc(es, func(a, b statsEntry) bool { return bytes.Equal(a.key, b.key) })
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// splitStatsKey is stats.SplitStatsKey with the day as a string.
func splitStatsKey(k []byte) (entry []byte, day string, ok bool) {
	entry, d, ok := stats.SplitStatsKey(k)
	return entry, string(d), ok
}

// Publishing states of a shard.
const (
	shardClean = iota
	shardDelta // the delta is to be put
	shardBase  // the base is to be put and the delta deleted
)

// statsDay is one day of this node's shards, as published or to publish.
type statsDay struct {
	base, delta [statsShards][]byte // encodings; nil when empty
	state       [statsShards]uint8
	spent       [statsShards]int  // bytes of deltas written since the base
	over        [statsShards]bool // too large to publish; logged
	ns          []byte            // namespace totals, a shard encoding; nil when none
	nsDirty     bool              // ns is to be put
	nsOver      bool              // ns too large to publish; logged
}

// dirty reports whether anything of d is still to be published.
func (d *statsDay) dirty() bool {
	return d.nsDirty || slices.ContainsFunc(d.state[:], func(s uint8) bool { return s != shardClean })
}

// statsPub is this node's publishing state (PublishStats).
type statsPub struct {
	mu    sync.Mutex
	start string // the day the process started: days up to it are read from the bucket first
	floor string // the newest day dropped from days: days up to it too
	days  map[string]*statsDay

	putBytes, puts uint64 // values published, and their bytes (tests)
}

// PublishStats is told the stats bucket keys a flush wrote and their new
// totals (stats.Config.Published), and publishes this node's shards the
// flush touched. Failures are logged: the shards are published at the next
// flush. While another running node holds this node's name (nodes.go) it
// publishes nothing: the keys are that node's.
func (n *Node) PublishStats(keys [][]byte, totals []uint64) {
	p := &n.stats
	p.mu.Lock()
	defer p.mu.Unlock()
	byDay := map[string][]statsEntry{}
	for i, k := range keys {
		if e, day, ok := splitStatsKey(k); ok {
			byDay[day] = append(byDay[day], statsEntry{e, totals[i]})
		}
	}
	for day, es := range byDay {
		d, err := p.day(n, day)
		if err != nil {
			n.log.Warn("cluster: reading the statistics of a day; not published", "day", day, "err", err)
			continue
		}
		var shards [statsShards][]statsEntry
		var ns []statsEntry
		for _, e := range es {
			if stats.NamespaceEntry(e.key) {
				ns = append(ns, e)
				continue
			}
			s := statsShard(e.key)
			shards[s] = append(shards[s], e)
		}
		if len(ns) > 0 {
			d.ns, d.nsDirty = mergeShard(d.ns, sortEntries(ns)), true
		}
		for s, upd := range shards {
			if len(upd) == 0 {
				continue
			}
			upd = sortEntries(upd)
			d.delta[s] = mergeShard(d.delta[s], upd)
			// A base waiting to be published takes the delta in: its
			// publication deletes the delta key. Otherwise the delta is
			// folded once the deltas written since the base would, with
			// this one, outweigh the base: the bytes written stay within
			// twice the least that folding at any one size would write.
			if d.state[s] == shardBase || d.spent[s]+len(d.delta[s]) > len(d.base[s]) {
				d.fold(s)
			} else {
				d.state[s] = shardDelta
				d.spent[s] += len(d.delta[s])
			}
		}
	}
	p.publish(n)
	p.trim()
}

// fold merges shard s's delta into its base.
func (d *statsDay) fold(s int) {
	if d.delta[s] == nil {
		return
	}
	var upd []statsEntry
	decodeShard(d.delta[s], func(k []byte, t uint64) bool {
		upd = append(upd, statsEntry{k, t})
		return true
	})
	d.base[s], d.delta[s], d.state[s], d.spent[s] = mergeShard(d.base[s], upd), nil, shardBase, 0
}

// day returns the shards of day, read from the node's stats bucket if
// earlier flushes may have written the day's keys unseen.
func (p *statsPub) day(n *Node, day string) (*statsDay, error) {
	if d := p.days[day]; d != nil {
		return d, nil
	}
	if p.days == nil {
		p.days = map[string]*statsDay{}
	}
	d := &statsDay{}
	if day <= p.start || day <= p.floor {
		var shards [statsShards][]statsEntry
		var ns []statsEntry
		err := n.cfg.DB.View(func(tx *store.Tx) error {
			return tx.Bolt().Bucket(store.BucketStats).ForEach(func(k, v []byte) error {
				if e, kd, ok := splitStatsKey(k); ok && len(v) == 8 && kd == day {
					if stats.NamespaceEntry(e) {
						ns = append(ns, statsEntry{bytes.Clone(e), binary.BigEndian.Uint64(v)})
						return nil
					}
					s := statsShard(e)
					shards[s] = append(shards[s], statsEntry{bytes.Clone(e), binary.BigEndian.Uint64(v)})
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		// Every shard read is published again: an earlier process may have
		// written totals it could not publish.
		for s, es := range shards {
			if len(es) > 0 {
				d.base[s], d.state[s] = mergeShard(nil, sortEntries(es)), shardBase
			}
		}
		if len(ns) > 0 {
			d.ns, d.nsDirty = mergeShard(nil, sortEntries(ns)), true
		}
	}
	p.days[day] = d
	return d, nil
}

// publish puts the shards waiting to be published, in transactions of up to
// statsTxnBytes. A shard is clean once its transaction succeeded.
func (p *statsPub) publish(n *Node) {
	if n.nameTaken() {
		n.log.Warn("cluster: statistics not published: another running node holds this node's name", "name", n.cfg.NodeName)
		return
	}
	type shardRef struct {
		d *statsDay
		s int // -1: the namespace totals
	}
	var (
		ops   []clientv3.Op
		refs  []shardRef
		size  int
		first error
	)
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.WriteTimeout)
	defer cancel()
	commit := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := n.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			if first == nil {
				first = err
			}
		} else {
			for _, r := range refs {
				if r.s < 0 {
					r.d.nsDirty = false
				} else {
					r.d.state[r.s] = shardClean
				}
			}
			p.putBytes += uint64(size)
			p.puts += uint64(len(refs))
		}
		ops, refs, size = ops[:0], refs[:0], 0
	}
	for _, day := range slices.Sorted(maps.Keys(p.days)) {
		d := p.days[day]
		if d.nsDirty && len(d.ns) > statsShardMax {
			if !d.nsOver {
				d.nsOver = true
				n.log.Error("cluster: the namespace statistics of a day are too large to publish; they stay on this node", "day", day, "bytes", len(d.ns))
			}
			d.nsDirty = false
		}
		if d.nsDirty {
			if size+len(d.ns) > statsTxnBytes {
				commit()
			}
			ops = append(ops, clientv3.OpPut(statsNSKey(n.prefix, day, n.cfg.NodeName), string(d.ns)))
			refs = append(refs, shardRef{d, -1})
			size += len(d.ns)
		}
		for s := range statsShards {
			var v []byte
			switch d.state[s] {
			case shardClean:
				continue
			case shardDelta:
				v = d.delta[s]
			case shardBase:
				v = d.base[s]
			}
			if len(d.base[s]) > statsShardMax {
				if !d.over[s] {
					d.over[s] = true
					n.log.Error("cluster: a statistics shard is too large to publish; its totals stay on this node", "day", day, "shard", s, "bytes", len(d.base[s]))
				}
				d.state[s] = shardClean
				continue
			}
			if size+len(v) > statsTxnBytes {
				commit()
			}
			if d.state[s] == shardBase {
				ops = append(ops, clientv3.OpPut(statsKey(n.prefix, s, day, false, n.cfg.NodeName), string(v)),
					clientv3.OpDelete(statsKey(n.prefix, s, day, true, n.cfg.NodeName)))
			} else {
				ops = append(ops, clientv3.OpPut(statsKey(n.prefix, s, day, true, n.cfg.NodeName), string(v)))
			}
			refs = append(refs, shardRef{d, s})
			size += len(v)
		}
	}
	commit()
	if first != nil {
		n.log.Warn("cluster: publishing statistics; the next flush publishes them again", "err", unwrapCtx(first))
	}
}

// trim drops the days before the newest whose shards are all published,
// and the oldest beyond statsKeepDays. A flush that writes a dropped day
// again (one running as the day ends) reads it from the bucket.
func (p *statsPub) trim() {
	days := slices.Sorted(maps.Keys(p.days))
	for i, day := range days[:max(len(days)-1, 0)] {
		d := p.days[day]
		if i < len(days)-statsKeepDays || !d.dirty() {
			delete(p.days, day)
			p.floor = max(p.floor, day)
		}
	}
}

// StatsDays calls fn for each day from from to to (UTC, inclusive) that has
// resolutions of the identifier stored under key (namespace false) or of the
// namespace with key prefix key, summed over every node, in date order
// (stats.Config.Days). An identifier's days are read from its shard's
// keys; a namespace's from the namespace keys and, for days published
// before those existed, from its entry in its shard's keys (a node's total
// of a day is the larger). It reads etcd; when etcd does not answer it
// fails with *UnavailableError.
func (n *Node) StatsDays(ctx context.Context, namespace bool, key string, from, to time.Time, fn func(date string, count uint64)) error {
	entry := stats.StatsEntry(namespace, key)
	f, t := from.Format("20060102"), to.Format("20060102")
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	// Per day, each node's total.
	days := map[string]map[string]uint64{}
	set := func(day, node string, total uint64, larger bool) {
		m := days[day]
		if m == nil {
			m = map[string]uint64{}
			days[day] = m
		}
		if old, ok := m[node]; !larger || !ok || total > old {
			m[node] = total
		}
	}
	look := func(kv *mvccpb.KeyValue) (uint64, bool) {
		var total uint64
		var has bool
		err := decodeShard(kv.Value, func(k []byte, t uint64) bool {
			c := bytes.Compare(k, entry)
			if c == 0 {
				total, has = t, true
			}
			return c < 0
		})
		if err != nil {
			n.log.Warn("cluster: skipping a malformed statistics value", "key", string(kv.Key), "err", err)
		}
		return total, has && err == nil
	}
	// The shard: base, then delta overriding (every delta key of a day
	// follows every base key).
	shard := statsDayPrefix(n.prefix, statsShard(entry), f)
	pre := shard[:len(shard)-9] // P stats/<hh>/
	end := statsDayPrefix(n.prefix, statsShard(entry), t)
	end = end[:len(end)-1] + "0" // just after the last key of day to
	err := n.rangePages(ctx, shard, end, false, func(kv *mvccpb.KeyValue) {
		k := string(kv.Key)[len(pre):] // YYYYMMDD/b/<node>
		if len(k) < 12 || k[8] != '/' || (k[9] != 'b' && k[9] != 'd') || k[10] != '/' {
			return
		}
		if total, ok := look(kv); ok {
			set(k[:8], k[11:], total, namespace)
		}
	})
	if err == nil && namespace {
		pre = n.prefix + "stats/ns/"
		err = n.rangePages(ctx, pre+f+"/", pre+t+"0", false, func(kv *mvccpb.KeyValue) {
			k := string(kv.Key)[len(pre):] // YYYYMMDD/<node>
			if len(k) < 10 || k[8] != '/' {
				return
			}
			if total, ok := look(kv); ok {
				set(k[:8], k[9:], total, true)
			}
		})
	}
	if err != nil {
		err = &UnavailableError{Err: fmt.Errorf("reading statistics: %w", unwrapCtx(err))}
		n.countRefusal(err)
		return err
	}
	for _, day := range slices.Sorted(maps.Keys(days)) {
		var sum uint64
		for _, t := range days[day] {
			sum += t
		}
		fn(day[:4]+"-"+day[4:6]+"-"+day[6:], sum)
	}
	return nil
}

// rangePages calls fn with each key from lo up to end (exclusive), in
// order, read in pages of statsReadPage keys at one revision (with
// keysOnly, without their values).
func (n *Node) rangePages(ctx context.Context, lo, end string, keysOnly bool, fn func(kv *mvccpb.KeyValue)) error {
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(statsReadPage)}
		if keysOnly {
			opts = []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(statsListPage), clientv3.WithKeysOnly()}
		}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := n.cli.Get(ctx, lo, opts...)
		if err != nil {
			return err
		}
		rev = r.Header.Revision
		for _, kv := range r.Kvs {
			fn(kv)
		}
		if !r.More || len(r.Kvs) == 0 {
			return nil
		}
		lo = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// ExpireStats deletes this node's identifier shards of the days before from
// (UTC), and those of SeedNodeName (any node may: deletes are idempotent),
// from etcd: --stats-retention (docs/product.md §10 Statistics). Namespace
// totals are kept: a shard published before namespace keys existed holds
// its node's namespace totals too, and those are first merged into the
// node's namespace key of the day (the larger total of an entry wins, so
// running this again, or on two nodes at once, changes nothing). It lists
// the keys of each shard's expired days without their values, reads the
// values of the keys it deletes, and deletes them in transactions of at
// most statsExpireOps operations. It returns the number of keys deleted.
func (n *Node) ExpireStats(ctx context.Context, from time.Time) (deleted int, err error) {
	cut := from.UTC().Format("20060102")
	// Days held in memory before the cut-off are not published again.
	n.stats.mu.Lock()
	for day := range n.stats.days {
		if day < cut {
			delete(n.stats.days, day)
			n.stats.floor = max(n.stats.floor, day)
		}
	}
	n.stats.mu.Unlock()
	mine := func(node string) bool { return node == n.cfg.NodeName || node == SeedNodeName }
	for s := range statsShards {
		c, err := n.expireShard(ctx, s, cut, mine)
		deleted += c
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// expireShard is ExpireStats of shard s, within statsExpireTimeout.
func (n *Node) expireShard(ctx context.Context, s int, cut string, mine func(node string) bool) (deleted int, err error) {
	ctx, cancel := context.WithTimeout(ctx, statsExpireTimeout)
	defer cancel()
	first := statsDayPrefix(n.prefix, s, "00000000")
	pre := first[:len(first)-9] // P stats/<hh>/
	// By day and node, the keys to delete.
	type dayNode struct{ day, node string }
	var order []dayNode
	keys := map[dayNode][]string{}
	err = n.rangePages(ctx, pre, pre+cut, true, func(kv *mvccpb.KeyValue) {
		k := string(kv.Key)[len(pre):] // YYYYMMDD/b/<node>
		if len(k) < 12 || k[8] != '/' || (k[9] != 'b' && k[9] != 'd') || k[10] != '/' || !mine(k[11:]) {
			return
		}
		dn := dayNode{k[:8], k[11:]}
		if keys[dn] == nil {
			order = append(order, dn)
		}
		keys[dn] = append(keys[dn], string(kv.Key))
	})
	if err != nil {
		return 0, fmt.Errorf("cluster: listing expired statistics: %w", unwrapCtx(err))
	}
	var ops []clientv3.Op
	for _, dn := range order {
		if err := n.keepNamespaces(ctx, dn.day, dn.node, keys[dn]); err != nil {
			return 0, err
		}
		for _, k := range keys[dn] {
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	for len(ops) > 0 {
		m := min(len(ops), statsExpireOps)
		if _, err := n.cli.Txn(ctx).Then(ops[:m]...).Commit(); err != nil {
			return deleted, fmt.Errorf("cluster: deleting expired statistics: %w", unwrapCtx(err))
		}
		deleted += m
		ops = ops[m:]
	}
	return deleted, nil
}

// statsExpireOps is the most deletes of one ExpireStats transaction;
// statsExpireTimeout bounds its work on one shard.
const (
	statsExpireOps     = 128
	statsExpireTimeout = time.Minute
)

// keepNamespaces merges the namespace entries of keys (shards of node on
// day) into node's namespace key of day. The put holds only if that key has
// not changed since it was read; otherwise it is read again.
func (n *Node) keepNamespaces(ctx context.Context, day, node string, keys []string) error {
	var ns []statsEntry
	for _, k := range keys {
		r, err := n.cli.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("cluster: reading expired statistics: %w", unwrapCtx(err))
		}
		for _, kv := range r.Kvs {
			decodeShard(kv.Value, func(k []byte, t uint64) bool {
				if stats.NamespaceEntry(k) {
					ns = append(ns, statsEntry{bytes.Clone(k), t})
				}
				return true
			})
		}
	}
	if len(ns) == 0 {
		return nil
	}
	ns = sortEntries(ns)
	key := statsNSKey(n.prefix, day, node)
	for {
		r, err := n.cli.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("cluster: reading namespace statistics: %w", unwrapCtx(err))
		}
		var old []byte
		var rev int64
		if len(r.Kvs) > 0 {
			rev = r.Kvs[0].ModRevision
			if decodeShard(r.Kvs[0].Value, func([]byte, uint64) bool { return true }) == nil {
				old = r.Kvs[0].Value
			}
		}
		v := mergeShard(old, ns)
		if bytes.Equal(v, old) {
			return nil
		}
		tr, err := n.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, string(v))).Commit()
		if err != nil {
			return fmt.Errorf("cluster: keeping namespace statistics: %w", unwrapCtx(err))
		}
		if tr.Succeeded {
			return nil
		}
	}
}
