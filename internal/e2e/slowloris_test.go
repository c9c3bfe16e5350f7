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
)

// slowConn is one slowloris connection: it sends a request line and then one
// header line per second, never finishing the headers.
type slowConn struct {
	closedAfter atomic.Int64 // nanoseconds after start when the server closed it (0: still open)
	status      atomic.Value // status line the server sent before closing, if any
}

func slowloris(t *testing.T, addr string, n int, start time.Time, opening string, stop <-chan struct{}) []*slowConn {
	t.Helper()
	conns := make([]*slowConn, n)
	var wg sync.WaitGroup
	for i := range conns {
		sc := &slowConn{}
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
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil || line != "" {
				sc.status.Store(strings.TrimSpace(line))
			}
			sc.closedAfter.Store(int64(time.Since(start)))
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

// TestSlowloris opens 200 slow connections to each HTTP listener (and a few
// that use bare LF line ends, which fasthttp does not accept as line ends):
// ordinary clients must still get prompt answers while they are open, and the
// server must drop every slow connection after its header timeout (resolver
// ReadTimeout 10 s, admin ReadHeaderTimeout 5 s).
func TestSlowloris(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	res := slowloris(t, n.addr["resolver"], 200, start, "GET / HTTP/1.1\r\nHost: x\r\n", stop)
	adm := slowloris(t, n.addr["admin"], 200, start, "GET /healthz HTTP/1.1\r\nHost: x\r\n", stop)
	bareLF := slowloris(t, n.addr["resolver"], 5, start, "GET / HTTP/1.1\nHost: x\n\n", stop)

	// Ordinary clients, with and without keep-alive, while the slow ones hang on.
	keep := httpClient(2 * time.Second)
	fresh := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var worst time.Duration
	ok := 0
	for time.Since(start) < 4*time.Second {
		for _, c := range []*http.Client{keep, fresh} {
			for _, u := range []string{n.resolverURL() + "/" + n.Handles[0], n.adminURL() + "/healthz"} {
				t0 := time.Now()
				r, err := do(c, "GET", u, nil)
				if err != nil {
					t.Fatalf("ordinary client starved while slow connections are open: GET %s: %v", u, err)
				}
				if r.Status != 302 && r.Status != 200 {
					t.Fatalf("GET %s = %d", u, r.Status)
				}
				worst = max(worst, time.Since(t0))
				ok++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("slowloris: %d ordinary requests answered while 405 slow connections were open, slowest %v", ok, worst)

	check := func(name string, conns []*slowConn, limit time.Duration) {
		deadline := start.Add(limit + 5*time.Second)
		for time.Now().Before(deadline) {
			open := 0
			for _, c := range conns {
				if c.closedAfter.Load() == 0 {
					open++
				}
			}
			if open == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		var latest time.Duration
		statuses := map[string]int{}
		for i, c := range conns {
			after := time.Duration(c.closedAfter.Load())
			if after == 0 {
				t.Errorf("%s slow conn %d still open %v after start (header timeout %v)", name, i, time.Since(start), limit)
				continue
			}
			if after < limit-time.Second {
				t.Errorf("%s slow conn %d closed after %v, before the header timeout %v", name, i, after, limit)
			}
			latest = max(latest, after)
			st, _ := c.status.Load().(string)
			statuses[st]++
		}
		t.Logf("%s: %d slow connections dropped by the server, the last after %v; what they got: %v", name, len(conns), latest.Round(time.Millisecond), statuses)
	}
	check("admin", adm, 5*time.Second)
	check("resolver", res, 10*time.Second)
	check("resolver bare-LF", bareLF, 10*time.Second)
}
