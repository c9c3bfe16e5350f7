package cache

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"pidnode/handlev"
)

// mapSource is a Source over a map: the smallest stand-in for the store, which this
// package must not import.
type mapSource struct {
	mu    sync.Mutex
	recs  map[string]handlev.Record
	err   error
	loads []string

	// after, if set, runs after the lookup and before Load returns, so a test can
	// hold a load in flight with what it read.
	after func(key string)
}

func newSource() *mapSource { return &mapSource{recs: map[string]handlev.Record{}} }

func (s *mapSource) Load(key string) (handlev.Record, bool, error) {
	s.mu.Lock()
	s.loads = append(s.loads, key)
	rec, ok := s.recs[key]
	err, after := s.err, s.after
	s.mu.Unlock()
	if after != nil {
		after(key)
	}
	return rec, ok, err
}

func (s *mapSource) put(key string, rec handlev.Record) {
	s.mu.Lock()
	s.recs[key] = rec
	s.mu.Unlock()
}

func (s *mapSource) setErr(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func (s *mapSource) loaded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.loads...)
}

// fakeClock is the injected clock.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Storage keys in both forms (handlev.Namer.AppendKey of "21.T11148/tbr1/2345"
// and "21.T11148/svc/tbr1/2345").
const (
	shortKey = "21.T11148/TBR1/2345"
	fullKey  = "21.T11148/SVC/TBR1/2345"
)

// alt is the production Alt: a Namer's short ↔ full key mapping.
var alt = func() func(dst, key []byte) ([]byte, bool) {
	n, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.T11148"})
	if err != nil {
		panic(err)
	}
	return n.AppendAltKey
}()

func record(handle, url string, status handlev.Status) handlev.Record {
	r := handlev.Record{Handle: handle, Values: []handlev.Value{
		{Index: 1, Type: handlev.TypeURL, Data: []byte(url), TTL: 86400, Timestamp: 1763769600, Perm: handlev.PermDefault},
	}}
	if status != handlev.StatusNone {
		r.Values = append(r.Values, handlev.Value{Index: 2, Type: handlev.TypeStatus, Data: []byte(status.String()), TTL: 86400, Perm: handlev.PermDefault})
	}
	return r
}

func mustNew(t testing.TB, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func mustGet(t testing.TB, c *Cache, key string) *Entry {
	t.Helper()
	e, err := c.Get([]byte(key))
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if e == nil {
		t.Fatalf("Get(%q) = nil entry", key)
	}
	return e
}

func url(e *Entry) string {
	if !e.Found || len(e.Record.Values) == 0 {
		return ""
	}
	return string(e.Record.Values[0].Data)
}

func TestNew(t *testing.T) {
	src := newSource()
	tests := []struct {
		name       string
		cfg        Config
		wantErr    error
		wantCap    int
		wantShards int
	}{
		{name: "defaults", cfg: Config{Source: src}, wantCap: DefaultEntries, wantShards: DefaultShards},
		{name: "entries split exactly", cfg: Config{Source: src, Entries: 1001, Shards: 16}, wantCap: 1001, wantShards: 16},
		{name: "one per shard at least", cfg: Config{Source: src, Entries: 10, Shards: 64}, wantCap: 64, wantShards: 64},
		{name: "one shard", cfg: Config{Source: src, Entries: 3, Shards: 1}, wantCap: 3, wantShards: 1},
		{name: "nil source", cfg: Config{}, wantErr: ErrNoSource},
		{name: "shards not power of two", cfg: Config{Source: src, Shards: 48}, wantErr: ErrBadConfig},
		{name: "shards negative", cfg: Config{Source: src, Shards: -64}, wantErr: ErrBadConfig},
		{name: "shards too many", cfg: Config{Source: src, Shards: 1 << 17}, wantErr: ErrBadConfig},
		{name: "entries negative", cfg: Config{Source: src, Entries: -1}, wantErr: ErrBadConfig},
		{name: "negative ttl negative", cfg: Config{Source: src, NegativeTTL: -time.Second}, wantErr: ErrBadConfig},
		{name: "max age negative", cfg: Config{Source: src, MaxAge: -time.Second}, wantErr: ErrBadConfig},
		{name: "memory budget negative", cfg: Config{Source: src, MemoryBudget: -1}, wantErr: ErrBadConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("New(%+v) error = %v, want %v", tt.cfg, err, tt.wantErr)
			}
			if err != nil {
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Errorf("New error %v is not a *ConfigError", err)
				}
				return
			}
			if got := c.capacity; got != tt.wantCap {
				t.Errorf("capacity = %d, want %d", got, tt.wantCap)
			}
			if got := len(c.shards); got != tt.wantShards {
				t.Errorf("shards = %d, want %d", got, tt.wantShards)
			}
		})
	}
}

