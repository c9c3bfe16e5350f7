package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// shutdownCounts is what the load generator saw around one SIGTERM.
type shutdownCounts struct {
	total    atomic.Int64 // requests answered with the expected status
	inFlight atomic.Int64 // started before SIGTERM, finished after it, answered
	refused  atomic.Int64 // started after SIGTERM, refused or dropped by the closing listener
	failed   atomic.Int64 // anything else: a failure

	writesAcked    atomic.Int64 // admin creates and updates answered 201/200
	writesInFlight atomic.Int64 // of those, started before SIGTERM and answered after it
	writesRefused  atomic.Int64 // started after SIGTERM, refused (connection refused, reset, dropped, 503)
}

// TestGracefulShutdown runs steady resolution load (keep-alive clients on the
// resolver, a few on the admin API) and four admin writers (creates under
// custom ids and If-Match updates), sends SIGTERM and checks that no request
// fails: every request in flight at the signal is answered with its expected
// status, later requests may only be refused once the listener is closed, and
// the node exits 0 (docs/product.md §9: stop accepting, finish in-flight
// requests). Writes must have been in flight at the signal (counted). A new
// node on the same data directory then finds every acknowledged write with
// exactly its acknowledged state, no refused update applied and no refused
// create present.
//
// A request started before the signal must never be refused: the node drains
// first (--shutdown-delay), answering with Connection: close while it still
// accepts, so no client is left writing into an idle connection that the
// shutdown closes (which net/http would retry against a closed listener).
func TestGracefulShutdown(t *testing.T) {
	runs := 2
	if s := os.Getenv("PIDNODE_SHUTDOWN_RUNS"); s != "" {
		var err error
		if runs, err = strconv.Atoi(s); err != nil || runs < 1 {
			t.Fatalf("PIDNODE_SHUTDOWN_RUNS=%q: want a positive integer", s)
		}
	}
	var total, inFlight, refused, wAcked, wInFlight, wRefused int64
	for run := 1; run <= runs; run++ {
		c := shutdownRun(t, run)
		total += c.total.Load()
		inFlight += c.inFlight.Load()
		refused += c.refused.Load()
		wAcked += c.writesAcked.Load()
		wInFlight += c.writesInFlight.Load()
		wRefused += c.writesRefused.Load()
		if t.Failed() {
			break
		}
	}
	summary := fmt.Sprintf("graceful shutdown: %d SIGTERMs under load, %d requests answered, %d in flight at SIGTERM all answered, "+
		"0 failed; %d later requests refused or dropped by the closing listener; admin writes: %d acknowledged and found after restart "+
		"(%d in flight at SIGTERM), %d refused and found absent or unchanged",
		runs, total, inFlight, refused, wAcked, wInFlight, wRefused)
	if t.Failed() {
		summary = "FAILED " + summary
	}
	t.Log(summary)
	fmt.Println("SUMMARY " + summary)
}

