package e2e

import (
	"errors"
	"fmt"
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
	total      atomic.Int64 // requests answered with the expected status
	inFlight   atomic.Int64 // started before SIGTERM, finished after it, answered
	refused    atomic.Int64 // started after SIGTERM, refused (listener closed)
	refusedPre atomic.Int64 // started before SIGTERM, refused on the transport's retry
	failed     atomic.Int64 // anything else: a failure
}

// TestGracefulShutdown runs steady resolution load (keep-alive clients on the
// resolver, a few on the admin API), sends SIGTERM and checks that no request
// fails: every request in flight at the signal is answered with its expected
// status, later requests may only be refused once the listener is closed, and
// the node exits 0 (SPEC §9: stop accepting, finish in-flight requests).
//
// A request written onto an idle keep-alive connection in the instant the
// server closes that idle connection is retried by net/http's transport
// (RFC 9112 §9.3.1, the request is idempotent) and the retry is refused
// because the listener is closed; that case is counted apart (refusedPre) and
// is the only error allowed for a request started before the signal.
func TestGracefulShutdown(t *testing.T) {
	runs := 2
	if s := os.Getenv("PIDNODE_SHUTDOWN_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	var total, inFlight, refused, refusedPre int64
	for run := 1; run <= runs; run++ {
		c := shutdownRun(t, run)
		total += c.total.Load()
		inFlight += c.inFlight.Load()
		refused += c.refused.Load()
		refusedPre += c.refusedPre.Load()
		if t.Failed() {
			break
		}
	}
	summary := fmt.Sprintf("graceful shutdown: %d SIGTERMs under load, %d requests answered, %d in flight at SIGTERM all answered, "+
		"0 failed; %d later requests refused by the closed listener, %d pre-SIGTERM requests refused on retry after an idle-connection close",
		runs, total, inFlight, refused, refusedPre)
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
	var errs, refusedPreURLs []string
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
			case errors.Is(err, syscall.ECONNREFUSED) && !before:
				c.refused.Add(1)
				time.Sleep(5 * time.Millisecond)
			case errors.Is(err, syscall.ECONNREFUSED) && sigAt.Load() != 0:
				c.refusedPre.Add(1)
				errMu.Lock()
				if len(refusedPreURLs) < 5 {
					refusedPreURLs = append(refusedPreURLs, tg.url)
				}
				errMu.Unlock()
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
	t.Logf("run %d: %d answered (%d before SIGTERM), %d in flight at SIGTERM and answered, %d failed, %d refused after, %d pre-SIGTERM refused on retry",
		run, c.total.Load(), warm, c.inFlight.Load(), c.failed.Load(), c.refused.Load(), c.refusedPre.Load())
	if len(refusedPreURLs) > 0 {
		t.Logf("run %d: pre-SIGTERM requests refused on retry, e.g. %q", run, refusedPreURLs)
	}
	return c
}

func when(before bool) string {
	if before {
		return "before"
	}
	return "after"
}
