package cache

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"pidnode/internal/unsafeconv"
)

func drainAll(c *Counter) map[string]uint64 {
	got := map[string]uint64{}
	c.Drain(func(k string, n uint64) { got[k] += n })
	return got
}

func TestCounter(t *testing.T) {
	c := NewCounter(0)
	buf := []byte("21.12345/SVC/NS/A")
	c.Count(string(buf))
	buf[len(buf)-1] = 'B' // Count must not have kept the caller's bytes
	c.Count(string(buf))
	c.Count("21.12345/SVC/NS/A")
	got := drainAll(c)
	if len(got) != 2 || got["21.12345/SVC/NS/A"] != 2 || got["21.12345/SVC/NS/B"] != 1 {
		t.Fatalf("first drain = %v", got)
	}
	if got := drainAll(c); len(got) != 0 {
		t.Errorf("second drain = %v, want nothing", got)
	}
	if n := c.Keys(); n != 2 {
		t.Errorf("keys idle for one period: %d held, want 2 (retired)", n)
	}
	c.Count("21.12345/SVC/NS/A") // a retired key counts again
	if got := drainAll(c); len(got) != 1 || got["21.12345/SVC/NS/A"] != 1 {
		t.Errorf("third drain = %v", got)
	}
	drainAll(c)
	drainAll(c)
	if n := c.Keys(); n != 0 {
		t.Errorf("idle keys kept: %d", n)
	}
	var nilC *Counter
	nilC.Count("x") // a nil counter is off
	nilC.Drain(func(string, uint64) { t.Error("nil counter drained something") })
}

// TestCounterBoundedWithoutFlusher: with no flusher attached, a full table
// drops events instead of waiting, stays within its bound in bytes, and
// every event is either drained or counted as dropped.
func TestCounterBoundedWithoutFlusher(t *testing.T) {
	const limit = 16 << 10
	c := NewCounter(limit)
	for i := range 10000 {
		if i%2 == 0 {
			c.Count(fmt.Sprint("21.12345/SVC/NS/K", i))
		} else {
			c.CountOnce(fmt.Sprint("21.12345/SVC/NS/K", i))
		}
		if b := c.Usage().Bytes; b > limit {
			t.Fatalf("after %d keys the table holds %d bytes, bound %d", i+1, b, limit)
		}
	}
	var total uint64
	for _, n := range drainAll(c) {
		total += n
	}
	if c.Dropped() == 0 {
		t.Errorf("10000 keys in a %d-byte table: nothing dropped", limit)
	}
	if total+c.Dropped() != 10000 {
		t.Errorf("counted %d + dropped %d, want 10000", total, c.Dropped())
	}
}

// TestCounterFlushedEarly: with a flusher attached, a table far smaller than
// the keys counted (with counters and without) stays within its bound while
// every event reaches the flusher: the table asks for early drains and a
// full table waits for one instead of dropping.
func TestCounterFlushedEarly(t *testing.T) {
	const limit = 64 << 10
	c := NewCounter(limit)
	early, detach := c.AttachFlusher()
	var (
		mu      sync.Mutex
		drained = map[string]uint64{}
		drains  int
	)
	drain := func() {
		mu.Lock()
		defer mu.Unlock()
		drains++
		for i := range 4 {
			c.DrainPart(i, 4, func(k string, n uint64) { drained[k] += n })
		}
	}
	stop := make(chan struct{})
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		for {
			select {
			case <-stop:
				return
			case <-early:
				drain()
			}
		}
	}()
	const workers, per, keys = 8, 6000, 20000
	var over atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				// Keys of different lengths, most of them new, some repeated.
				k := (i*workers + w) * 7919 % keys
				if w%2 == 0 {
					c.Count(fmt.Sprintf("21.12345/SVC/NS/%0*d", 4+k%40, k))
				} else {
					c.CountOnce(fmt.Sprintf("21.12345/SVC/NS/%0*d", 4+k%40, k))
				}
				if b := c.Usage().Bytes; b > limit {
					over.Store(b)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-flusherDone
	detach()
	drain()
	if b := over.Load(); b != 0 {
		t.Errorf("the table held %d bytes, bound %d", b, limit)
	}
	var sum uint64
	for _, n := range drained {
		sum += n
	}
	if sum != workers*per || c.Dropped() != 0 {
		t.Errorf("drained %d events, dropped %d, want %d and 0", sum, c.Dropped(), workers*per)
	}
	if u := c.Usage(); u.EarlyAsked == 0 || drains < 2 {
		t.Errorf("%d drains, %d early flushes asked: the table never asked to be flushed", drains, u.EarlyAsked)
	}
	if u := c.Usage(); u.Bytes != 0 || c.Keys() != 0 {
		t.Errorf("after the last drain the table holds %d bytes, %d keys", u.Bytes, c.Keys())
	}
}