func TestGetHitMiss(t *testing.T) {
	src := newSource()
	rec := record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusRegistered)
	src.put(fullKey, rec)
	c := mustNew(t, Config{Source: src})

	e := mustGet(t, c, fullKey)
	if !e.Found || e.Key != fullKey || e.Status != handlev.StatusRegistered || e.Record.Handle != rec.Handle {
		t.Fatalf("Get(%q) = {Found:%v Key:%q Status:%v Handle:%q}, want found under %q, REGISTERED, %q",
			fullKey, e.Found, e.Key, e.Status, e.Record.Handle, fullKey, rec.Handle)
	}
	if want := handlev.AppendValuesJSON(nil, rec.Values); !bytes.Equal(e.JSONBytes(), want) {
		t.Errorf("Entry.JSONBytes() = %s, want %s", e.JSONBytes(), want)
	}
	if want := handlev.AppendValues(nil, rec.Values); !bytes.Equal(e.WireBytes(), want) {
		t.Errorf("Entry.WireBytes() = %x, want %x", e.WireBytes(), want)
	}

	key := []byte(fullKey)
	for i := range 3 {
		if got, err := c.Get(key); err != nil || got != e {
			t.Fatalf("hit %d: Get = %p, %v; want the published entry %p", i, got, err, e)
		}
	}
	if got := src.loaded(); len(got) != 1 {
		t.Errorf("loads = %q, want one", got)
	}
	want := Stats{Hits: 3, Misses: 1, Entries: 1}
	if got := c.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	if c.Len() != 1 {
		t.Errorf("Len() = %d, want 1", c.Len())
	}
}

