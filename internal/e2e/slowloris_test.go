package e2e

import (
	"bufio"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/resolver"
)

// slowConn is one slowloris connection: it sends a request line and then one
// header line per second, never finishing the headers.
type slowConn struct {
	opened      time.Time    // just before the dial: the server's timer cannot start earlier
	closedAfter atomic.Int64 // nanoseconds after opened when the server closed it (0: still open)
	gaveUp      atomic.Bool  // our own read deadline ended the wait, not the server
	status      atomic.Value // status line the server sent before closing, if any
}

func slowloris(t *testing.T, addr string, n int, opening string, stop <-chan struct{}) []*slowConn {
	t.Helper()
	conns := make([]*slowConn, n)
	var wg sync.WaitGroup
	for i := range conns {
		sc := &slowConn{opened: time.Now()}
		conns[i] = sc
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("slow conn %d: %v", i, err)
		}
		if _, err := c.Write([]byte(opening)); err != nil {
			t.Fatalf("slow conn %d: %v", i, err)
		}
		wg.Add(2)
		done := make(chan struct{})
		go func() { // reader: notes when the server gives up on us
			defer wg.Done()
			defer close(done)
			c.SetReadDeadline(time.Now().Add(slowReadLimit))
			line, err := bufio.NewReader(c).ReadString('\n')
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				sc.gaveUp.Store(true)
			}
			if err == nil || line != "" {
				sc.status.Store(strings.TrimSpace(line))
			}
			sc.closedAfter.Store(int64(time.Since(sc.opened)))
		}()
		go func() { // trickler
			defer wg.Done()
			defer c.Close()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte("X-Slow: 1\r\n")); err != nil {
						<-done
						return
					}
				}
			}
		}()
	}
	t.Cleanup(wg.Wait)
	return conns
}

// The listeners' header limits, as the node configures them: the admin
// http.Server's ReadHeaderTimeout (cmd/pidnode) and the resolver's ReadTimeout.
const (
	adminHeaderLimit  = 5 * time.Second
	resolverReadLimit = resolver.DefaultReadTimeout
	// slowReadLimit is the slow clients' own read deadline: past the latest
	// close the checks accept.
	slowReadLimit = 2*resolverReadLimit + 10*time.Second
)

// openCount is how many of conns the server has not closed yet.
func openCount(conns []*slowConn) int {
	open := 0
	for _, c := range conns {
		if c.closedAfter.Load() == 0 {
			open++
		}
	}
	return open
}

// TestSlowloris opens 200 slow connections to each HTTP listener (and a few
// that use bare LF line ends, which fasthttp does not accept as line ends):
// ordinary clients must still get answers while they are open, and the
// server must drop every slow connection after its header timeout (resolver
// ReadTimeout 10 s, admin ReadHeaderTimeout 5 s) although each sends a
// header line every second.
//
// No bound here is a speed: "while they are open" is checked by the slow
// connections' own state when each ordinary reply arrives (every slow
// connection to that listener still open), and ordinary clients run for half
// the shorter limit. A slow connection must not be closed before its
// listener's limit counted from just before its dial (less a second for the
// servers' timer granularity), and must be closed at all: by twice the limit
// (a server whose timer restarts with every header line would keep it open
// until the client gives up).
func TestSlowloris(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	stop := make(chan struct{})
	defer close(stop)
	res := slowloris(t, n.addr["resolver"], 200, "GET / HTTP/1.1\r\nHost: x\r\n", stop)
	adm := slowloris(t, n.addr["admin"], 200, "GET /healthz HTTP/1.1\r\nHost: x\r\n", stop)
	bareLF := slowloris(t, n.addr["resolver"], 5, "GET / HTTP/1.1\nHost: x\n\n", stop)

	// Ordinary clients, with and without keep-alive, while the slow ones hang
	// on. A client that waits for the header limit would be answered only
	// because the slow connections are gone, so that is its timeout.
	keep := httpClient(adminHeaderLimit)
	fresh := &http.Client{Timeout: adminHeaderLimit, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	type target struct {
		url  string
		slow []*slowConn // the slow connections to the same listener
	}
	targets := []target{{n.resolverURL() + "/" + n.Handles[0], res}, {n.adminURL() + "/healthz", adm}}
	var worst time.Duration
	ok := 0
	for until := time.Now().Add(adminHeaderLimit / 2); ok == 0 || time.Now().Before(until); {
		for _, c := range []*http.Client{keep, fresh} {
			for _, tg := range targets {
				t0 := time.Now()
				r, err := do(c, "GET", tg.url, nil)
				if err != nil {
					t.Fatalf("ordinary client starved while slow connections are open: GET %s: %v", tg.url, err)
				}
				if open := openCount(tg.slow); open < len(tg.slow) {
					t.Fatalf("GET %s answered only after %d of its listener's %d slow connections were dropped", tg.url, len(tg.slow)-open, len(tg.slow))
				}
				if r.Status != 302 && r.Status != 200 {
					t.Fatalf("GET %s = %d", tg.url, r.Status)
				}
				worst = max(worst, time.Since(t0))
				ok++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("slowloris: %d ordinary requests answered while 405 slow connections were open, slowest %v", ok, worst)

	check := func(name string, conns []*slowConn, limit time.Duration) {
		last := conns[len(conns)-1].opened
		for deadline := last.Add(2 * limit); openCount(conns) > 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		var latest time.Duration
		statuses := map[string]int{}
		for i, c := range conns {
			after := time.Duration(c.closedAfter.Load())
			switch {
			case after == 0:
				t.Errorf("%s slow conn %d still open %v after its dial (header timeout %v)", name, i, time.Since(c.opened), limit)
				continue
			case c.gaveUp.Load():
				t.Errorf("%s slow conn %d never closed by the server: the client gave up after %v (header timeout %v)", name, i, after, limit)
				continue
			case after < limit-time.Second:
				t.Errorf("%s slow conn %d closed %v after its dial, before the header timeout %v", name, i, after, limit)
			case after > 2*limit:
				t.Errorf("%s slow conn %d closed %v after its dial, past twice the header timeout %v", name, i, after, limit)
			}
			latest = max(latest, after)
			st, _ := c.status.Load().(string)
			statuses[st]++
		}
		t.Logf("%s: %d slow connections dropped by the server, the last %v after its dial; what they got: %v", name, len(conns), latest.Round(time.Millisecond), statuses)
	}
	check("admin", adm, adminHeaderLimit)
	check("resolver", res, resolverReadLimit)
	check("resolver bare-LF", bareLF, resolverReadLimit)
}
