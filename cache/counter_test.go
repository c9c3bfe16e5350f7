package cache

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"
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

func TestCounterBounded(t *testing.T) {
	c := NewCounter(counterShards) // one key per shard
	for i := range 10000 {
		c.Count(fmt.Sprint("k", i))
	}
	if k := c.Keys(); k > counterShards {
		t.Errorf("%d keys held, bound %d", k, counterShards)
	}
	var total uint64
	for _, n := range drainAll(c) {
		total += n
	}
	if total+c.Dropped() != 10000 {
		t.Errorf("counted %d + dropped %d, want 10000", total, c.Dropped())
	}
}

// TestCounterConcurrentDrain: no event is lost or counted twice while drains
// run concurrently with counting (run with -race).
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
				c.Count(fmt.Sprint("key-", (i+w)%37))
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
					for range 1 + i%4 {
						c.Count(k)
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
	if a := testing.AllocsPerRun(1000, func() { c.Count(unsafe.String(unsafe.SliceData(key), len(key))) }); a != 0 {
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