func shutdownRun(t *testing.T, run int) *shutdownCounts {
	// The writers use one key faster than its default rate allows: what is
	// under test is the drain, not the per-key rate limit.
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo", "--admin-rate", "0")
	type target struct {
		url    string
		status int
	}
	r, a := n.resolverURL(), n.adminURL()
	resolverTargets := []target{
		{r + "/" + n.Handles[0], http.StatusFound},
		{r + "/" + n.Handles[1] + "?noredirect", http.StatusOK},
		{r + "/api/handles/" + n.Handles[2], http.StatusOK},
		{r + "/" + n.Handles[4], http.StatusGone},
		{r + "/21.12345/svc/DMO/NOPE", http.StatusNotFound},
		{r + "/", http.StatusOK},
	}
	adminTargets := []target{
		{a + "/healthz", http.StatusOK},
		{a + "/pid/v2/handles/21.12345/DMO/" + n.Handles[0][len("21.12345/svc/DMO/"):], http.StatusOK},
	}
	var sigAt atomic.Int64 // unix nanos when SIGTERM was sent, 0 before
	c := &shutdownCounts{}
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		c.failed.Add(1)
		errMu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
		errMu.Unlock()
	}
	load := func(targets []target) {
		defer wg.Done()
		cl := &http.Client{
			Timeout:       20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport:     &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true},
		}
		defer cl.CloseIdleConnections()
		for {
			select {
			case <-n.done:
				return
			default:
			}
			tg := targets[rand.N(len(targets))]
			start := time.Now().UnixNano()
			s := sigAt.Load()
			before := s == 0
			var hdr []string
			if tg.url[:len(a)] == a {
				hdr = []string{"Authorization", "Bearer " + n.Key}
			}
			rep, err := do(cl, "GET", tg.url, nil, hdr...)
			end := time.Now()
			switch {
			case err == nil && rep.Status == tg.status:
				c.total.Add(1)
				if s2 := sigAt.Load(); before && s2 != 0 && end.UnixNano() > s2 {
					c.inFlight.Add(1)
				}
			case err == nil:
				fail("GET %s = %d, want %d (started %s SIGTERM)", tg.url, rep.Status, tg.status, when(before))
			case !before && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)):
				// Started after the signal: once the listener closes, a
				// connection still in the kernel's accept backlog is dropped
				// (EOF or reset) and a new one is refused.
				c.refused.Add(1)
				time.Sleep(5 * time.Millisecond)
			default:
				fail("GET %s: %v (started %s SIGTERM, %v before the signal)", tg.url, err, when(before), time.Duration(sigAt.Load()-start))
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	for range 6 {
		wg.Add(1)
		go load(resolverTargets)
	}
	for range 2 {
		wg.Add(1)
		go load(adminTargets)
	}
	const writers = 4
	ledgers := make([]*shutdownLedger, writers)
	for w := range writers {
		ledgers[w] = &shutdownLedger{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			shutdownWriter(n, run, w, ledgers[w], &sigAt, c, fail)
		}()
	}
	// Warm up by counts, not by speed: at least 100 answered reads and a
	// write acknowledged by every writer (each has then identifiers to
	// update), and a random moment after that.
	warmDeadline := time.Now().Add(30 * time.Second)
	for c.total.Load() < 100 || !allWrote(ledgers) {
		if time.Now().After(warmDeadline) || c.failed.Load() > 0 {
			errMu.Lock()
			defer errMu.Unlock()
			t.Fatalf("run %d: the load did not start: %d reads answered, %d writes acknowledged, %d failed after 30 s: %q",
				run, c.total.Load(), c.writesAcked.Load(), c.failed.Load(), errs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(rand.N(300 * time.Millisecond))
	warm := c.total.Load()
	sigAt.Store(time.Now().UnixNano())
	code := n.stop(30 * time.Second)
	wg.Wait()
	if code != 0 {
		t.Errorf("run %d: exit code %d after SIGTERM, want 0\nstderr:\n%s", run, code, n.stderr.String())
	}
	for _, e := range errs {
		t.Errorf("run %d: %s", run, e)
	}
	if c.writesInFlight.Load() == 0 {
		t.Errorf("run %d: no admin write was in flight at SIGTERM (%d acknowledged in all): the test did not test writes at the signal",
			run, c.writesAcked.Load())
	}
	t.Logf("run %d: %d answered (%d before SIGTERM), %d in flight at SIGTERM and answered, %d failed, %d refused after; "+
		"admin writes: %d acknowledged, %d of them in flight at SIGTERM, %d refused after",
		run, c.total.Load(), warm, c.inFlight.Load(), c.failed.Load(), c.refused.Load(),
		c.writesAcked.Load(), c.writesInFlight.Load(), c.writesRefused.Load())
	if !t.Failed() {
		verifyAfterShutdown(t, n.data, n.Key, run, ledgers)
	}
	return c
}

func when(before bool) string {
	if before {
		return "before"
	}
	return "after"
}

// shutdownLedger is what one writer of a shutdown run did: identifiers whose
// create was acknowledged, with the last acknowledged state, and custom ids
// whose create was refused.
type shutdownLedger struct {
	mu      sync.Mutex // the writer appends, the warm-up reads
	acked   []*entry
	refused []string
}

// allWrote reports whether every writer has had a write acknowledged.
func allWrote(ls []*shutdownLedger) bool {
	for _, l := range ls {
		l.mu.Lock()
		n := len(l.acked)
		l.mu.Unlock()
		if n == 0 {
			return false
		}
	}
	return true
}

// shutdownWriter creates identifiers under custom ids and updates its own
// (If-Match the acknowledged version) through the admin API until the node
// exits. A write started before the signal must be acknowledged; one started
// after it may instead be refused (connection refused, reset or dropped by the
// closing listener, or 503), and is then recorded as one that must not be
// found after the restart.
func shutdownWriter(n *node, run, w int, led *shutdownLedger, sigAt *atomic.Int64, c *shutdownCounts, fail func(string, ...any)) {
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	defer cl.CloseIdleConnections()
	for i := 0; ; i++ {
		select {
		case <-n.done:
			return
		default:
		}
		label := fmt.Sprintf("shutdown run %d writer %d write %d", run, w, i)
		url := fmt.Sprintf("https://example.org/shutdown/r%d/w%d/%d", run, w, i)
		create := len(led.acked) == 0 || rand.N(3) == 0
		var e *entry
		var next state
		var method, id string
		var body []byte
		var hdr []string
		if create {
			id = fmt.Sprintf("SD.R%d.W%d.N%d", run, w, i)
			method, body, hdr = "PUT", payload(url, "REGISTERED", resourceInfo(label, "shutdown test")), append(auth(n.Key), "If-None-Match", "*")
		} else {
			e = led.acked[rand.N(len(led.acked))]
			id = e.id
			var meta map[string]any
			json.Unmarshal([]byte(e.acked.meta), &meta)
			var ri map[string]any
			rb, _ := json.Marshal(resourceInfo(label, "shutdown test"))
			json.Unmarshal(rb, &ri)
			meta["resource_info"] = ri
			next = state{e.acked.version + 1, url, label, canonical(meta)}
			body, _ = json.Marshal(map[string]any{"url": url, "metadata": map[string]any{"resource_info": ri}})
			method, hdr = "PUT", append(auth(n.Key), "If-Match", etag(e.acked.version))
		}
		want := http.StatusOK
		if create {
			want = http.StatusCreated
		}
		start := time.Now().UnixNano()
		before := sigAt.Load() == 0
		rep, err := do(cl, method, n.adminURL()+testColl+id, body, hdr...)
		end := time.Now().UnixNano()
		refused := !before && (err != nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)) ||
			err == nil && rep.Status == http.StatusServiceUnavailable)
		switch {
		case err == nil && rep.Status == want:
			var got identifier
			if err := json.Unmarshal(rep.Body, &got); err != nil {
				fail("%s %s reply: %v: %s", method, id, err, rep.Body)
				return
			}
			st := state{got.Version, got.URL, labelOf(got.Metadata), canonical(got.Metadata)}
			if create {
				if got.ID != id || st.url != url || st.label != label || st.version == 0 {
					fail("create %s: the reply does not echo the write: %s", id, rep.Body)
					return
				}
				led.mu.Lock()
				led.acked = append(led.acked, &entry{id: id, handle: got.Handle, acked: st})
				led.mu.Unlock()
			} else {
				if st != next {
					fail("update %s: the reply does not echo the write:\n got %+v\nwant %+v", id, st, next)
					return
				}
				e.acked = st
			}
			c.writesAcked.Add(1)
			if s := sigAt.Load(); before && s != 0 && end > s {
				c.writesInFlight.Add(1)
			}
		case refused:
			// An update refused leaves the acknowledged state, which the
			// check after the restart compares exactly.
			if create {
				led.mu.Lock()
				led.refused = append(led.refused, id)
				led.mu.Unlock()
			}
			c.writesRefused.Add(1)
			time.Sleep(5 * time.Millisecond)
		case err != nil:
			fail("%s %s: %v (started %s SIGTERM, %v before the signal)", method, id, err, when(before), time.Duration(sigAt.Load()-start))
			return
		default:
			fail("%s %s = %d %s, want %d (started %s SIGTERM)", method, id, rep.Status, rep.Body, want, when(before))
			return
		}
	}
}

