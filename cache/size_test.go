package cache

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/unsafeconv"
)

// encodedSource loads records the way the store does (store.decodeStored):
// one fresh copy of the handle and the value encoding, which the record's
// strings and slices alias. Nothing it returns is kept by the source, so
// everything a Load allocates is held by the cache alone.
type encodedSource struct {
	enc   []byte // handlev.AppendValues of the values
	owned bool   // build each part separately instead (a record made in code)
	vals  []handlev.Value
}

func (s *encodedSource) Load(key string) (handlev.Record, bool, error) {
	if s.owned {
		vs := make([]handlev.Value, len(s.vals))
		for i, v := range s.vals {
			vs[i] = handlev.Value{Index: v.Index, Type: strings.Clone(v.Type), Data: bytes.Clone(v.Data), Perm: v.Perm}
		}
		return handlev.Record{Handle: strings.Clone(key), Values: vs}, true, nil
	}
	own := make([]byte, 0, len(key)+len(s.enc))
	own = append(append(own, key...), s.enc...)
	vs, _, err := handlev.DecodeValuesShared(own[len(key):])
	if err != nil {
		return handlev.Record{}, false, err
	}
	return handlev.Record{Handle: unsafeconv.String(own[:len(key)]), Values: vs}, true, nil
}

// testValues is a record of n values: a URL, then n-1 values of dataLen bytes
// (a change log when dataLen is large), the last one without public read.
func testValues(n, dataLen int) []handlev.Value {
	vs := []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/landing/page/0001"), Perm: handlev.PermPublicRead | handlev.PermAdminRead}}
	for i := 1; i < n; i++ {
		perm := handlev.PermPublicRead | handlev.PermAdminRead
		if i == n-1 && n > 2 {
			perm = handlev.PermAdminRead
		}
		vs = append(vs, handlev.Value{Index: int32(i + 1), Type: "CHANGELOG", Data: bytes.Repeat([]byte{'x'}, dataLen), Perm: perm})
	}
	return vs
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestAccountingMatchesHeap fills caches with records of several sizes, with
// and without their encodings built, and checks that what the cache charges
// (Usage.Bytes) is within 10 % of the heap it grew by.
func TestAccountingMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills caches of tens of megabytes")
	}
	cases := []struct {
		name      string
		n         int // entries
		values    int
		dataLen   int
		owned     bool
		encodings bool
	}{
		{name: "one value", n: 60000, values: 1},
		{name: "five values", n: 30000, values: 5, dataLen: 120},
		{name: "five values with encodings", n: 20000, values: 5, dataLen: 120, encodings: true},
		{name: "3 KiB change log with encodings", n: 8000, values: 3, dataLen: 3 << 10, encodings: true},
		{name: "64 KiB change log", n: 400, values: 2, dataLen: 64 << 10, encodings: true},
		{name: "parts allocated separately", n: 30000, values: 4, dataLen: 200, owned: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vals := testValues(tc.values, tc.dataLen)
			src := &encodedSource{enc: handlev.AppendValues(nil, vals), owned: tc.owned, vals: vals}
			keys := make([][]byte, tc.n)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "21.T11148/%016X", i*7919)
			}
			c := mustNew(t, Config{Source: src, Bytes: 1 << 40, Entries: NoEntryCap})
			before := heapInuse()
			for _, k := range keys {
				e, err := c.Get(k)
				if err != nil {
					t.Fatal(err)
				}
				if tc.encodings {
					e.JSONBytes()
					e.WireBytes()
				}
			}
			grown := int64(heapInuse()) - int64(before)
			u := c.Usage()
			if u.Entries != tc.n {
				t.Fatalf("Entries = %d, want %d", u.Entries, tc.n)
			}
			ratio := float64(u.Bytes) / float64(grown)
			t.Logf("%d entries: accounted %d B (%d B each), heap grew %d B: ratio %.3f", tc.n, u.Bytes, u.Bytes/int64(tc.n), grown, ratio)
			if ratio < 0.9 || ratio > 1.1 {
				t.Errorf("accounted %d B, heap grew %d B: ratio %.3f outside [0.9, 1.1]", u.Bytes, grown, ratio)
			}
			runtime.KeepAlive(c)
			runtime.KeepAlive(keys)
		})
	}
}

