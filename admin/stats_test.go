package admin

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/stats"
)

// Stats and DayCount are the statistics reply (stats.Reply), as the route
// sends it.
type (
	Stats    = stats.Reply
	DayCount = stats.DayCount
)

// newStats is the statistics feature over c's database, namer and clock,
// with sc's counter and settings, its routes registered in c.
func newStats(c *Config, sc stats.Config) *stats.Service {
	sc.DB, sc.Namer, sc.Now = c.DB, c.Namer, c.Now
	svc := stats.New(sc)
	c.Routes = svc.Routes()
	return svc
}

func TestResolutionStats(t *testing.T) {
	counter := cache.NewCounter(0)
	day := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
	now := day
	var svc *stats.Service
	e := newEnv(t, func(c *Config) {
		c.Now = func() time.Time { return now }
		svc = newStats(c, stats.Config{Counter: counter})
	})
	a := e.snaa(map[string]any{"namespace": "STAT", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "OTHER"})
	coll := "/pid/v2/handles/21.12345/STAT/"
	for _, id := range []string{"s1", "s2"} {
		e.want(e.do("PUT", coll+id, a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	}
	var other Identifier
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/OTHER/", b.Key.Secret, validPayload()), 201).json(t, &other)
	key := func(h string) string {
		k, _, err := e.namer.Key(h)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	count := func(h string, n int) {
		for range n {
			counter.Count(key(h))
		}
	}
	count("21.12345/svc/STAT/S1", 5)
	count("21.12345/svc/STAT/S2", 2)
	count(other.Handle, 7)
	counter.Count("0.NA/21.12345") // not an SNAA identifier: not counted
	if err := svc.Flush(); err != nil {
		t.Fatal(err)
	}
	now = day.Add(2 * time.Hour) // the next day
	count("21.12345/svc/STAT/S1", 1)
	if err := svc.Flush(); err != nil { // a node's shutdown flushes what is pending
		t.Fatal(err)
	}

	get := func(path string) Stats {
		t.Helper()
		r := e.want(e.do("GET", path, a.Key.Secret, nil), 200)
		e.conform("Stats", r.Body)
		var s Stats
		r.json(t, &s)
		return s
	}
	cases := []struct {
		name, path string
		total      uint64
		days       []DayCount
	}{
		{"namespace", coll + "stats", 8, []DayCount{{Date: "2026-11-20", Count: 7}, {Date: "2026-11-21", Count: 1}}},
		{"identifier", coll + "s1/stats", 6, []DayCount{{Date: "2026-11-20", Count: 5}, {Date: "2026-11-21", Count: 1}}},
		{"identifier, short case", coll + "S2/stats", 2, []DayCount{{Date: "2026-11-20", Count: 2}}},
		{"one day", coll + "s1/stats?from=2026-11-21&to=2026-11-21", 1, []DayCount{{Date: "2026-11-21", Count: 1}}},
		{"before", coll + "stats?from=2026-01-01&to=2026-11-19", 0, nil},
	}
	for _, c := range cases {
		s := get(c.path)
		if s.Total != c.total || len(s.Days) != len(c.days) {
			t.Errorf("%s: %+v, want total %d days %v", c.name, s, c.total, c.days)
			continue
		}
		for i := range c.days {
			if s.Days[i] != c.days[i] {
				t.Errorf("%s: day %d = %v, want %v", c.name, i, s.Days[i], c.days[i])
			}
		}
	}
	if s := get(coll + "s1/stats"); s.Handle != "21.12345/svc/STAT/S1" || s.Namespace != "STAT" {
		t.Errorf("identifier stats names %+v", s)
	}
	e.want(e.do("GET", coll+"nope/stats", a.Key.Secret, nil), 404)
	e.want(e.do("GET", coll+"stats?from=yesterday", a.Key.Secret, nil), 400)
	e.want(e.do("GET", "/pid/v2/handles/21.12345/OTHER/stats", a.Key.Secret, nil), 403)
	// "stats" is a route, never a custom id.
	e.want(e.do("PUT", coll+"stats", a.Key.Secret, validPayload(), "If-None-Match", "*"), 422)
	e.want(e.do("PUT", coll+"x/stats", a.Key.Secret, validPayload(), "If-None-Match", "*"), 422)
}

// TestResolutionStatsRetention: with a retention of 2 days, RunStatsRetention
// deletes an identifier's counts of the days before yesterday at once, the
// identifier route says from when it keeps them, and the namespace's counts
// stay.
func TestResolutionStatsRetention(t *testing.T) {
	counter := cache.NewCounter(0)
	var mu sync.Mutex
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var svc *stats.Service
	e := newEnv(t, func(c *Config) {
		c.Now = clock
		svc = newStats(c, stats.Config{Counter: counter, Retention: 2})
	})
	a := e.snaa(map[string]any{"namespace": "STAT", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/STAT/"
	e.want(e.do("PUT", coll+"s1", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	k, _, err := e.namer.Key("21.12345/svc/STAT/S1")
	if err != nil {
		t.Fatal(err)
	}
	for d := 18; d <= 20; d++ {
		mu.Lock()
		now = time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC)
		mu.Unlock()
		for range d - 17 {
			counter.Count(k)
		}
		if err := svc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunRetention(ctx)
	}()
	get := func(path string) Stats {
		t.Helper()
		r := e.want(e.do("GET", path+"?from=2026-11-01&to=2026-11-30", a.Key.Secret, nil), 200)
		e.conform("Stats", r.Body)
		var s Stats
		r.json(t, &s)
		return s
	}
	// The first run starts at once; wait for it to delete November 18.
	var s Stats
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s = get(coll + "s1/stats"); len(s.Days) < 3 {
			break
		}
	}
	cancel()
	<-done
	if fmt.Sprint(s.Days) != "[{2026-11-19 2} {2026-11-20 3}]" || s.Total != 5 || s.RetainedFrom != "2026-11-19" {
		t.Errorf("identifier after expiry: %+v, want November 19 and 20 kept from 2026-11-19", s)
	}
	if s := get(coll + "stats"); fmt.Sprint(s.Days) != "[{2026-11-18 1} {2026-11-19 2} {2026-11-20 3}]" || s.RetainedFrom != "" {
		t.Errorf("namespace after expiry: %+v, want every day", s)
	}
}

// TestResolutionStatsEarlyFlush: a statistics table far smaller than the
// identifiers resolved between two intervals stays within its bound, and
// every resolution still reaches the database: RunStats flushes whenever the
// table asks, and a full table waits for that flush instead of dropping.
func TestResolutionStatsEarlyFlush(t *testing.T) {
	const limit = 96 << 10
	counter := cache.NewCounter(limit)
	var svc *stats.Service
	e := newEnv(t, func(c *Config) {
		// only early flushes during the test
		svc = newStats(c, stats.Config{Counter: counter, Interval: time.Hour})
	})
	a := e.snaa(map[string]any{"namespace": "EARLY"})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		svc.Run(ctx)
	}()
	for counter.Usage().Flushers == 0 {
		runtime.Gosched() // until RunStats has attached
	}
	const workers, per, ids = 4, 5000, 12000
	var over atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id := (i*workers + w) * 7919 % ids
				k, _, err := e.namer.Key(fmt.Sprintf("21.12345/svc/EARLY/ID%06d", id))
				if err != nil {
					t.Error(err)
					return
				}
				counter.Count(k)
				if b := counter.Usage().Bytes; b > limit {
					over.Store(b)
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	<-stopped
	if err := svc.Flush(); err != nil {
		t.Fatal(err)
	}
	if b := over.Load(); b != 0 {
		t.Errorf("the statistics table held %d bytes, bound %d", b, limit)
	}
	if u := counter.Usage(); u.EarlyAsked == 0 || counter.Dropped() != 0 {
		t.Errorf("early flushes asked %d, dropped %d: want some and none", u.EarlyAsked, counter.Dropped())
	}
	var s Stats
	e.want(e.do("GET", "/pid/v2/handles/21.12345/EARLY/stats", a.Key.Secret, nil), 200).json(t, &s)
	if s.Total != workers*per {
		t.Errorf("namespace total %d, want %d resolutions", s.Total, workers*per)
	}
}