// TestCounterAccountingMatchesHeap: what the table is charged (Usage.Bytes)
// is at least the heap it grew by, and not far above it, for keys of
// several lengths held in the read-only, new and retired maps; a drain of a
// table past its share gives the memory back.
func TestCounterAccountingMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills tables of megabytes")
	}
	for _, tc := range []struct {
		name   string
		n      int
		keyLen int
		drains int // drains after counting: 0 keys new, 1 published, 2 retired
	}{
		{"short keys, new", 50000, 24, 0},
		{"short keys, published", 50000, 24, 1},
		{"long keys, retired", 20000, 200, 2},
		{"few keys per shard", 600, 40, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCounter(1 << 40) // never past a share: the steady drain
			keys := make([]string, tc.n)
			for i := range keys {
				keys[i] = fmt.Sprintf("%0*d", tc.keyLen, i*7919)
			}
			before := heapInuse()
			for _, k := range keys {
				c.Count(k)
			}
			for range tc.drains {
				c.Drain(func(string, uint64) {})
			}
			grown := int64(heapInuse()) - int64(before)
			u := c.Usage()
			ratio := float64(u.Bytes) / float64(grown)
			t.Logf("%d keys: accounted %d B, heap grew %d B: ratio %.3f", tc.n, u.Bytes, grown, ratio)
			if ratio < 1 || ratio > 2 {
				t.Errorf("accounted %d B, heap grew %d B: ratio %.3f outside [1, 2]", u.Bytes, grown, ratio)
			}
			runtime.KeepAlive(keys)
		})
	}
	t.Run("drained past its share", func(t *testing.T) {
		c := NewCounter(1 << 20)
		before := heapInuse()
		for i := range 4000 {
			c.Count(fmt.Sprintf("21.12345/SVC/NS/%08d", i))
		}
		if b := c.Usage().Bytes; b < 1<<18 {
			t.Fatalf("4000 keys charged %d B: not past a quarter of the bound", b)
		}
		c.Drain(func(string, uint64) {})
		grown := int64(heapInuse()) - int64(before)
		if u := c.Usage(); u.Bytes != 0 || grown > 16<<10 {
			t.Errorf("after the drain: %d B charged, heap %d B above the start", u.Bytes, grown)
		}
	})
	t.Run("counted once", func(t *testing.T) {
		c := NewCounter(1 << 40)
		keys := make([]string, 60000) // about 6 KB of log a shard
		for i := range keys {
			keys[i] = fmt.Sprintf("%024d", i*7919)
		}
		before := heapInuse()
		for _, k := range keys {
			c.CountOnce(k)
		}
		grown := int64(heapInuse()) - int64(before)
		ratio := float64(c.Usage().Bytes) / float64(grown)
		t.Logf("%d keys counted once: accounted %d B, heap grew %d B: ratio %.3f", len(keys), c.Usage().Bytes, grown, ratio)
		if ratio < 1 || ratio > 2 {
			t.Errorf("accounted %d B, heap grew %d B: ratio %.3f outside [1, 2]", c.Usage().Bytes, grown, ratio)
		}
		// The first drain keeps the logs for a period as busy; the second,
		// after an idle one, gives them back.
		charged := c.Usage().Bytes
		var drained uint64
		c.Drain(func(_ string, n uint64) { drained += n })
		if u := c.Usage(); drained != uint64(len(keys)) || u.Bytes != charged {
			t.Errorf("first drain: %d events, %d B charged; want %d, %d (the logs kept)", drained, u.Bytes, len(keys), charged)
		}
		c.Drain(func(string, uint64) {})
		grown = int64(heapInuse()) - int64(before)
		if u := c.Usage(); u.Bytes != 0 || grown > 16<<10 {
			t.Errorf("after an idle period: %d B charged, heap %d B above the start", u.Bytes, grown)
		}
		runtime.KeepAlive(keys)
	})
}