// verifyAfterShutdown reopens the data directory with a new node and checks
// every write of the run: an acknowledged identifier has exactly its last
// acknowledged state (version, URL and the whole metadata, in the admin API
// and on the public /api/handles), so no refused update was applied and
// none is half-written; a refused create is absent.
func verifyAfterShutdown(t *testing.T, data, key string, run int, ledgers []*shutdownLedger) {
	t.Helper()
	n := startNode(t, data, "--admin-rate", "0") // it reads back every write with one key
	cl := httpClient(10 * time.Second)
	var present, absent int
	for _, led := range ledgers {
		for _, e := range led.acked {
			r, err := do(cl, "GET", n.adminURL()+testColl+e.id, nil, "Authorization", "Bearer "+key)
			if err != nil {
				t.Fatalf("run %d: GET %s after restart: %v", run, e.id, err)
			}
			if r.Status != http.StatusOK {
				t.Errorf("run %d: acknowledged %s lost after SIGTERM: GET = %d %s", run, e.id, r.Status, r.Body)
				continue
			}
			var id identifier
			if err := json.Unmarshal(r.Body, &id); err != nil {
				t.Fatal(err)
			}
			if got := (state{id.Version, id.URL, labelOf(id.Metadata), canonical(id.Metadata)}); got != e.acked {
				t.Errorf("run %d: %s after restart:\n got %+v\nwant %+v (the last acknowledged write)", run, e.id, got, e.acked)
				continue
			}
			r, err = do(cl, "GET", n.resolverURL()+"/api/handles/"+e.handle, nil)
			if err != nil {
				t.Fatalf("run %d: GET /api/handles/%s: %v", run, e.handle, err)
			}
			if url, label := handleJSONState(t, r.Body); r.Status != http.StatusOK || url != e.acked.url || label != e.acked.label {
				t.Errorf("run %d: /api/handles/%s = %d url %q label %q, want url %q label %q", run, e.handle, r.Status, url, label, e.acked.url, e.acked.label)
			}
			present++
		}
		for _, id := range led.refused {
			r, err := do(cl, "GET", n.adminURL()+testColl+id, nil, "Authorization", "Bearer "+key)
			if err != nil {
				t.Fatalf("run %d: GET %s after restart: %v", run, id, err)
			}
			if r.Status != http.StatusNotFound {
				t.Errorf("run %d: create of %s was refused at shutdown but GET after restart = %d %s", run, id, r.Status, r.Body)
			}
			absent++
		}
	}
	if code := n.stop(20 * time.Second); code != 0 {
		t.Errorf("run %d: SIGTERM of the restarted node: exit %d", run, code)
	}
	t.Logf("run %d: after restart %d acknowledged identifiers hold their last acknowledged state, %d refused creates are absent", run, present, absent)
}
