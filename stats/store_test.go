package stats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/storetest"
	"pidnode/store"
)

// openTest opens a fresh store and the tests' namer (internal/storetest).
func openTest(t testing.TB) (*store.DB, *handlev.Namer) { return storetest.Open(t) }

// TestFlushStatsManyKeys: a flush of more keys than one sort run and one
// transaction (statsSortRun, statsChunk) writes every identifier's and
// namespace's count exactly, and the next flush adds to them; a key also
// counted without a counter (cache.Counter.CountOnce), which the counter
// hands over several times, is written and published once, with its total.
func TestFlushStatsManyKeys(t *testing.T) {
	counter := cache.NewCounter(0)
	db, namer := openTest(t)
	var pub map[string]uint64
	r := New(Config{DB: db, Namer: namer, Counter: counter,
		Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) },
		Published: func(keys [][]byte, totals []uint64) {
			for i, k := range keys {
				if _, ok := pub[string(k)]; ok {
					t.Errorf("%q published twice in one flush", k)
				}
				pub[string(k)] = totals[i]
			}
		}})
	const ids = 3*statsSortRun + 123
	want := map[string]uint64{}
	for round := range 3 {
		counted := map[string]bool{} // this round's keys
		for i := range ids {
			ns := [...]string{"AAA", "BBB", "CCC"}[i%3]
			k, _, err := namer.Key(namer.Full("21.12345", ns, fmt.Sprintf("ID%05d", (i*7919+round*1000)%ids)))
			if err != nil {
				t.Fatal(err)
			}
			n := 1 + (i+round)%5
			for j := range n {
				if j%2 == 1 {
					counter.CountOnce(k)
				} else {
					counter.Count(k)
				}
			}
			want[string(statsKey(false, k, "20261120"))] += uint64(n)
			want[string(statsKey(true, namer.NamespaceOf([]byte(k)), "20261120"))] += uint64(n)
			counted[string(statsKey(false, k, "20261120"))] = true
			counted[string(statsKey(true, namer.NamespaceOf([]byte(k)), "20261120"))] = true
		}
		pub = map[string]uint64{}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		err := db.View(func(tx *store.Tx) error {
			return tx.Bolt().Bucket(store.BucketStats).ForEach(func(k, v []byte) error {
				got[string(k)] = binary.BigEndian.Uint64(v)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d statistics keys, want %d", round, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("round %d: %q = %d, want %d", round, k, got[k], n)
			}
			if p, ok := pub[k]; ok && p != n {
				t.Fatalf("round %d: %q published as %d, want %d", round, k, p, n)
			}
		}
		if len(pub) != len(counted) {
			t.Fatalf("round %d: %d keys published, want %d", round, len(pub), len(counted))
		}
	}
}

// TestExpireStats: expire deletes the identifier counts of the days
// before the cut-off, across more keys than one scan and one delete batch
// (statsScanKeys, statsExpireBatch), and keeps the later days and every
// namespace count.
func TestExpireStats(t *testing.T) {
	counter := cache.NewCounter(0)
	db, namer := openTest(t)
	day := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r := New(Config{DB: db, Namer: namer, Counter: counter, Now: func() time.Time { return day }})
	const ids = statsExpireBatch/2 + 500
	keys := make([]string, ids)
	var err error
	for i := range keys {
		if keys[i], _, err = namer.Key(namer.Full("21.12345", "AAA", fmt.Sprintf("ID%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	nsKey, err := namer.NamespaceKey("21.12345", "AAA")
	if err != nil {
		t.Fatal(err)
	}
	// Days 1, 2, 3 and 5 of November; identifier i is resolved on day d
	// d+i%2 times (none on day 2 for odd i).
	dates := []int{1, 2, 3, 5}
	for _, d := range dates {
		day = time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC)
		for i, k := range keys {
			if d == 2 && i%2 == 1 {
				continue
			}
			for range d + i%2 {
				counter.Count(k)
			}
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	count := func(ns bool, key string) map[string]uint64 {
		m := map[string]uint64{}
		db.View(func(tx *store.Tx) error {
			days(tx, ns, key, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), func(d string, n uint64) { m[d] = n })
			return nil
		})
		return m
	}
	nsBefore := count(true, nsKey)
	if len(nsBefore) != len(dates) {
		t.Fatalf("namespace days before expiry: %v", nsBefore)
	}

	// Keep from November 3: days 1 and 2 go (ids + ids/2 keys: more than
	// one delete batch).
	n, err := expire(t.Context(), db, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := ids + (ids+1)/2; n != want {
		t.Errorf("deleted %d keys, want %d", n, want)
	}
	for _, i := range []int{0, 1, ids / 2, ids - 1} {
		got := count(false, keys[i])
		want := map[string]uint64{"2026-11-03": uint64(3 + i%2), "2026-11-05": uint64(5 + i%2)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("identifier %d after expiry: %v, want %v", i, got, want)
		}
	}
	if got := count(true, nsKey); fmt.Sprint(got) != fmt.Sprint(nsBefore) {
		t.Errorf("namespace days after expiry: %v, want %v", got, nsBefore)
	}
	// Again: nothing left to delete.
	if n, err := expire(t.Context(), db, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)); err != nil || n != 0 {
		t.Errorf("a second expiry deleted %d (%v), want 0", n, err)
	}
	var left int
	db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketStats).ForEach(func(k, v []byte) error {
			left++
			return nil
		})
	})
	if want := 2*ids + len(dates); left != want {
		t.Errorf("%d keys left in the bucket, want %d", left, want)
	}
}

// BenchmarkStatsExpire measures the deletion of one day of 100,000
// identifiers from a stats bucket of 1,000,000 identifier keys (100,000
// identifiers over 10 days), the daily work of a node that resolves that
// many distinct identifiers a day. ns/op is the wall time, with the rests
// between steps (statsPacer); cpu-ms/op the processor time the process
// spent meanwhile. nothing-expired is the scan alone.
func BenchmarkStatsExpire(b *testing.B) {
	db, err := store.Open(store.Config{Path: filepath.Join(b.TempDir(), "pidnode.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		b.Fatal(err)
	}
	const ids = 100000
	keys := make([][]byte, ids)
	for i := range keys {
		k, _, err := namer.Key(namer.Full("21.12345", "AAA", fmt.Sprintf("ID%07d", i)))
		if err != nil {
			b.Fatal(err)
		}
		keys[i] = []byte(k)
	}
	put := func(dates ...string) {
		for lo := 0; lo < ids; lo += 20000 {
			err := db.Update(func(tx *store.Tx) error {
				bk := tx.Bolt().Bucket(store.BucketStats)
				for _, k := range keys[lo : lo+20000] {
					for _, d := range dates {
						if err := bk.Put(statsKey(false, k, d), binary.BigEndian.AppendUint64(nil, 1)); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	var all []string
	for d := range 10 {
		all = append(all, fmt.Sprintf("202503%02d", d+1))
	}
	put(all...)
	b.Run("delete-day", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			put(all[0])
			c0 := cpuTime()
			b.StartTimer()
			n, err := expire(b.Context(), db, time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC))
			b.StopTimer()
			cpu += cpuTime() - c0
			b.StartTimer()
			if err != nil || n != ids {
				b.Fatalf("deleted %d (%v), want %d", n, err, ids)
			}
		}
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	// The scan alone: a run that finds nothing to delete.
	b.Run("nothing-expired", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			if n, err := expire(b.Context(), db, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil || n != 0 {
				b.Fatalf("deleted %d (%v), want 0", n, err)
			}
		}
		b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}

// cpuTime is the processor time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStatsFlush measures a flush of 30,000 identifiers' counts (about
// the distinct identifiers of make bench's Zipf stream in one interval at
// 20,000 resolutions/s) into a stats bucket that already holds 200,000
// identifiers' counts for the day. ns/op is the wall time, rests between
// steps included; cpu-ms/op the processor time; max-step-µs the longest step
// between two rests, which on a node pinned to one CPU is how long the flush
// can keep the resolvers waiting (see statsChunk). The store does not fsync,
// so a step's length is its processor time on an idle machine.
//
//	go test ./stats -run '^$' -bench StatsFlush -benchtime 5x -count 3
func BenchmarkStatsFlush(b *testing.B) {
	db, namer := openTest(b)
	day := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	counter := cache.NewCounter(0)
	r := New(Config{DB: db, Namer: namer, Counter: counter, Now: func() time.Time { return day }})
	const ids, flushed = 200000, 30000
	keys := make([]string, ids)
	var err error
	for i := range keys {
		if keys[i], _, err = namer.Key(namer.Full("21.12345", [...]string{"AAA", "BBB", "CCC"}[i%3], fmt.Sprintf("ID%07d", i))); err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range keys {
		counter.Count(k)
	}
	if err := r.Flush(); err != nil {
		b.Fatal(err)
	}
	var longest time.Duration
	statsStepSeen = func(d time.Duration) { longest = max(longest, d) }
	defer func() { statsStepSeen = nil }()
	var cpu time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		for i := range flushed {
			counter.Count(keys[(n*flushed+i)*7919%ids])
		}
		n++
		c0 := cpuTime()
		b.StartTimer()
		if err := r.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - c0
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(longest.Microseconds()), "max-step-µs")
}

// TestStatsKeyRoundTrip checks the statistics key format's encoder against
// its decoder, which cluster mode uses to publish the counts.
func TestStatsKeyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name      string
		namespace bool
		key       string
	}{
		{"identifier", false, "20.1000/abc"},
		{"namespace", true, "20.1000/ns-"},
		{"key with NUL", false, "a\x00b"},
		{"empty", false, ""},
	} {
		entry := StatsEntry(c.namespace, c.key)
		k := statsKey(c.namespace, c.key, "20261120")
		e, day, ok := SplitStatsKey(k)
		if !ok || !bytes.Equal(e, entry) || string(day) != "20261120" {
			t.Errorf("%s: SplitStatsKey(%q) = %q, %q, %v, want %q, 20261120, true", c.name, k, e, day, ok, entry)
		}
		if NamespaceEntry(e) != c.namespace {
			t.Errorf("%s: NamespaceEntry(%q) = %v, want %v", c.name, e, !c.namespace, c.namespace)
		}
	}
	for _, k := range []string{"", "i20261120", "i1\x002026112", "i1\x01" + "20261120"} {
		if e, day, ok := SplitStatsKey([]byte(k)); ok {
			t.Errorf("SplitStatsKey(%q) = %q, %q, true, want false", k, e, day)
		}
	}
}
