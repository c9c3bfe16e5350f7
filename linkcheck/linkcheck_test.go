package linkcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/outbound"
	"pidnode/registry"
	"pidnode/store"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

type env struct {
	db    *store.DB
	reg   *registry.Registry
	namer *handlev.Namer
	c     *Checker
}

// newEnv opens a database in t.TempDir() and a checker over it; cfg's
// Registry is filled in, and Allow is loopback unless noAllow.
func newEnv(t *testing.T, cfg Config, noAllow bool) *env {
	t.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry = reg
	if !noAllow {
		cfg.Allow = loopback
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, reg: reg, namer: namer, c: c}
}

// put stores a REGISTERED record of namespace NS with target url and
// variant URLs, and returns its storage key.
func (e *env) put(t *testing.T, ns, id, url string, variants ...string) string {
	t.Helper()
	display := e.namer.Full("21.12345", ns, id)
	key, _, err := e.namer.Key(display)
	if err != nil {
		t.Fatal(err)
	}
	vals := []handlev.Value{{Index: 1, Type: "URL", Data: []byte(url), Perm: handlev.PermDefault, TTL: 86400}}
	vals = append(vals, handlev.Value{Index: 11, Type: "STATUS", Data: []byte("REGISTERED"), Perm: handlev.PermDefault, TTL: 86400})
	if len(variants) > 0 {
		type rv struct {
			URL  string `json:"variant_url"`
			Type string `json:"media_type"`
		}
		var rvs []rv
		for _, v := range variants {
			rvs = append(rvs, rv{v, "text/turtle"})
		}
		b, _ := json.Marshal(map[string]any{"label": "x", "representation_variants": rvs})
		vals = append(vals, handlev.Value{Index: 14, Type: "RESOURCE", Data: b, Perm: handlev.PermDefault, TTL: 86400})
	}
	err = e.reg.Update(func(tx registry.Tx) error {
		old, ok, err := tx.Record(key)
		if err != nil {
			return err
		}
		v := uint64(1)
		if ok {
			v = old.Version + 1
		}
		return tx.PutRecord(key, &store.Stored{Record: handlev.Record{Handle: display, Values: vals}, Version: v})
	})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// serveOn starts h on addr (e.g. "127.0.0.2:0").
func serveOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func noWait(ctx context.Context) bool { return true }

// TestFetch: each kind of target against real local servers gets its
// status and error class; a refused HEAD is asked again with GET; a huge
// body is read only up to MaxBytes; a name resolving to loopback is refused
// without the allowance and checked with it.
func TestFetch(t *testing.T) {
	var bodyWritten atomic.Int64
	var headRefusedGets atomic.Int32
	mux := http.NewServeMux()
	for _, code := range []int{200, 404, 410, 500} {
		mux.HandleFunc(fmt.Sprintf("/s/%d", code), func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
	}
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			w.WriteHeader(200)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/nohead", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		headRefusedGets.Add(1)
		w.WriteHeader(200)
	})
	const huge = 64 << 20
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(huge))
		buf := make([]byte, 32<<10)
		for n := 0; n < huge; n += len(buf) {
			if _, err := w.Write(buf); err != nil {
				return
			}
			bodyWritten.Add(int64(len(buf)))
		}
	})
	var ua atomic.Value
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.UserAgent() + "|" + r.Header.Get("Cookie") + "|" + r.Header.Get("Authorization"))
	})
	srv := serveOn(t, "127.0.0.1:0", mux)
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	const maxBytes = 16 << 10
	e := newEnv(t, Config{Timeout: 500 * time.Millisecond, MaxBytes: maxBytes, UserAgent: "pidnode/test (+http://x; ops@example.org)"}, false)
	deny := newEnv(t, Config{Timeout: 500 * time.Millisecond}, true)
	cases := []struct {
		name   string
		c      *Checker
		url    string
		ok     bool
		status int
		class  string
		final  string
	}{
		{"200", e.c, srv.URL + "/s/200", true, 200, "", srv.URL + "/s/200"},
		{"404", e.c, srv.URL + "/s/404", false, 404, ClassHTTP, ""},
		{"410", e.c, srv.URL + "/s/410", false, 410, ClassHTTP, ""},
		{"500", e.c, srv.URL + "/s/500", false, 500, ClassHTTP, ""},
		{"redirect chain", e.c, srv.URL + "/chain/4", true, 200, "", srv.URL + "/chain/0"},
		{"redirect loop", e.c, srv.URL + "/loop", false, 0, outbound.ClassRedirects, ""},
		{"slow", e.c, srv.URL + "/slow", false, 0, outbound.ClassTimeout, ""},
		{"HEAD refused", e.c, srv.URL + "/nohead", true, 200, "", ""},
		{"huge body", e.c, srv.URL + "/huge", true, 200, "", ""},
		{"localhost denied", deny.c, fmt.Sprintf("http://localhost:%d/s/200", port), false, 0, outbound.ClassDenied, ""},
		{"localhost allowed", e.c, fmt.Sprintf("http://localhost:%d/s/200", port), true, 200, "", ""},
		{"loopback address denied", deny.c, srv.URL + "/s/200", false, 0, outbound.ClassDenied, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			o := tc.c.fetch(context.Background(), tc.url, noWait)
			if o.ok != tc.ok || o.status != tc.status || o.class != tc.class {
				t.Errorf("fetch(%s) = ok %v status %d class %q, want ok %v status %d class %q", tc.url, o.ok, o.status, o.class, tc.ok, tc.status, tc.class)
			}
			if tc.final != "" && o.finalURL != tc.final {
				t.Errorf("fetch(%s) final URL %q, want %q", tc.url, o.finalURL, tc.final)
			}
			if tc.name == "slow" && time.Since(start) > 4*time.Second {
				t.Errorf("the slow server was waited for %v: the timeout did not cut it", time.Since(start))
			}
		})
	}
	if headRefusedGets.Load() != 1 {
		t.Errorf("the server refusing HEAD got %d GETs, want 1", headRefusedGets.Load())
	}
	o := e.c.fetch(context.Background(), srv.URL+"/huge", noWait)
	if o.bytes > maxBytes {
		t.Errorf("read %d body bytes of the huge body, want at most %d", o.bytes, maxBytes)
	}
	if w := bodyWritten.Load(); w >= huge {
		t.Errorf("the server wrote the whole huge body (%d bytes); the check should have closed the connection", w)
	}
	req := e.c.fetch(context.Background(), "http://user:pw@"+strings.TrimPrefix(srv.URL, "http://")+"/ua", noWait)
	if !req.ok {
		t.Fatalf("fetch /ua: %+v", req)
	}
	if got := ua.Load().(string); got != "pidnode/test (+http://x; ops@example.org)||" {
		t.Errorf("the server saw User-Agent|Cookie|Authorization %q, want the configured User-Agent and no credentials", got)
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time      { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) add(d time.Duration) { f.mu.Lock(); f.t = f.t.Add(d); f.mu.Unlock() }

// TestStates: a URL is failing at its first failure, broken only after
// Failures consecutive failures spanning MinAge (injected clock), audited
// as linkcheck.broken in the namespace's feed, recovering (audited
// linkcheck.recovered) at its first success, ok at the next; the namespace
// listing and the broken count follow.
func TestStates(t *testing.T) {
	var up atomic.Bool
	srv := serveOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	clk := &fakeClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, Config{Now: clk.now, HostDelay: -1}, false)
	key := e.put(t, "NS", "A1", srv.URL+"/a")
	nsp, _ := e.reg.NamespaceKey("21.12345", "NS")
	check := func(wantState string, wantFailures int) registry.LinkResult {
		t.Helper()
		rs, err := e.c.CheckRecord(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].State != wantState || rs[0].Failures != wantFailures {
			t.Fatalf("at %s: results %+v, want one in state %s with %d failures", clk.now(), rs, wantState, wantFailures)
		}
		return rs[0]
	}
	listed := func() (states []string, broken uint64) {
		t.Helper()
		e.reg.View(func(tx registry.Tx) error {
			rs, _, err := namespaceResults(tx.Tx, nsp, nil, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				states = append(states, r.State)
			}
			broken = brokenCounts(tx.Tx)[nsp]
			return nil
		})
		return states, broken
	}
	feed := func() (actions []string) {
		t.Helper()
		e.reg.View(func(tx registry.Tx) error {
			es, err := tx.NamespaceAudit(nsp, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range es {
				actions = append(actions, a.Action)
			}
			return nil
		})
		return actions
	}

	up.Store(true)
	check(registry.LinkOK, 0)
	if s, _ := listed(); len(s) != 0 {
		t.Errorf("an ok URL is listed: %v", s)
	}
	up.Store(false)
	r := check(registry.LinkFailing, 1)
	if r.Status != 404 || r.Error != ClassHTTP || r.FirstFailure == nil || !r.FirstFailure.Equal(clk.now()) || r.Due == nil {
		t.Errorf("first failure: %+v", r)
	}
	clk.add(time.Hour)
	check(registry.LinkFailing, 2)
	clk.add(time.Hour)
	r = check(registry.LinkFailing, 3) // three failures, but within 2h: one bad night is not an alarm
	if want := r.FirstFailure.Add(DefaultMinAge); r.Due == nil || !r.Due.Equal(want) {
		t.Errorf("after the third failure within the minimum age, due %v, want %v", r.Due, want)
	}
	if s, b := listed(); len(s) != 1 || s[0] != registry.LinkFailing || b != 0 {
		t.Errorf("failing: listed %v, broken count %d", s, b)
	}
	if a := feed(); len(a) != 0 {
		t.Errorf("feed before broken: %v", a)
	}
	clk.add(46 * time.Hour)
	check(registry.LinkBroken, 4)
	if s, b := listed(); len(s) != 1 || s[0] != registry.LinkBroken || b != 1 {
		t.Errorf("broken: listed %v, broken count %d", s, b)
	}
	clk.add(24 * time.Hour)
	check(registry.LinkBroken, 5)
	up.Store(true)
	clk.add(time.Hour)
	check(registry.LinkRecovering, 0)
	if s, b := listed(); len(s) != 1 || s[0] != registry.LinkRecovering || b != 0 {
		t.Errorf("recovering: listed %v, broken count %d", s, b)
	}
	clk.add(time.Hour)
	check(registry.LinkOK, 0)
	if s, _ := listed(); len(s) != 0 {
		t.Errorf("ok again, still listed: %v", s)
	}
	if a := feed(); strings.Join(a, ",") != registry.ActLinkBroken+","+registry.ActLinkRecovered {
		t.Errorf("feed: %v, want one broken and one recovered", a)
	}
	// The history of the identifier shows them too, with before and after.
	e.reg.View(func(tx registry.Tx) error {
		es, _ := tx.HandleAudit(key)
		if len(es) != 2 || es[0].Actor != registry.ActorLinkcheck || es[0].After == nil || es[0].Before == nil {
			t.Errorf("history: %+v", es)
		}
		return nil
	})
}

// TestDroppedURLs: the results of URLs a record no longer has are dropped
// when it is checked again; a tombstoned record has none.
func TestDroppedURLs(t *testing.T) {
	srv := serveOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	e := newEnv(t, Config{HostDelay: -1}, false)
	key := e.put(t, "NS", "A1", srv.URL+"/a", srv.URL+"/ttl", srv.URL+"/a", "ftp://x/y")
	rs, err := e.c.CheckRecord(context.Background(), key)
	if err != nil || len(rs) != 2 {
		t.Fatalf("results %+v, %v; want the target and one variant (duplicates and non-http dropped)", rs, err)
	}
	e.put(t, "NS", "A1", srv.URL+"/b")
	rs, err = e.c.CheckRecord(context.Background(), key)
	if err != nil || len(rs) != 1 || rs[0].URL != srv.URL+"/b" || rs[0].Kind != "target" {
		t.Fatalf("after the update: %+v, %v", rs, err)
	}
}

// hostLog records one host's requests: how many run at once, and when
// each started and ended.
type hostLog struct {
	mu        sync.Mutex
	cur, peak int
	starts    []time.Time
	ends      []time.Time
}

func (h *hostLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.cur++
	h.peak = max(h.peak, h.cur)
	h.starts = append(h.starts, time.Now())
	h.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	h.mu.Lock()
	h.cur--
	h.ends = append(h.ends, time.Now())
	h.mu.Unlock()
}

// TestSweepPoliteness runs the checker over 24 records whose URLs are on
// two hosts (127.0.0.2 and 127.0.0.3) with a lap far shorter than the
// hosts' delays allow: each host sees one request at a time, each at least
// the delay after the previous one ended, while the two hosts are served
// in parallel; every URL gets a result, and the results of a record that
// is gone are dropped by the lap.
func TestSweepPoliteness(t *testing.T) {
	const delay = 40 * time.Millisecond
	hosts := []*hostLog{{}, {}}
	var srvs []*httptest.Server
	for i, h := range hosts {
		srvs = append(srvs, serveOn(t, fmt.Sprintf("127.0.0.%d:0", i+2), h))
	}
	e := newEnv(t, Config{Interval: 100 * time.Millisecond, HostDelay: delay, Concurrency: 4}, false)
	const n = 12
	for i := 0; i < n; i++ {
		e.put(t, "NS", fmt.Sprintf("R%02d", i), fmt.Sprintf("%s/t/%d", srvs[0].URL, i), fmt.Sprintf("%s/v/%d", srvs[1].URL, i))
	}
	// A result of a record that does not exist: the lap drops it.
	goneKey, _, _ := e.namer.Key(e.namer.Full("21.12345", "NS", "ZZ"))
	err := e.reg.Update(func(tx registry.Tx) error {
		return PutResult(tx.Tx, e.namer, goneKey, nil, &registry.LinkResult{Handle: "x", URL: "http://gone/", State: registry.LinkBroken})
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.c.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got int
		var gone bool
		e.reg.View(func(tx registry.Tx) error {
			c := tx.Bolt().Bucket(store.BucketLinkcheck).Cursor()
			for k, _ := c.First(); k != nil && k[0] < 0xF5; k, _ = c.Next() {
				got++
			}
			_, gone, _ = result(tx.Tx, goneKey, "http://gone/")
			gone = !gone
			return nil
		})
		if got == 2*n && gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d results, gone record's dropped: %v", got, gone)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	for i, h := range hosts {
		h.mu.Lock()
		if h.peak != 1 {
			t.Errorf("host %d: %d requests at once, want 1", i, h.peak)
		}
		if len(h.starts) < n {
			t.Errorf("host %d: %d requests, want at least %d", i, len(h.starts), n)
		}
		for j := 1; j < len(h.starts); j++ {
			if gap := h.starts[j].Sub(h.ends[j-1]); gap < delay {
				t.Errorf("host %d: request %d started %v after the previous ended, want at least %v", i, j, gap, delay)
			}
		}
		h.mu.Unlock()
	}
	// The broken count of the gone record's namespace went with it.
	e.reg.View(func(tx registry.Tx) error {
		if b := brokenCounts(tx.Tx); len(b) != 0 {
			t.Errorf("broken counts after the lap: %v", b)
		}
		return nil
	})
	var page strings.Builder
	page.Write(e.c.AppendMetrics(nil))
	if !strings.Contains(page.String(), `pidnode_linkcheck_checks_total{result="ok"}`) {
		t.Errorf("metrics lack the checks by result:\n%s", page.String())
	}
}

// TestDueRecheck: a failing URL whose recheck is due is checked by the
// running checker long before the sweep's turn would come (the sweep's
// spacing here is an hour), becomes broken, and its due entry goes.
func TestDueRecheck(t *testing.T) {
	var hits atomic.Int32
	srv := serveOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusGone)
	}))
	clk := &fakeClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, Config{Now: clk.now, Interval: time.Hour, HostDelay: -1, Failures: 2, MinAge: time.Hour}, false)
	e.c.dueEvery = 20 * time.Millisecond
	key := e.put(t, "NS", "D1", srv.URL+"/d")
	if _, err := e.c.CheckRecord(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Hour) // past the recheck's due time
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r registry.LinkResult
		var due int
		e.reg.View(func(tx registry.Tx) error {
			r, _, _ = result(tx.Tx, key, srv.URL+"/d")
			due = len(dueLinks(tx.Tx, clk.now().Add(1000*time.Hour), 10))
			return nil
		})
		if r.State == registry.LinkBroken && due == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %+v, %d due entries, %d requests", r, due, hits.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if hits.Load() != 2 {
		t.Errorf("the site got %d requests, want 2 (the first check and the recheck)", hits.Load())
	}
}

// TestNewRefusesNoRegistry: a Config without its registry is an error
// naming it, not a panic later.
func TestNewRefusesNoRegistry(t *testing.T) {
	_, err := New(Config{})
	var ce *ConfigError
	if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != "Registry" {
		t.Errorf("New(Config{}) = %v, want a *ConfigError for Registry", err)
	}
}