// TestCounterConcurrentDrain: no event is lost or counted twice while drains
// run concurrently with counting, with counters and without (run with -race).
func TestCounterConcurrentDrain(t *testing.T) {
	c := NewCounter(0)
	const workers, per = 8, 20000
	var wg sync.WaitGroup
	total := map[string]uint64{}
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-stop:
				return
			default:
				c.Drain(func(k string, n uint64) { total[k] += n })
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if w%2 == 0 {
					c.Count(fmt.Sprint("key-", (i+w)%37))
				} else {
					c.CountOnce(fmt.Sprint("key-", (i+w)%37))
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-drained
	c.Drain(func(k string, n uint64) { total[k] += n })
	var sum uint64
	for _, n := range total {
		sum += n
	}
	if sum != workers*per {
		t.Errorf("counted %d, want %d", sum, workers*per)
	}
}

// TestCounterDrainPart: draining every part once hands over exactly what one
// Drain would, across the retire and forget steps; parts out of range are
// nothing.
func TestCounterDrainPart(t *testing.T) {
	const keys = 2000
	for _, parts := range []int{1, 3, 16, 256} {
		t.Run(fmt.Sprint(parts, " parts"), func(t *testing.T) {
			c := NewCounter(0)
			for round := range 4 {
				want := map[string]uint64{}
				for i := range keys {
					if (i+round)%3 == 0 { // some keys idle each round
						continue
					}
					k := fmt.Sprint("21.12345/SVC/NS/", i)
					for j := range 1 + i%4 {
						if (i+j)%5 == 0 {
							c.CountOnce(k)
						} else {
							c.Count(k)
						}
					}
					want[k] += uint64(1 + i%4)
				}
				got := map[string]uint64{}
				for i := parts - 1; i >= 0; i-- {
					c.DrainPart(i, parts, func(k string, n uint64) { got[k] += n })
				}
				if len(got) != len(want) {
					t.Fatalf("round %d: %d keys drained, want %d", round, len(got), len(want))
				}
				for k, n := range want {
					if got[k] != n {
						t.Fatalf("round %d: %s = %d, want %d", round, k, got[k], n)
					}
				}
			}
			for _, bad := range [][2]int{{-1, parts}, {parts, parts}, {0, 0}} {
				c.Count("x")
				c.DrainPart(bad[0], bad[1], func(k string, _ uint64) { t.Errorf("DrainPart(%d, %d) drained %s", bad[0], bad[1], k) })
				drainAll(c)
			}
		})
	}
}

func TestCounterZeroAlloc(t *testing.T) {
	c := NewCounter(0)
	key := []byte("21.12345/SVC/NS/ABCD-1234-X")
	c.Count(string(key))
	if a := testing.AllocsPerRun(1000, func() { c.Count(unsafeconv.String(key)) }); a != 0 {
		t.Errorf("Count of a known key: %v allocs, want 0", a)
	}
}

func BenchmarkCounterParallel(b *testing.B) {
	c := NewCounter(0)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("21.12345/SVC/NS/%08d", i)
	}
	for _, k := range keys {
		c.Count(k)
	}
	c.Drain(func(string, uint64) {}) // publish the keys: the steady state
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Count(keys[i&1023])
			i++
		}
	})
}

// BenchmarkCounterOneKey: the steady-state cost of one Count on one core.
func BenchmarkCounterOneKey(b *testing.B) {
	c := NewCounter(0)
	key := "21.12345/SVC/NS/ABCD1234X"
	c.Count(key)
	c.Drain(func(string, uint64) {})
	b.ReportAllocs()
	for b.Loop() {
		c.Count(key)
	}
}

// TestEntryCountHit: an entry counts through the counter it keeps, gets a new
// one when a drain has forgotten the old (no event lost), counts nothing
// without a Counter, drops into Dropped when the table is full, and
// allocates nothing once it holds a live counter.
func TestEntryCountHit(t *testing.T) {
	c := NewCounter(0)
	e := resident("21.12345/SVC/NS/A")
	for range 3 {
		e.CountHit(c)
	}
	if got := drainAll(c); len(got) != 1 || got[e.Key] != 3 {
		t.Fatalf("first drain = %v, want %s: 3", got, e.Key)
	}
	held := e.hits.Load()
	drainAll(c) // idle for a period: retired
	drainAll(c) // idle for another: forgotten, its counter dead
	if n := c.Keys(); n != 0 {
		t.Fatalf("keys held after two idle drains: %d", n)
	}
	e.CountHit(c)
	if e.hits.Load() == held {
		t.Error("the entry kept the counter the drain forgot")
	}
	if got := drainAll(c); got[e.Key] != 1 {
		t.Errorf("after the counter was forgotten: drain = %v, want %s: 1", got, e.Key)
	}
	if a := testing.AllocsPerRun(1000, func() { e.CountHit(c) }); a != 0 {
		t.Errorf("CountHit with a live counter: %v allocs, want 0", a)
	}

	(&Entry{Key: "x"}).CountHit(nil) // a nil Counter is off

	full := NewCounter(1) // no room for any key, no flusher: dropped
	f := resident("21.12345/SVC/NS/B")
	f.CountHit(full)
	f.CountHit(full)
	unpublished("21.12345/SVC/NS/C").CountHit(full)
	if full.Dropped() != 3 || f.hits.Load() != nil {
		t.Errorf("full table: dropped %d, counter %p; want 3 dropped, no counter", full.Dropped(), f.hits.Load())
	}
}

