package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/stats"
	"pidnode/store"
)

// statsNode is a cluster node that publishes what its registry's flushes
// write, as cmd/pidnode wires them, with the day of the flushes in *day.
type statsNode struct {
	*Node
	db    *store.DB
	svc   *stats.Service
	count *cache.Counter
}

func newStatsNode(t testing.TB, c *etcdtest.Cluster, name, path string, day *time.Time) *statsNode {
	t.Helper()
	db, creg := openTestDBAt(t, path)
	n, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: name, DB: db, Registry: creg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	count := cache.NewCounter(64 << 20)
	st := stats.New(stats.Config{DB: db, Namer: namer, Counter: count, Published: n.PublishStats, Now: func() time.Time { return *day }})
	return &statsNode{Node: n, db: db, svc: st, count: count}
}

// resolve counts times resolutions of each id, then flushes.
func (n *statsNode) resolve(t testing.TB, times int, ids ...string) {
	t.Helper()
	for _, id := range ids {
		for range times {
			n.count.Count(fk(id))
		}
	}
	if err := n.svc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// days reads the cluster-wide days of an identifier (or, with namespace, of
// the test namespace) through n.
func (n *statsNode) days(t testing.TB, namespace bool, id string, from, to time.Time) map[string]uint64 {
	t.Helper()
	key := fk(id)
	if namespace {
		key = strings.TrimSuffix(fk("X"), "X")
	}
	m := map[string]uint64{}
	var last string
	err := n.StatsDays(t.Context(), namespace, key, from, to, func(d string, c uint64) {
		if d <= last {
			t.Errorf("day %s after %s", d, last)
		}
		last = d
		m[d] = c
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// statsEvents returns the puts and deletes under P stats/ from revision
// after+1 to etcd's current revision, by key.
func statsEvents(t *testing.T, cli *clientv3.Client, after int64) (puts, dels []string) {
	t.Helper()
	cur, err := cli.Get(t.Context(), "probe-revision")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Header.Revision == after {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for w := range cli.Watch(ctx, DefaultPrefix+"stats/", clientv3.WithPrefix(), clientv3.WithRev(after+1)) {
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
		done := false
		for _, e := range w.Events {
			if e.Type == clientv3.EventTypePut {
				puts = append(puts, string(e.Kv.Key))
			} else {
				dels = append(dels, string(e.Kv.Key))
			}
			done = done || e.Kv.ModRevision >= cur.Header.Revision
		}
		if done {
			return puts, dels
		}
	}
	t.Fatal("the watch ended before the current revision")
	return nil, nil
}

func revision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	r, err := cli.Get(t.Context(), "probe-revision")
	if err != nil {
		t.Fatal(err)
	}
	return r.Header.Revision
}

// The statistics routes of any node sum every node's totals, by day; a
// flush publishes only the shards of the keys it wrote; a node started
// again publishes the totals its database holds, including ones an earlier
// process wrote but did not publish.
func TestStatsAcrossNodes(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoints()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	day1, day2 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC)
	dayA, dayB := day1, day1
	pathA := filepath.Join(t.TempDir(), "a.db")
	a := newStatsNode(t, c, "a", pathA, &dayA)
	b := newStatsNode(t, c, "b", filepath.Join(t.TempDir(), "b.db"), &dayB)

	// Many identifiers on a, so that every shard has a base large enough
	// for the later flushes to publish deltas.
	many := make([]string, 20000)
	for i := range many {
		many[i] = fmt.Sprintf("M%d", i)
	}
	a.resolve(t, 1, many...)
	a.resolve(t, 3, "X")
	a.resolve(t, 1, "Y")
	b.resolve(t, 2, "X")
	for _, n := range []*statsNode{a, b} {
		if got := n.days(t, false, "X", day1, day2); len(got) != 1 || got["2025-03-01"] != 5 {
			t.Errorf("X through %s: %v, want 3 on a and 2 on b", n.cfg.NodeName, got)
		}
		if got := n.days(t, false, "Y", day1, day2); len(got) != 1 || got["2025-03-01"] != 1 {
			t.Errorf("Y through %s: %v", n.cfg.NodeName, got)
		}
		if got := n.days(t, false, "M19999", day1, day1); got["2025-03-01"] != 1 {
			t.Errorf("M19999 through %s: %v", n.cfg.NodeName, got)
		}
		if got := n.days(t, true, "", day1, day2); got["2025-03-01"] != uint64(len(many))+6 {
			t.Errorf("namespace through %s: %v", n.cfg.NodeName, got)
		}
		if got := n.days(t, false, "never", day1, day2); len(got) != 0 {
			t.Errorf("an identifier never resolved: %v", got)
		}
	}

	// A flush of three identifiers touches their shards alone (and a's
	// namespace key of the day): a's delta of each, or its base and delta
	// when folded.
	touched := []string{"M1", "M2", "X"}
	want := map[string]bool{}
	for _, id := range touched {
		want[statsDayPrefix(DefaultPrefix, statsShard([]byte("i"+fk(id))), "20250301")+"b/a"] = true
	}
	want[statsNSKey(DefaultPrefix, "20250301", "a")] = true
	before := revision(t, cli)
	a.resolve(t, 1, touched...)
	puts, dels := statsEvents(t, cli, before)
	if len(puts) == 0 || len(puts) > len(want) {
		t.Errorf("a flush of %d identifiers put %d keys: %v", len(touched), len(puts), puts)
	}
	deltas, seen := 0, map[string]bool{}
	for _, k := range slices.Concat(puts, dels) {
		if strings.HasSuffix(k, "/d/a") {
			deltas++
			k = strings.TrimSuffix(k, "/d/a") + "/b/a"
		}
		if !want[k] {
			t.Errorf("a flush of %v wrote %s, a shard of none of them", touched, k)
		}
		seen[k] = true
	}
	if len(seen) != len(want) {
		t.Errorf("a flush of %v wrote shards %v, want %v", touched, seen, want)
	}
	if deltas == 0 {
		t.Errorf("a flush of %d identifiers into full shards wrote no delta: puts %v, deletes %v", len(touched), puts, dels)
	}
	if got := b.days(t, false, "X", day1, day1); got["2025-03-01"] != 6 {
		t.Errorf("X after a's second flush: %v", got)
	}
	if got := b.days(t, false, "M1", day1, day1); got["2025-03-01"] != 2 {
		t.Errorf("M1 after a's second flush: %v", got)
	}

	// Enough flushes into one shard to fold its delta into the base: the
	// totals stay right through it.
	var same []string
	sx := statsShard([]byte("i" + fk("X")))
	for _, id := range many {
		if statsShard([]byte("i"+fk(id))) == sx {
			same = append(same, id)
		}
	}
	for _, id := range same {
		a.resolve(t, 1, id)
	}
	if got := b.days(t, false, same[0], day1, day1); got["2025-03-01"] != 2 {
		t.Errorf("%s after its shard was folded: %v", same[0], got)
	}
	if got := b.days(t, false, "X", day1, day1); got["2025-03-01"] != 6 {
		t.Errorf("X after its shard was folded: %v", got)
	}

	// The next day: days apart, the earlier day's totals kept.
	dayA = day2
	a.resolve(t, 4, "X")
	if got := b.days(t, false, "X", day1, day2); len(got) != 2 || got["2025-03-01"] != 6 || got["2025-03-02"] != 4 {
		t.Errorf("X over two days: %v", got)
	}
	if got := b.days(t, false, "X", day2, day2); len(got) != 1 || got["2025-03-02"] != 4 {
		t.Errorf("X on the second day: %v", got)
	}

	// A flush of the earlier day after a's shards of it were dropped from
	// memory (one running as the day ends) keeps the day's other totals.
	dayA = day1
	a.resolve(t, 1, "X")
	dayA = day2
	if got := b.days(t, false, "X", day1, day1); got["2025-03-01"] != 7 {
		t.Errorf("X after a late flush of the first day: %v", got)
	}
	if got := b.days(t, false, same[0], day1, day1); got["2025-03-01"] != 2 {
		t.Errorf("%s, in X's shard, after a late flush of the first day: %v", same[0], got)
	}

	// a stops; its database holds a total it did not publish (as when etcd
	// did not take a flush's publication). Started again, a publishes the
	// day's totals its database holds at its first flush.
	a.Close()
	err = a.db.Update(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketStats).Put([]byte("i"+fk("Z")+"\x0020250302"), binary.BigEndian.AppendUint64(nil, 7))
	})
	if err != nil {
		t.Fatal(err)
	}
	a.db.Close()
	a = newStatsNode(t, c, "a", pathA, &dayA)
	a.resolve(t, 1, "Y")
	if got := b.days(t, false, "Z", day1, day2); got["2025-03-02"] != 7 {
		t.Errorf("Z, written by a but not published before it restarted: %v", got)
	}
	if got := b.days(t, false, "X", day1, day2); got["2025-03-01"] != 7 || got["2025-03-02"] != 4 {
		t.Errorf("X after a restarted: %v", got)
	}
	if got := b.days(t, false, "Y", day1, day2); got["2025-03-01"] != 1 || got["2025-03-02"] != 1 {
		t.Errorf("Y after a restarted: %v", got)
	}

	// Values of another form under P stats/ are not read.
	if _, err := cli.Put(t.Context(), DefaultPrefix+"stats/i"+fk("X")+"\x0020250301\x00old", string(binary.BigEndian.AppendUint64(nil, 100))); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), statsKey(DefaultPrefix, sx, "20250301", false, "junk"), "\x01\xff"); err != nil {
		t.Fatal(err)
	}
	if got := b.days(t, false, "X", day1, day1); got["2025-03-01"] != 7 {
		t.Errorf("X beside keys of another form: %v", got)
	}
}

