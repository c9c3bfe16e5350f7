package cluster

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/registry"
	"pidnode/store"
)

// ErrPrefixNotEmpty: Seed found data under the prefix already.
var ErrPrefixNotEmpty = errors.New("cluster: the etcd prefix already holds data")

// Seed limits: each transaction of a seed stays well inside the limits Dial
// checked.
const (
	seedBatchKeys  = 1000
	seedBatchBytes = 4 << 20
)

// SeedCounts is what Seed wrote.
type SeedCounts struct {
	Entries int // entries of the replicated buckets
	Stats   int // statistics totals (identifier or namespace, day)
}

// Seed loads the replicated buckets of the node's database (a single node's,
// not serving) into an empty prefix, in transactions of up to 1,000 keys,
// and publishes the database's resolution statistics as the totals of the
// node name SeedNodeName (stats.go), so that the statistics routes of every
// node go on counting them. The first transaction requires the prefix to be
// empty (ErrPrefixNotEmpty otherwise), so two seeds cannot mix; nodes should
// join only after Seed returns. New nodes then start on empty data
// directories and load a snapshot.
func (n *Node) Seed(ctx context.Context) (SeedCounts, error) {
	type kv struct{ k, v string }
	var (
		batch []kv
		bytes int
		total int
		first = true
		// The highest seeded audit sequence number, and etcd's revision
		// after the last transaction (the check below).
		maxSeq  uint64
		lastRev int64
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ops := make([]clientv3.Op, len(batch))
		for i, e := range batch {
			ops[i] = clientv3.OpPut(e.k, e.v)
		}
		txn := n.cli.Txn(ctx)
		if first {
			txn = txn.If(clientv3.Compare(clientv3.CreateRevision(n.prefix), "=", 0).WithPrefix())
		}
		resp, err := txn.Then(ops...).Commit()
		if err != nil {
			return n.txnError(ctx, err)
		}
		if !resp.Succeeded {
			return fmt.Errorf("%w: %s", ErrPrefixNotEmpty, n.prefix)
		}
		first = false
		lastRev = resp.Header.Revision
		total += len(batch)
		batch, bytes = batch[:0], 0
		return nil
	}
	err := n.cfg.DB.View(func(tx *store.Tx) error {
		for _, b := range registry.Replicated {
			c := tx.Bolt().Bucket(b).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if string(b) == string(store.BucketAudit) {
					if len(k) != 8 {
						continue // the per-record index: derived
					}
					maxSeq = max(maxSeq, binary.BigEndian.Uint64(k))
				}
				e := kv{entryKey(n.prefix, string(b), k), string(encodeValue(v))}
				if len(batch) == seedBatchKeys || bytes+len(e.k)+len(e.v) > seedBatchBytes {
					if err := flush(); err != nil {
						return err
					}
				}
				batch = append(batch, e)
				bytes += len(e.k) + len(e.v)
			}
		}
		if total+len(batch) == 0 {
			return errNothingToSeed // statistics alone are no cluster
		}
		return nil
	})
	if err != nil {
		return SeedCounts{}, err
	}
	shards, stats, err := n.seedShards()
	statsKeys := 0
	if err != nil {
		return SeedCounts{}, err
	}
	for _, sh := range shards {
		if len(sh.v) > statsShardMax {
			n.log.Error("cluster: a statistics shard is too large to publish; its totals are not seeded", "day", sh.day, "shard", sh.s, "bytes", len(sh.v))
			stats -= sh.n
			continue
		}
		k := statsNSKey(n.prefix, sh.day, SeedNodeName)
		if sh.s >= 0 {
			k = statsKey(n.prefix, sh.s, sh.day, false, SeedNodeName)
		}
		e := kv{k, string(sh.v)}
		if len(batch) == seedBatchKeys || bytes+len(e.k)+len(e.v) > seedBatchBytes {
			if err = flush(); err != nil {
				break
			}
		}
		batch = append(batch, e)
		bytes += len(e.k) + len(e.v)
		statsKeys++
	}
	if err == nil {
		err = flush()
	}
	// Entries written through the cluster are numbered from the revision
	// (keys.go): above every seeded number, as a seed's transactions hold
	// far fewer than 2^16 entries each. Checked, as the log's order rests
	// on it.
	if err == nil && maxSeq >= uint64(lastRev+1)<<16 {
		err = fmt.Errorf("cluster: the seeded audit log numbers entries up to %d, which the cluster's own entries (from %d) would not follow", maxSeq, uint64(lastRev+1)<<16)
	}
	return SeedCounts{Entries: total - statsKeys, Stats: stats}, err
}

// seedShard is one shard of one day of a seeded database's statistics, or
// (s -1) its namespace totals.
type seedShard struct {
	day string
	s   int
	v   []byte // shard encoding
	n   int    // entries
}

// seedShards reads the database's statistics into shard encodings (stats.go),
// by day and shard; stats is the number of totals. It holds them all in
// memory at once: about the size of the stats bucket.
func (n *Node) seedShards() (shards []seedShard, stats int, err error) {
	type acc struct {
		ents   []byte // entries, in the order read
		last   []byte // the last key appended
		sorted bool
		n      int
	}
	type id struct {
		day string
		s   int
	}
	m := map[id]*acc{}
	err = n.cfg.DB.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketStats).ForEach(func(k, v []byte) error {
			e, day, ok := splitStatsKey(k)
			if !ok || len(v) != 8 {
				return nil // not a count (stats/store.go)
			}
			i := id{day, -1} // namespace totals: the day's namespace key
			if e[0] != 'n' {
				i.s = statsShard(e)
			}
			a := m[i]
			if a == nil {
				a = &acc{ents: []byte{statsVersion}, sorted: true}
				m[i] = a
			}
			// The bucket's order (entry key, then day) is the entry keys'
			// order within a day, but for keys holding a 0x00 byte.
			if a.n > 0 && string(a.last) >= string(e) {
				a.sorted = false
			}
			a.ents = appendShardEntry(a.ents, e, binary.BigEndian.Uint64(v))
			a.last = append(a.last[:0], e...)
			a.n++
			stats++
			return nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	ids := slices.SortedFunc(maps.Keys(m), func(a, b id) int {
		return cmp.Or(strings.Compare(a.day, b.day), a.s-b.s)
	})
	for _, i := range ids {
		a := m[i]
		v := a.ents
		if !a.sorted {
			var es []statsEntry
			for b := a.ents[1:]; len(b) > 0; {
				l, w := binary.Uvarint(b)
				k := b[w : w+int(l)]
				t, w2 := binary.Uvarint(b[w+int(l):])
				es = append(es, statsEntry{k, t})
				b = b[w+int(l)+w2:]
			}
			es = sortEntries(es)
			a.n = len(es)
			v = mergeShard(nil, es)
		}
		shards = append(shards, seedShard{day: i.day, s: i.s, v: v, n: a.n})
	}
	return shards, stats, nil
}

var errNothingToSeed = errors.New("cluster: the database holds nothing to seed")