// TestEntryCountHitNotAdmitted: an entry the cache does not hold is counted
// without a counter (CountOnce): the events are drained, no key is
// registered, the entry is charged nothing, and once its shard's log has
// room a count allocates nothing.
func TestEntryCountHitNotAdmitted(t *testing.T) {
	c := NewCounter(0)
	e := unpublished("21.12345/SVC/NS/A")
	e.CountHit(c)
	e.CountHit(c)
	resident(e.Key).CountHit(c) // the key admitted meanwhile
	// Keys: the key's counter, and the log's two events.
	if e.hits.Load() != nil || c.Keys() != 3 || e.Bytes() != 0 {
		t.Errorf("counted once: entry counter %p, %d keys held, entry charged %d; want none, 3, 0", e.hits.Load(), c.Keys(), e.Bytes())
	}
	if got := drainAll(c); len(got) != 1 || got[e.Key] != 3 {
		t.Fatalf("drain = %v, want %s: 3", got, e.Key)
	}
	if n := c.Keys(); n != 1 {
		t.Errorf("after the drain %d keys held, want 1 (the counter)", n)
	}
	// A steady period: the log keeps its array from one drain to the next.
	var total uint64
	a := testing.AllocsPerRun(5, func() {
		for range 20 {
			e.CountHit(c)
		}
		c.Drain(func(_ string, n uint64) { total += n })
	})
	if a != 0 || total != 6*20 {
		t.Errorf("steady periods of 20 counts once: %v allocs a period, %d drained; want 0, 120", a, total)
	}
}

// TestEntryCountHitCharges: the counter an entry takes is charged to it
// once, not again when a forgotten counter is replaced.
func TestEntryCountHitCharges(t *testing.T) {
	c := NewCounter(0)
	e := resident("21.12345/SVC/NS/A")
	e.CountHit(c)
	e.CountHit(c)
	if n := e.Bytes(); n != counterRefBytes {
		t.Fatalf("after two counts the entry is charged %d bytes, want %d", n, counterRefBytes)
	}
	drainAll(c)
	drainAll(c)
	drainAll(c) // forgotten
	e.CountHit(c)
	if n := e.Bytes(); n != counterRefBytes {
		t.Errorf("after a new counter replaced the forgotten one: %d bytes, want %d", n, counterRefBytes)
	}
}

// resident is a found entry as the cache holds it, charged to a shard.
func resident(key string) *Entry {
	return &Entry{Key: key, Found: true, s: &shard{budget: 1 << 30}}
}

// unpublished is a found entry as build leaves it before it is published,
// and as the cache returns one it did not admit.
func unpublished(key string) *Entry {
	e := &Entry{Key: key, Found: true}
	e.charged.Store(notResident)
	return e
}

// BenchmarkCountHitMiss: the statistics' part of a cache miss: a new entry's
// first CountHit, for keys drawn uniformly from 100k with a drain every 10k
// counts (a flush interval), so that most keys are new to the table or
// retired in it, and a few are in its read-only map.
func BenchmarkCountHitMiss(b *testing.B) {
	c := NewCounter(64 << 20)
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("21.T11148/SVC/BNC/M%d", i)
	}
	entries := make([]*Entry, len(keys))
	for i, k := range keys {
		entries[i] = unpublished(k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = rng.IntN(len(keys))
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		e := entries[order[n&(len(order)-1)]]
		e.hits.Store(nil) // a freshly built entry
		e.CountHit(c)
		n++
		if n%10_000 == 0 {
			c.Drain(func(string, uint64) {})
		}
	}
}