func TestNegativeTTL(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration // Config.NegativeTTL
		want time.Duration // effective
	}{
		{name: "default", ttl: 0, want: DefaultNegativeTTL},
		{name: "configured", ttl: 5 * time.Second, want: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, clk := newSource(), newClock()
			c := mustNew(t, Config{Source: src, NegativeTTL: tt.ttl, Now: clk.Now})

			e := mustGet(t, c, fullKey)
			if e.Found || e.Key != fullKey || e.JSONBytes() != nil || e.WireBytes() != nil {
				t.Fatalf("Get(absent) = {Found:%v Key:%q JSON:%q Wire:%x}, want a negative entry", e.Found, e.Key, e.JSONBytes(), e.WireBytes())
			}
			// Created meanwhile, but the negative entry stands until it expires.
			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
			clk.Advance(tt.want - 1)
			if got := mustGet(t, c, fullKey); got != e {
				t.Fatalf("Get before NegativeTTL = %+v, want the negative entry", got)
			}
			clk.Advance(1)
			if got := mustGet(t, c, fullKey); !got.Found {
				t.Fatalf("Get at NegativeTTL: Found = false, want the record reloaded")
			}
			if got := src.loaded(); len(got) != 2 {
				t.Errorf("loads = %q, want 2", got)
			}
			if got, want := c.Stats(), (Stats{Hits: 1, Misses: 2, Entries: 1}); got != want {
				t.Errorf("Stats() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestMaxAge(t *testing.T) {
	tests := []struct {
		name      string
		maxAge    time.Duration
		advance   time.Duration
		wantLoads int
	}{
		{name: "zero never ages", maxAge: 0, advance: 1000 * time.Hour, wantLoads: 1},
		{name: "before max age", maxAge: time.Minute, advance: time.Minute - 1, wantLoads: 1},
		{name: "at max age", maxAge: time.Minute, advance: time.Minute, wantLoads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, clk := newSource(), newClock()
			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
			c := mustNew(t, Config{Source: src, MaxAge: tt.maxAge, Now: clk.Now})
			mustGet(t, c, fullKey)
			clk.Advance(tt.advance)
			mustGet(t, c, fullKey)
			if got := src.loaded(); len(got) != tt.wantLoads {
				t.Errorf("loads = %q, want %d", got, tt.wantLoads)
			}
		})
	}
}

func TestLoadErrorNotCached(t *testing.T) {
	src := newSource()
	src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
	errDisk := errors.New("disk on fire")
	src.setErr(errDisk)
	c := mustNew(t, Config{Source: src, Alt: alt})

	for _, key := range []string{fullKey, shortKey} {
		e, err := c.Get([]byte(key))
		var le *LoadError
		if e != nil || !errors.Is(err, errDisk) || !errors.As(err, &le) || le.Key != key {
			t.Fatalf("Get(%q) = %v, %v; want nil and a *LoadError{Key: %q} wrapping %v", key, e, err, key, errDisk)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("Len() = %d after errors, want 0", c.Len())
	}
	src.setErr(nil)
	if e := mustGet(t, c, fullKey); !e.Found {
		t.Fatalf("Get after the error cleared: Found = false, want true")
	}
}

func TestRender(t *testing.T) {
	src := newSource()
	src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusObsoleted))
	var calls atomic.Int32
	render := func(e *Entry) any {
		calls.Add(1)
		if e.Found {
			// Called last: the other fields are set, and the encodings can be had.
			return fmt.Sprintf("%s %s %d", e.Key, e.Status, len(e.JSONBytes())+len(e.WireBytes()))
		}
		return "404 " + e.Key
	}
	c := mustNew(t, Config{Source: src, Render: render})

	tests := []struct {
		name, key string
		want      string
	}{
		{name: "found", key: fullKey, want: fmt.Sprintf("%s OBSOLETED %d", fullKey,
			len(handlev.AppendValuesJSON(nil, src.recs[fullKey].Values))+len(handlev.AppendValues(nil, src.recs[fullKey].Values)))},
		{name: "not found", key: shortKey, want: "404 " + shortKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := calls.Load()
			for range 3 {
				if got := mustGet(t, c, tt.key).View; got != tt.want {
					t.Fatalf("Get(%q).View = %v, want %q", tt.key, got, tt.want)
				}
			}
			if n := calls.Load() - before; n != 1 {
				t.Errorf("Render called %d times for %q, want once", n, tt.key)
			}
		})
	}
}

