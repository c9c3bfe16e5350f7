package tokenbucket

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

const sec = int64(time.Second)

func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// oneShard puts every key in the same shard, so a test can fill it.
func oneShard(string) uint64 { return 0 }

type step struct {
	at      int64 // nanoseconds after the start
	key     string
	ok      bool
	wait    time.Duration
	refused uint32
}

func TestTake(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"burst then refused, one token per interval", Config{Rate: 1, Burst: 2}, []step{
			{0, "a", true, 0, 0},
			{0, "a", true, 0, 0},
			{0, "a", false, time.Second, 1},
			{sec / 2, "a", false, time.Second / 2, 2},
			{sec, "a", true, 0, 0},
			{sec, "a", false, time.Second, 1},
			{sec, "b", true, 0, 0}, // keys are independent
		}},
		{"idle time refills up to the burst only", Config{Rate: 10, Burst: 3}, []step{
			{0, "a", true, 0, 0},
			{100 * sec, "a", true, 0, 0},
			{100 * sec, "a", true, 0, 0},
			{100 * sec, "a", true, 0, 0},
			{100 * sec, "a", false, 100 * time.Millisecond, 1},
		}},
		{"fractional rate", Config{Rate: 0.5, Burst: 1}, []step{
			{0, "a", true, 0, 0},
			{0, "a", false, 2 * time.Second, 1},
			{sec, "a", false, time.Second, 2},
			{2 * sec, "a", true, 0, 0},
		}},
		{"fractional burst is a partial bucket", Config{Rate: 1, Burst: 1.5}, []step{
			{0, "a", true, 0, 0},
			{0, "a", false, time.Second / 2, 1},
			{sec / 2, "a", true, 0, 0},
		}},
		{"burst below 1 is 1", Config{Rate: 1, Burst: 0}, []step{
			{0, "a", true, 0, 0},
			{0, "a", false, time.Second, 1},
		}},
		{"no rate: the burst once", Config{Rate: 0, Burst: 2}, []step{
			{0, "a", true, 0, 0},
			{0, "a", true, 0, 0},
			{1000 * sec, "a", false, 0, 1}, // wait is decades: not checked
		}},
		{"infinite burst", Config{Rate: 1, Burst: math.Inf(1)}, []step{
			{0, "a", true, 0, 0},
			{0, "a", true, 0, 0},
		}},
		{"NaN rate and burst", Config{Rate: math.NaN(), Burst: math.NaN()}, []step{
			{0, "a", true, 0, 0},
			{0, "a", false, 0, 1},
		}},
		{"clock going back does not refund", Config{Rate: 1, Burst: 1}, []step{
			{10 * sec, "a", true, 0, 0},
			{5 * sec, "a", false, 6 * time.Second, 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := New(tt.cfg, strHash)
			for i, s := range tt.steps {
				r := tb.Take(s.key, t0+s.at)
				if r.OK != s.ok || r.Refused != s.refused || (s.wait != 0 && r.Wait != s.wait) || (r.OK && r.Wait != 0) || (!r.OK && r.Wait <= 0) {
					t.Errorf("step %d: Take(%q, +%v) = %+v, want ok=%v wait=%v refused=%d",
						i, s.key, time.Duration(s.at), r, s.ok, s.wait, s.refused)
				}
			}
		})
	}
}

// TestSustainedRate: a key taking at exactly its rate is never refused, and a
// flood gets the burst plus the rate over the time, no more.
func TestSustainedRate(t *testing.T) {
	const rate, burst = 10, 5
	tb := New(Config{Rate: rate, Burst: burst}, strHash)
	passed := 0
	const ticks = 600 // 60 s at 10/s
	for i := range ticks {
		now := int64(i) * sec / rate
		if !tb.Take("polite", now).OK {
			t.Fatalf("tick %d: key at its rate refused", i)
		}
		for range 3 {
			if tb.Take("flood", now).OK {
				passed++
			}
		}
	}
	if want := ticks + burst - 1; passed != want {
		t.Errorf("flood passed %d, want %d", passed, want)
	}
}

// TestEvictsIdleFirst: a new key at a full shard forgets the keys whose bucket
// is full again and keeps those still drained.
func TestEvictsIdleFirst(t *testing.T) {
	tb := New(Config{Rate: 1, Burst: 1, Size: 64 * 8}, oneShard) // 8 keys in the one shard used
	for i := range 7 {
		tb.Take(fmt.Sprint("idle", i), 0) // full again at 1 s
	}
	tb.Take("busy", 3*sec/2) // full again at 2.5 s
	if n := tb.Len(); n != 8 {
		t.Fatalf("Len = %d, want 8", n)
	}
	tb.Take("new", 8*sec/5)
	if n := tb.Len(); n != 2 {
		t.Errorf("after a new key at a full shard: Len = %d, want 2 (busy and new)", n)
	}
	if r := tb.Take("busy", 8*sec/5); r.OK || r.Wait != 900*time.Millisecond {
		t.Errorf("busy key was forgotten: Take = %+v", r)
	}
}

// TestBounded: a flood of new keys with nothing idle never grows the table
// past its size, and a known key keeps working.
func TestBounded(t *testing.T) {
	for _, hash := range []func(string) uint64{strHash, oneShard} {
		const size = 64 * 8
		tb := New(Config{Rate: 10, Burst: 10, Size: size}, hash)
		for i := range 20000 {
			tb.Take(fmt.Sprint(i), int64(i)) // the clock barely moves: nothing is idle
			if i%1000 == 0 {
				if n := tb.Len(); n > size {
					t.Fatalf("after %d keys the table holds %d, bound %d", i, n, size)
				}
			}
		}
		if n := tb.Len(); n > size || n == 0 {
			t.Errorf("table holds %d keys, bound %d", n, size)
		}
	}
}

func TestDefaultSize(t *testing.T) {
	tb := New(Config{Rate: 1}, strHash)
	if tb.perShard*shards != DefaultSize {
		t.Errorf("bound %d, want DefaultSize %d", tb.perShard*shards, DefaultSize)
	}
	if tb.Rate() != 1 {
		t.Errorf("Rate = %v", tb.Rate())
	}
}

// TestConcurrent: takes from many goroutines at one instant hand out exactly
// the burst per key.
func TestConcurrent(t *testing.T) {
	const burst, keys, workers = 50, 8, 8
	tb := New(Config{Rate: 1, Burst: burst}, strHash)
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 * keys {
				k := fmt.Sprint("k", (i+w)%keys)
				if tb.Take(k, 0).OK {
					mu.Lock()
					got[k]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for i := range keys {
		if k := fmt.Sprint("k", i); got[k] != burst {
			t.Errorf("%s: %d takes allowed, want %d", k, got[k], burst)
		}
	}
}