// ExpireStats deletes a node's own identifier shards (and the seed's) of
// the days before the cut-off and keeps every namespace total, also those
// held in shards published before namespace keys existed; the routes'
// sums stay right.
func TestStatsExpire(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoints()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	date := func(d int) time.Time { return time.Date(2025, 3, d, 12, 0, 0, 0, time.UTC) }
	dayA, dayB := date(1), date(1)
	a := newStatsNode(t, c, "a", filepath.Join(t.TempDir(), "a.db"), &dayA)
	b := newStatsNode(t, c, "b", filepath.Join(t.TempDir(), "b.db"), &dayB)
	for _, d := range []int{1, 2, 10} {
		dayA, dayB = date(d), date(d)
		a.resolve(t, 1, "X", "Y")
		if d != 2 {
			b.resolve(t, 2, "X")
		}
	}
	// February 28, as published before namespace keys: a's and the seed's
	// shards hold their namespace totals; a also has a namespace key of the
	// day (as a node publishes the day again after an upgrade).
	nsEntry := []byte("n" + strings.TrimSuffix(fk("X"), "X"))
	xEntry := []byte("i" + fk("X"))
	put := func(k string, es ...statsEntry) {
		t.Helper()
		if _, err := cli.Put(t.Context(), k, string(mergeShard(nil, sortEntries(es)))); err != nil {
			t.Fatal(err)
		}
	}
	nsShard, xShard := statsShard(nsEntry), statsShard(xEntry)
	if nsShard == xShard {
		t.Fatal("the test wants the namespace and X in different shards")
	}
	put(statsKey(DefaultPrefix, nsShard, "20250228", false, "a"), statsEntry{nsEntry, 50})
	put(statsKey(DefaultPrefix, xShard, "20250228", false, "a"), statsEntry{xEntry, 5})
	put(statsKey(DefaultPrefix, xShard, "20250228", true, "a"), statsEntry{xEntry, 6})
	put(statsNSKey(DefaultPrefix, "20250228", "a"), statsEntry{nsEntry, 60})
	put(statsKey(DefaultPrefix, nsShard, "20250228", false, SeedNodeName), statsEntry{nsEntry, 70})
	put(statsKey(DefaultPrefix, xShard, "20250228", false, SeedNodeName), statsEntry{xEntry, 7})
	put(statsKey(DefaultPrefix, nsShard, "20250228", false, "c"), statsEntry{nsEntry, 1})

	from, to := date(27), date(10)
	from = from.AddDate(0, -1, 0)
	check := func(stage string, x, ns map[string]uint64) {
		t.Helper()
		for _, n := range []*statsNode{a, b} {
			if got := n.days(t, false, "X", from, to); fmt.Sprint(got) != fmt.Sprint(x) {
				t.Errorf("%s: X through %s: %v, want %v", stage, n.cfg.NodeName, got, x)
			}
			if got := n.days(t, true, "", from, to); fmt.Sprint(got) != fmt.Sprint(ns) {
				t.Errorf("%s: namespace through %s: %v, want %v", stage, n.cfg.NodeName, got, ns)
			}
		}
	}
	ns := map[string]uint64{"2025-02-28": 60 + 70 + 1, "2025-03-01": 4, "2025-03-02": 2, "2025-03-10": 4}
	check("before", map[string]uint64{"2025-02-28": 6 + 7, "2025-03-01": 3, "2025-03-02": 1, "2025-03-10": 3}, ns)

	// a keeps from March 2: its own and the seed's shards of February 28
	// and March 1 go; b's and c's stay.
	n, err := a.ExpireStats(t.Context(), date(2))
	if err != nil {
		t.Fatal(err)
	}
	// a's three keys of February 28 and one base per shard of X and Y on
	// March 1; the seed's two.
	wantDel := 3 + 2 + len(map[int]bool{xShard: true, statsShard([]byte("i" + fk("Y"))): true})
	if n != wantDel {
		t.Errorf("a deleted %d keys, want %d", n, wantDel)
	}
	check("a expired", map[string]uint64{"2025-03-01": 2, "2025-03-02": 1, "2025-03-10": 3}, ns)
	r, err := cli.Get(t.Context(), DefaultPrefix+"stats/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, kv := range r.Kvs {
		k := string(kv.Key)
		left = append(left, k)
		if strings.HasPrefix(k, DefaultPrefix+"stats/ns/") {
			continue
		}
		day, node := k[len(DefaultPrefix+"stats/hh/"):][:8], k[strings.LastIndexByte(k, '/')+1:]
		if day < "20250302" && (node == "a" || node == SeedNodeName) {
			t.Errorf("%s left after a's expiry", k)
		}
	}
	for _, k := range []string{statsNSKey(DefaultPrefix, "20250228", SeedNodeName), statsKey(DefaultPrefix, nsShard, "20250228", false, "c"), statsNSKey(DefaultPrefix, "20250301", "b")} {
		if !slices.Contains(left, k) {
			t.Errorf("%s not kept: %v", k, left)
		}
	}

	// Again on a, then on b: b's March 1 goes; the namespace stays.
	if n, err := a.ExpireStats(t.Context(), date(2)); err != nil || n != 0 {
		t.Errorf("a's second expiry deleted %d keys (%v), want 0", n, err)
	}
	if _, err := b.ExpireStats(t.Context(), date(2)); err != nil {
		t.Fatal(err)
	}
	check("b expired", map[string]uint64{"2025-03-02": 1, "2025-03-10": 3}, ns)

	// a flushes on after its expiry: today's totals are published as before.
	a.resolve(t, 1, "X")
	ns["2025-03-10"]++
	check("a flushed", map[string]uint64{"2025-03-02": 1, "2025-03-10": 4}, ns)
}