func TestCoalesce(t *testing.T) {
	const n = 100
	src := newSource()
	src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
	release := make(chan struct{})
	src.after = func(string) { <-release }
	c := mustNew(t, Config{Source: src})

	entries := make([]*Entry, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e, err := c.Get([]byte(fullKey))
			if err != nil {
				t.Errorf("Get: %v", err)
			}
			entries[i] = e
		})
	}
	// Hold the load until every goroutine has missed. One that reaches singleflight
	// after the flight ended finds the published entry, so there is exactly one load.
	waitFor(t, func() bool { return c.Stats().Misses == n })
	close(release)
	wg.Wait()

	if got := src.loaded(); len(got) != 1 {
		t.Fatalf("%d concurrent misses made loads %q, want exactly one", n, got)
	}
	for i, e := range entries {
		if e != entries[0] || !e.Found {
			t.Fatalf("goroutine %d got %p (found %v), want the shared entry %p", i, e, e != nil && e.Found, entries[0])
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for condition")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAltFallback(t *testing.T) {
	src := newSource()
	// Stored under the full form only; readers ask for the short form.
	src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
	c := mustNew(t, Config{Source: src, Alt: alt})

	e := mustGet(t, c, shortKey)
	if !e.Found || e.Key != fullKey {
		t.Fatalf("Get(%q) = {Found:%v Key:%q}, want found under %q", shortKey, e.Found, e.Key, fullKey)
	}
	if got, want := src.loaded(), []string{shortKey, fullKey}; !slices.Equal(got, want) {
		t.Fatalf("loads = %q, want %q", got, want)
	}
	if got := mustGet(t, c, shortKey); got != e {
		t.Fatalf("second Get(%q) missed", shortKey)
	}
	if got := mustGet(t, c, fullKey); !got.Found || got.Key != fullKey {
		t.Fatalf("Get(%q) = {Found:%v Key:%q}", fullKey, got.Found, got.Key)
	}
	if c.Len() != 2 {
		t.Fatalf("Len() = %d, want 2 (both forms cached)", c.Len())
	}

	// Neither form anywhere: one negative entry under the requested key.
	const absent = "21.T11148/ABCD/EFGH"
	if e := mustGet(t, c, absent); e.Found || e.Key != absent {
		t.Fatalf("Get(%q) = {Found:%v Key:%q}, want negative under the requested key", absent, e.Found, e.Key)
	}
	if got := src.loaded(); !slices.Equal(got[len(got)-2:], []string{absent, "21.T11148/SVC/ABCD/EFGH"}) {
		t.Fatalf("loads = %q, want both forms of %q tried", got, absent)
	}
}

func TestInvalidateBothForms(t *testing.T) {
	tests := []struct{ name, key string }{
		{name: "full form", key: fullKey},
		{name: "short form", key: shortKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newSource()
			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
			c := mustNew(t, Config{Source: src, Alt: alt})
			mustGet(t, c, shortKey)
			mustGet(t, c, fullKey)
			mustGet(t, c, "OTHER/KEY")

			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/b", handlev.StatusNone))
			c.Invalidate(tt.key)
			if c.Len() != 1 {
				t.Fatalf("Invalidate(%q): Len() = %d, want 1 (only the unrelated key)", tt.key, c.Len())
			}
			for _, k := range []string{shortKey, fullKey} {
				if got := url(mustGet(t, c, k)); got != "https://example.org/b" {
					t.Errorf("Get(%q) after Invalidate(%q) = %q, want the new URL", k, tt.key, got)
				}
			}
			if c.Stats().Evictions != 0 {
				t.Errorf("Evictions = %d, want invalidations not counted", c.Stats().Evictions)
			}
		})
	}
}

// TestInvalidateDuringLoad holds a load in flight with the old record, writes and
// invalidates, then lets the load finish: the stale entry must not be published,
// and a Get started after Invalidate must not wait for the stale load.
func TestInvalidateDuringLoad(t *testing.T) {
	tests := []struct {
		name       string
		get        string // key readers ask for
		invalidate func(c *Cache)
	}{
		{name: "same key", get: fullKey, invalidate: func(c *Cache) { c.Invalidate(fullKey) }},
		{name: "short get, full invalidated", get: shortKey, invalidate: func(c *Cache) { c.Invalidate(fullKey) }},
		{name: "short get, short invalidated", get: shortKey, invalidate: func(c *Cache) { c.Invalidate(shortKey) }},
		{name: "invalidate all", get: shortKey, invalidate: func(c *Cache) { c.InvalidateAll() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const oldURL, newURL = "https://example.org/old", "https://example.org/new"
			src := newSource()
			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", oldURL, handlev.StatusNone))
			started, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			src.after = func(key string) {
				if key != fullKey {
					return
				}
				held := false
				once.Do(func() { held = true })
				if held { // only the first load of the record, which read oldURL
					close(started)
					<-release
				}
			}
			c := mustNew(t, Config{Source: src, Alt: alt})

			stale := make(chan *Entry, 1)
			go func() {
				e, err := c.Get([]byte(tt.get))
				if err != nil {
					t.Errorf("Get: %v", err)
				}
				stale <- e
			}()
			<-started
			src.put(fullKey, record("21.T11148/SVC/TBR1/2345", newURL, handlev.StatusNone))
			tt.invalidate(c)

			got := make(chan *Entry, 1)
			go func() {
				e, _ := c.Get([]byte(tt.get))
				got <- e
			}()
			var fresh *Entry
			select {
			case fresh = <-got:
			case <-time.After(10 * time.Second):
				close(release)
				t.Fatalf("Get(%q) after invalidate waited for the load that started before it", tt.get)
			}
			if got := url(fresh); got != newURL {
				t.Fatalf("Get(%q) after invalidate = %q, want %q", tt.get, got, newURL)
			}
			close(release)
			if got := url(<-stale); got != oldURL {
				t.Fatalf("held Get(%q) = %q, want %q (it started before the write)", tt.get, got, oldURL)
			}
			if got := mustGet(t, c, tt.get); got != fresh {
				t.Fatalf("Get(%q) after the held load finished = %q, want the fresh entry %q", tt.get, url(got), newURL)
			}
		})
	}
}

