package e2e

import (
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
}

// TestGracefulShutdown runs steady resolution load (keep-alive clients on the
// resolver, a few on the admin API), sends SIGTERM and checks that no request
// fails: every request in flight at the signal is answered with its expected
// status, later requests may only be refused once the listener is closed, and
// the node exits 0 (SPEC §9: stop accepting, finish in-flight requests).
//
// A request started before the signal must never be refused: the node drains
// first (--shutdown-delay), answering with Connection: close while it still
// accepts, so no client is left writing into an idle connection that the
// shutdown closes (which net/http would retry against a closed listener).
func TestGracefulShutdown(t *testing.T) {
	runs := 2
	if s := os.Getenv("PIDNODE_SHUTDOWN_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	var total, inFlight, refused int64
	for run := 1; run <= runs; run++ {
		c := shutdownRun(t, run)
		total += c.total.Load()
		inFlight += c.inFlight.Load()
		refused += c.refused.Load()
		if t.Failed() {
			break
		}
	}
	summary := fmt.Sprintf("graceful shutdown: %d SIGTERMs under load, %d requests answered, %d in flight at SIGTERM all answered, "+
		"0 failed; %d later requests refused or dropped by the closing listener",
		runs, total, inFlight, refused)
	if t.Failed() {
		summary = "FAILED " + summary
	}
	t.Log(summary)
	fmt.Println("SUMMARY " + summary)
}

func shutdownRun(t *testing.T, run int) *shutdownCounts {
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
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
	time.Sleep(700*time.Millisecond + rand.N(300*time.Millisecond))
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
	if warm < 100 {
		t.Errorf("run %d: only %d requests before SIGTERM; the load did not run", run, warm)
	}
	t.Logf("run %d: %d answered (%d before SIGTERM), %d in flight at SIGTERM and answered, %d failed, %d refused after",
		run, c.total.Load(), warm, c.inFlight.Load(), c.failed.Load(), c.refused.Load())
	return c
}

func when(before bool) string {
	if before {
		return "before"
	}
	return "after"
}
