package cache

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"pidnode/handlev"
)

// newBenchCache returns a cache holding n found entries and their keys.
func newBenchCache(b *testing.B, n, shards int) (*Cache, [][]byte) {
	b.Helper()
	src := newSource()
	keys := make([][]byte, n)
	for i := range keys {
		k := fmt.Sprintf("21.T11148/SVC/%04X/%04X", i>>16, i&0xFFFF)
		src.put(k, record(k, "https://example.org/items/"+k, handlev.StatusRegistered))
		keys[i] = []byte(k)
	}
	c := mustNew(b, Config{Source: src, Entries: 2 * n, Shards: shards})
	for _, k := range keys {
		if _, err := c.Get(k); err != nil {
			b.Fatal(err)
		}
	}
	return c, keys
}

func BenchmarkGetHit(b *testing.B) {
	c, keys := newBenchCache(b, 10000, DefaultShards)
	benchGets(b, c, keys)
}

// BenchmarkGetHitParallel is the figure that justifies sharding: compare the
// shards=1 case (one exclusive LRU lock) with the default.
func BenchmarkGetHitParallel(b *testing.B) {
	for _, shards := range []int{1, 16, DefaultShards, 256} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			c, keys := newBenchCache(b, 10000, shards)
			var seed atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(seed.Add(1), 0))
				i := r.IntN(len(keys))
				for pb.Next() {
					if _, err := c.Get(keys[i%len(keys)]); err != nil {
						b.Error(err)
						return
					}
					i += 7
				}
			})
			if c.Stats().Misses != uint64(len(keys)) {
				b.Fatalf("Stats() = %+v: misses during the benchmark", c.Stats())
			}
		})
	}
}

// BenchmarkGetHitParallelHotKey: every goroutine reads one handle (one shard's lock).
func BenchmarkGetHitParallelHotKey(b *testing.B) {
	c, keys := newBenchCache(b, 1, DefaultShards)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(keys[0]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// constSource answers every key with the same record: a Source that costs next
// to nothing, so BenchmarkGetMiss measures the cache's own miss path.
type constSource struct{ rec handlev.Record }

func (s constSource) Load(string) (handlev.Record, bool, error) { return s.rec, true, nil }

// BenchmarkGetMiss: nearly every Get misses (keys cycle through 64 times the
// capacity), so each one coalesces, loads and builds an entry; "admit-all"
// then adds it and evicts the oldest, "doorkeeper" (the default admission)
// adds only the few its filter takes for a second miss.
func BenchmarkGetMiss(b *testing.B) {
	const entries = 1000
	keys := make([][]byte, 64*entries)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "21.T11148/SVC/%04X/%04X", i>>16, i&0xFFFF)
	}
	src := constSource{record("21.T11148/SVC/0000/0000", "https://example.org/items/0", handlev.StatusRegistered)}
	for _, admitAll := range []bool{true, false} {
		name := "doorkeeper"
		if admitAll {
			name = "admit-all"
		}
		b.Run(name, func(b *testing.B) {
			c := mustNew(b, Config{Source: src, Entries: entries, AdmitAll: admitAll})
			benchGets(b, c, keys)
			// The entries kept hit once per cycle through the keys.
			if st := c.Stats(); st.Hits > (st.Hits+st.Misses)/32 {
				b.Fatalf("Stats() = %+v: more than 1/32 of Gets hit", st)
			}
		})
	}
}

// benchGets Gets keys in turn, one per iteration, reporting allocations.
func benchGets(b *testing.B, c *Cache, keys [][]byte) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := c.Get(keys[i%len(keys)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