func TestEvictions(t *testing.T) {
	src := newSource()
	c := mustNew(t, Config{Source: src, Entries: 2, Shards: 1, AdmitAll: true})
	for _, k := range []string{"A", "B", "C"} { // C evicts A
		mustGet(t, c, k)
	}
	mustGet(t, c, "B") // hit; C is now least recent
	mustGet(t, c, "A") // miss; evicts C
	if got, want := c.Stats(), (Stats{Hits: 1, Misses: 4, Evictions: 2, Entries: 2}); got != want {
		t.Fatalf("Stats() = %+v, want %+v", got, want)
	}
	c.Invalidate("B")
	c.InvalidateAll()
	if got, want := c.Stats(), (Stats{Hits: 1, Misses: 4, Evictions: 2}); got != want {
		t.Fatalf("Stats() after invalidation = %+v, want %+v (invalidations are not evictions)", got, want)
	}
}

func TestGetHitAllocs(t *testing.T) {
	src, clk := newSource(), newClock()
	src.put(fullKey, record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone))
	tests := []struct {
		name string
		cfg  Config
		key  string
	}{
		{name: "found", cfg: Config{Source: src}, key: fullKey},
		{name: "found with max age", cfg: Config{Source: src, MaxAge: time.Hour, Now: clk.Now}, key: fullKey},
		{name: "negative", cfg: Config{Source: src, Now: clk.Now}, key: shortKey},
		{name: "alt fallback", cfg: Config{Source: src, Alt: alt}, key: shortKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.cfg)
			key := []byte(tt.key)
			mustGet(t, c, tt.key)
			allocs := testing.AllocsPerRun(1000, func() {
				if e, err := c.Get(key); e == nil || err != nil {
					t.Fatalf("Get(%q) = %v, %v", key, e, err)
				}
			})
			if allocs != 0 {
				t.Errorf("Get hit allocates %v times, want 0", allocs)
			}
			if st := c.Stats(); st.Misses != 1 {
				t.Errorf("Stats() = %+v, want only the first Get to miss", st)
			}
		})
	}
}