func TestShardEncoding(t *testing.T) {
	es := []statsEntry{{[]byte("ib"), 2}, {[]byte("ia"), 1}, {[]byte("ib"), 5}, {[]byte(""), 0}, {[]byte("nz"), 1 << 60}}
	v := mergeShard(nil, sortEntries(es))
	var got []statsEntry
	if err := decodeShard(v, func(k []byte, n uint64) bool {
		got = append(got, statsEntry{bytes.Clone(k), n})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []statsEntry{{[]byte(""), 0}, {[]byte("ia"), 1}, {[]byte("ib"), 5}, {[]byte("nz"), 1 << 60}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	v2 := mergeShard(v, []statsEntry{{[]byte("ia"), 3}, {[]byte("ic"), 1}})
	got = got[:0]
	decodeShard(v2, func(k []byte, n uint64) bool { got = append(got, statsEntry{bytes.Clone(k), n}); return true })
	want = []statsEntry{{[]byte(""), 0}, {[]byte("ia"), 3}, {[]byte("ib"), 5}, {[]byte("ic"), 1}, {[]byte("nz"), 1 << 60}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	for _, bad := range []string{"", "\x02", "\x01\x05ab", "\x01\x02ib\x01\x02ia\x01", "\x01\x02ia\x01\x02ia\x01", "\x01\x01a", "\x01\x01a\xff"} {
		if err := decodeShard([]byte(bad), func([]byte, uint64) bool { return true }); err == nil {
			t.Errorf("decodeShard(%q) = nil, want an error", bad)
		}
	}
}

// FuzzDecodeShard: values come from etcd; decoding any bytes returns an
// error or entries that encode back to a value decoding to the same.
func FuzzDecodeShard(f *testing.F) {
	f.Add(mergeShard(nil, []statsEntry{{[]byte("i21.12345/T-A"), 3}, {[]byte("n21.12345/T-"), 9}}))
	f.Add([]byte{statsVersion})
	f.Add([]byte("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var es []statsEntry
		if err := decodeShard(b, func(k []byte, n uint64) bool {
			es = append(es, statsEntry{bytes.Clone(k), n})
			return true
		}); err != nil {
			return
		}
		v := mergeShard(nil, es)
		var again []statsEntry
		if err := decodeShard(v, func(k []byte, n uint64) bool {
			again = append(again, statsEntry{bytes.Clone(k), n})
			return true
		}); err != nil {
			t.Fatalf("re-encoded value: %v", err)
		}
		if fmt.Sprint(es) != fmt.Sprint(again) {
			t.Fatalf("round trip: %v, then %v", es, again)
		}
	})
}

// BenchmarkStatsPublish measures the publications of a node that resolved
// 100,000 distinct identifiers in a day (docs/product.md §10): the first
// flush of the day (every shard's base); later flushes of k identifiers
// each into a day of n (deltas, and the bases they fold: run it with
// -benchtime=300x or more, past a few folds, for the steady state); and
// the scan of a stats bucket of 1,000,000 keys that a node started again
// makes once.
func BenchmarkStatsPublish(b *testing.B) {
	c := etcdtest.Start(b, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	keysOf := func(day string, ids, from, n int) ([][]byte, []uint64) {
		keys, totals := make([][]byte, 0, n+1), make([]uint64, 0, n+1)
		for i := from; i < from+n; i++ {
			keys = append(keys, []byte("i"+fk(fmt.Sprintf("ID%07d", i%ids))+"\x00"+day))
			totals = append(totals, uint64(1+i/ids))
		}
		keys = append(keys, []byte("n"+strings.TrimSuffix(fk("X"), "X")+"\x00"+day))
		totals = append(totals, uint64(from+n))
		return keys, totals
	}
	n := newStatsNode(b, c, "a", filepath.Join(b.TempDir(), "a.db"), &day)
	report := func(b *testing.B, puts, bytes uint64) {
		b.ReportMetric(float64(puts)/float64(b.N), "values/op")
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
	}
	d := 0
	b.Run("first-100k", func(b *testing.B) {
		p0, b0 := n.stats.puts, n.stats.putBytes
		for b.Loop() {
			d++
			b.StopTimer()
			keys, totals := keysOf(fmt.Sprintf("2024%04d", d), 100000, 0, 100000)
			b.StartTimer()
			n.PublishStats(keys, totals)
		}
		report(b, n.stats.puts-p0, n.stats.putBytes-b0)
	})
	for _, c := range []struct{ n, k int }{{100000, 1000}, {100000, 100}, {1000000, 116}} {
		b.Run(fmt.Sprintf("n=%d/k=%d", c.n, c.k), func(b *testing.B) {
			d++
			day := fmt.Sprintf("2024%04d", d)
			n.PublishStats(keysOf(day, c.n, 0, c.n))
			from := c.n
			p0, b0 := n.stats.puts, n.stats.putBytes
			for b.Loop() {
				b.StopTimer()
				keys, totals := keysOf(day, c.n, from, c.k)
				b.StartTimer()
				n.PublishStats(keys, totals)
				from += c.k
			}
			report(b, n.stats.puts-p0, n.stats.putBytes-b0)
		})
	}
	b.Run("scan-1M", func(b *testing.B) {
		err := n.db.Update(func(tx *store.Tx) error {
			bk := tx.Bolt().Bucket(store.BucketStats)
			for i := range 100000 {
				k := "i" + fk(fmt.Sprintf("ID%07d", i)) + "\x00"
				for d := range 10 {
					if err := bk.Put([]byte(k+fmt.Sprintf("202503%02d", d+1)), binary.BigEndian.AppendUint64(nil, 1)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		var p statsPub
		p.start = "20250310"
		for b.Loop() {
			clear(p.days)
			if _, err := p.day(n.Node, "20250305"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStatsExpire measures a node's daily expiry in etcd: one day of
// 100,000 identifiers published (every shard's base), deleted by
// ExpireStats among the shards of 3 further days that stay.
func BenchmarkStatsExpire(b *testing.B) {
	c := etcdtest.Start(b, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	n := newStatsNode(b, c, "a", filepath.Join(b.TempDir(), "a.db"), &day)
	publish := func(day string) {
		keys, totals := make([][]byte, 0, 100001), make([]uint64, 0, 100001)
		for i := range 100000 {
			keys = append(keys, []byte("i"+fk(fmt.Sprintf("ID%07d", i))+"\x00"+day))
			totals = append(totals, 1)
		}
		keys = append(keys, []byte("n"+strings.TrimSuffix(fk("X"), "X")+"\x00"+day))
		totals = append(totals, 100000)
		n.PublishStats(keys, totals)
	}
	for _, d := range []string{"20250302", "20250303", "20250304"} {
		publish(d)
	}
	deleted := 0
	for b.Loop() {
		b.StopTimer()
		publish("20250301")
		b.StartTimer()
		c, err := n.ExpireStats(b.Context(), time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC))
		if err != nil {
			b.Fatal(err)
		}
		deleted += c
	}
	b.ReportMetric(float64(deleted)/float64(b.N), "keys/op")
}