// TestBudgetHeld fills a cache whose budget holds a fraction of the records,
// of very different sizes (one value to a 64 KiB change log), building the
// encodings of some, and checks after every step that the charged total is
// within the budget and equals what the held entries are charged.
func TestBudgetHeld(t *testing.T) {
	sizes := [][2]int{{1, 0}, {3, 100}, {6, 3 << 10}, {2, 64 << 10}, {12, 400}}
	srcs := make([]*encodedSource, len(sizes))
	for i, sz := range sizes {
		vals := testValues(sz[0], sz[1])
		srcs[i] = &encodedSource{enc: handlev.AppendValues(nil, vals)}
	}
	src := sourceFunc(func(key string) (handlev.Record, bool, error) {
		var i int
		fmt.Sscanf(key[len(key)-4:], "%04d", &i)
		return srcs[i%len(srcs)].Load(key)
	})
	const budget = 2 << 20
	c := mustNew(t, Config{Source: src, Bytes: budget, Shards: 4, Entries: NoEntryCap})
	check := func(step string) {
		t.Helper()
		u := c.Usage()
		if u.Bytes > budget || u.Bytes < 0 {
			t.Fatalf("%s: charged %d B, budget %d B", step, u.Bytes, budget)
		}
		var sum int64
		for i := range c.shards {
			sum += c.shards[i].dk.bytes() // the admission filter, charged to its shard
			for _, k := range c.shards[i].lru.Keys() {
				if e, ok := c.shards[i].lru.Peek(k); ok {
					sum += e.Bytes()
				}
			}
		}
		if sum != u.Bytes {
			t.Fatalf("%s: shards count %d B, held entries are charged %d B", step, u.Bytes, sum)
		}
	}
	for round := range 3 {
		for i := range 400 {
			e, err := c.Get(fmt.Appendf(nil, "21.T11148/%04d", i))
			if err != nil {
				t.Fatal(err)
			}
			if i%3 == round {
				e.JSONBytes()
				e.WireBytes()
			}
			check(fmt.Sprintf("round %d, get %d", round, i))
			if i%50 == 0 {
				c.Invalidate(fmt.Sprintf("21.T11148/%04d", i))
				check("invalidate")
			}
		}
	}
	u := c.Usage()
	if u.EvictedBytes == 0 || u.Invalidated == 0 {
		t.Errorf("Usage = %+v: want evictions by bytes and invalidations", u)
	}
	c.InvalidateAll()
	if u := c.Usage(); u.Bytes != 0 || u.Entries != 0 {
		t.Errorf("after InvalidateAll: %+v, want nothing charged", u)
	}
}

// TestEvictionCauses checks each cause is counted: the entry cap, negative
// entries replaced after their TTL, invalidations.
func TestEvictionCauses(t *testing.T) {
	clock := newClock()
	src := newSource()
	src.put("a", handlev.Record{Handle: "A"})
	c := mustNew(t, Config{Source: src, Entries: 2, Shards: 1, Now: clock.Now, NegativeTTL: time.Second, AdmitAll: true})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := c.Get([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if u := c.Usage(); u.EvictedEntries != 1 || u.Entries != 2 {
		t.Fatalf("after 3 gets with room for 2: %+v, want 1 eviction by the entry cap", u)
	}
	clock.Advance(2 * time.Second)
	if _, err := c.Get([]byte("c")); err != nil { // negative, expired: reloaded
		t.Fatal(err)
	}
	if u := c.Usage(); u.Expired != 1 {
		t.Fatalf("after reloading an expired negative entry: %+v, want Expired 1", u)
	}
	c.Invalidate("c")
	if u := c.Usage(); u.Invalidated != 1 || u.Entries != 1 {
		t.Fatalf("after Invalidate: %+v, want Invalidated 1", u)
	}
	if _, err := c.Get([]byte("a")); err != nil {
		t.Fatal(err)
	}
	before := c.Usage().Bytes
	e, _ := c.Get([]byte("a"))
	if e.Bytes() <= 0 || c.Usage().Bytes != before {
		t.Fatalf("hit changed the charge: entry %d B, total %d → %d", e.Bytes(), before, c.Usage().Bytes)
	}
}

type sourceFunc func(key string) (handlev.Record, bool, error)

func (f sourceFunc) Load(key string) (handlev.Record, bool, error) { return f(key) }

// TestBudgetConcurrent races loads, lazily built encodings (charged after
// publication, possibly after the entry was evicted), invalidations and
// InvalidateAll, then checks that the shards count exactly what the entries
// they hold are charged, within the budget.
func TestBudgetConcurrent(t *testing.T) {
	srcs := []*encodedSource{}
	for _, sz := range [][2]int{{1, 0}, {4, 300}, {2, 8 << 10}} {
		srcs = append(srcs, &encodedSource{enc: handlev.AppendValues(nil, testValues(sz[0], sz[1]))})
	}
	src := sourceFunc(func(key string) (handlev.Record, bool, error) {
		var i int
		fmt.Sscanf(key[len(key)-4:], "%04d", &i)
		return srcs[i%len(srcs)].Load(key)
	})
	const budget = 256 << 10
	c := mustNew(t, Config{Source: src, Bytes: budget, Shards: 2, Entries: NoEntryCap})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				k := fmt.Appendf(nil, "21.T11148/%04d", (i*31+g*7)%500)
				e, err := c.Get(k)
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					e.JSONBytes()
				}
				if i%3 == 0 {
					e.WireBytes()
				}
				if i%97 == 0 {
					c.Invalidate(string(k))
				}
				if g == 0 && i%1000 == 999 {
					c.InvalidateAll()
				}
			}
		}()
	}
	wg.Wait()
	u := c.Usage()
	var sum int64
	for i := range c.shards {
		c.shards[i].mu.Lock()
		sum += c.shards[i].dk.bytes() // the admission filter, charged to its shard
		c.shards[i].mu.Unlock()
		for _, k := range c.shards[i].lru.Keys() {
			if e, ok := c.shards[i].lru.Peek(k); ok {
				sum += e.Bytes()
			}
		}
	}
	if sum != u.Bytes || u.Bytes > budget {
		t.Fatalf("shards count %d B, held entries are charged %d B, budget %d B", u.Bytes, sum, budget)
	}
}