// TestConcurrent mixes Gets, Invalidates and InvalidateAll for the race detector,
// and checks that readers only ever see a record as it was stored.
func TestConcurrent(t *testing.T) {
	src := newSource()
	const keys = 64
	for i := range keys {
		k := fmt.Sprintf("21.T11148/SVC/K%03d/X", i)
		src.put(k, record(k, "https://example.org/"+k, handlev.StatusNone))
	}
	c := mustNew(t, Config{Source: src, Entries: 16, Shards: 4, Alt: alt})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				n := (i*7 + g) % keys
				full := fmt.Sprintf("21.T11148/SVC/K%03d/X", n)
				key := full
				if i%2 == 1 {
					key = strings.Replace(full, "/SVC/", "/", 1)
				}
				switch {
				case g == 0 && i%50 == 0:
					c.InvalidateAll()
				case g == 1 && i%3 == 0:
					c.Invalidate(key)
				default:
					e, err := c.Get([]byte(key))
					if err != nil || !e.Found || e.Key != full || url(e) != "https://example.org/"+full {
						t.Errorf("Get(%q) = %+v, %v", key, e, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if c.Len() > c.capacity {
		t.Errorf("Len() = %d > capacity = %d", c.Len(), c.capacity)
	}
}

// TestLazyEncodings: JSONBytes and WireBytes are built once, by whichever
// concurrent first caller gets there, and every caller sees that one slice;
// afterwards a hit and both encodings allocate nothing.
func TestLazyEncodings(t *testing.T) {
	src := newSource()
	rec := record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusNone)
	src.put(fullKey, rec)
	c := mustNew(t, Config{Source: src})
	e := mustGet(t, c, fullKey)

	const n = 8
	var wg sync.WaitGroup
	jsons, wires := make([][]byte, n), make([][]byte, n)
	for i := range n {
		wg.Go(func() { jsons[i], wires[i] = e.JSONBytes(), e.WireBytes() })
	}
	wg.Wait()
	for i := range n {
		if unsafe.SliceData(jsons[i]) != unsafe.SliceData(jsons[0]) || unsafe.SliceData(wires[i]) != unsafe.SliceData(wires[0]) {
			t.Fatalf("caller %d got its own encoding, want the one built once", i)
		}
	}
	if want := handlev.AppendValuesJSON(nil, rec.Values); !bytes.Equal(jsons[0], want) {
		t.Errorf("JSONBytes() = %s, want %s", jsons[0], want)
	}
	if want := handlev.AppendValues(nil, rec.Values); !bytes.Equal(wires[0], want) {
		t.Errorf("WireBytes() = %x, want %x", wires[0], want)
	}
	key := []byte(fullKey)
	allocs := testing.AllocsPerRun(1000, func() {
		e, _ := c.Get(key)
		if len(e.JSONBytes()) == 0 || len(e.WireBytes()) == 0 {
			t.Fatal("empty encoding")
		}
	})
	if allocs != 0 {
		t.Errorf("hit with both encodings allocates %v times, want 0", allocs)
	}
}

// TestEntryPublic: an entry carries the record's public view, decided once when
// it is built, and its encodings hold only what the public may see: a value
// without public read is in Record but neither in Public nor in JSONBytes or
// WireBytes.
func TestEntryPublic(t *testing.T) {
	src := newSource()
	rec := record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusRegistered)
	secret := handlev.Value{Index: 50, Type: handlev.TypeURL, Data: []byte("https://example.org/PRIVATE-MARKER"),
		Perm: handlev.PermAdminRead | handlev.PermAdminWrite}
	rec.Values = append([]handlev.Value{secret}, rec.Values...)
	src.put(fullKey, rec)
	c := mustNew(t, Config{Source: src})
	e := mustGet(t, c, fullKey)

	if want := handlev.NewPublic(&rec); e.Public.Status != want.Status || len(e.Public.Values) != len(want.Values) || e.Public.Target != want.Target {
		t.Errorf("Public = %+v, want %+v", e.Public, want)
	}
	if len(e.Record.Values) != len(rec.Values) {
		t.Errorf("Record has %d values, want the whole record's %d", len(e.Record.Values), len(rec.Values))
	}
	for _, enc := range [][]byte{e.JSONBytes(), e.WireBytes()} {
		if bytes.Contains(enc, []byte("PRIVATE-MARKER")) {
			t.Errorf("encoding carries the private value: %q", enc)
		}
	}
	if want := handlev.AppendValuesJSON(nil, rec.Values[1:]); !bytes.Equal(e.JSONBytes(), want) {
		t.Errorf("JSONBytes() = %s, want the public values %s", e.JSONBytes(), want)
	}
	if want := handlev.AppendValues(nil, rec.Values[1:]); !bytes.Equal(e.WireBytes(), want) {
		t.Errorf("WireBytes() = %x, want the public values %x", e.WireBytes(), want)
	}
	if tv := e.Public.TargetValue(); tv == nil || string(tv.Data) != "https://example.org/a" {
		t.Errorf("target = %v, want the public URL", tv)
	}
	if neg := mustGet(t, c, "21.T11148/NOPE"); neg.Found || neg.Public.TargetValue() != nil {
		t.Errorf("negative entry: Found %v, target %v", neg.Found, neg.Public.TargetValue())
	}
}
