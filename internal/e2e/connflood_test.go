package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// heldConn is one connection a test opens and never writes to; a goroutine
// notes when the server closes it.
type heldConn struct {
	c      net.Conn
	dialed time.Time    // before the dial: the server's timers cannot start earlier
	closed atomic.Int64 // nanoseconds after dialed when the server closed it (0: open)
}

// hold opens n idle connections to addr from local address src (in
// 127.0.0.0/8), spread over the sources when several are given.
func hold(t *testing.T, addr string, n int, srcs ...string) []*heldConn {
	t.Helper()
	conns := make([]*heldConn, 0, n)
	for i := range n {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(srcs[i%len(srcs)])}}
		h := &heldConn{dialed: time.Now()}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d of %d to %s: %v", i, n, addr, err)
		}
		h.c = c
		t.Cleanup(func() { c.Close() })
		go func() {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(c)
			for {
				if _, err := br.ReadByte(); err != nil {
					break
				}
			}
			h.closed.Store(max(1, int64(time.Since(h.dialed))))
		}()
		conns = append(conns, h)
	}
	return conns
}

// heldOpen is how many of conns the server has not closed.
func heldOpen(conns []*heldConn) int {
	n := 0
	for _, h := range conns {
		if h.closed.Load() == 0 {
			n++
		}
	}
	return n
}

// clientFrom is an HTTP client whose connections come from local address
// src, never kept alive (each request is a new connection, as a new client's).
func clientFrom(src string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
	}
}

// metricValue reads one sample of the node's /metrics, e.g.
// `pidnode_listener_refused_total{listener="resolver",reason="per_source"}`.
func metricValue(t *testing.T, n *node, sample string) float64 {
	t.Helper()
	r, err := do(clientFrom("127.0.0.2"), "GET", n.adminURL()+"/metrics", nil)
	if err != nil || r.Status != 200 {
		t.Fatalf("/metrics: %v %d", err, r.Status)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("/metrics has no %s", sample)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestIdleFloodResolverAndAdmin: one source (127.0.0.1) opens 2,000 idle
// connections to the resolver and as many to the admin listener. Each
// listener keeps only its per-source limit of them (the default, 256) and
// closes the rest at once; meanwhile another source (127.0.0.2)
// resolves and writes; and the connections kept, which send nothing, are
// closed once the first-byte limits (--resolver-read-timeout,
// --admin-header-timeout) have passed, not before.
func TestIdleFloodResolverAndAdmin(t *testing.T) {
	const (
		flood      = 2000
		firstByte  = 3 * time.Second
		resolverPS = 256
		adminPS    = 256
	)
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo",
		"--resolver-read-timeout", firstByte.String(), "--admin-header-timeout", firstByte.String())
	start := time.Now()
	res := hold(t, n.addr["resolver"], flood, "127.0.0.1")
	adm := hold(t, n.addr["admin"], flood, "127.0.0.1")
	// The connections beyond the limit are closed at accept, long before
	// the first-byte limit could have closed any.
	for heldOpen(res) > resolverPS || heldOpen(adm) > adminPS {
		if time.Since(start) >= firstByte {
			t.Fatalf("%v after the flood began, 127.0.0.1 still holds %d resolver and %d admin connections; want at most %d and %d",
				time.Since(start), heldOpen(res), heldOpen(adm), resolverPS, adminPS)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Before the first-byte limit, the kept ones are all still open.
	if open, el := heldOpen(res)+heldOpen(adm), time.Since(start); el < firstByte && open != resolverPS+adminPS {
		t.Errorf("%v after the flood began, %d connections open, want %d kept", el, open, resolverPS+adminPS)
	}

	other := clientFrom("127.0.0.2")
	h := n.Handles[0]
	if r, err := do(other, "GET", n.resolverURL()+"/"+h, nil); err != nil || r.Status != http.StatusFound {
		t.Errorf("resolution from 127.0.0.2 during the flood: %v %d", err, r.Status)
	}
	if r, err := do(other, "POST", n.adminURL()+testColl, payload("https://example.org/flood", "REGISTERED", resourceInfo("x", "y")), auth(n.Key)...); err != nil || r.Status != http.StatusCreated {
		t.Errorf("admin write from 127.0.0.2 during the flood: %v %d %s", err, r.Status, r.Body)
	}
	refused := func(l string) float64 {
		return metricValue(t, n, `pidnode_listener_refused_total{listener="`+l+`",reason="per_source"}`) +
			metricValue(t, n, `pidnode_listener_refused_total{listener="`+l+`",reason="heavy_source"}`)
	}
	if got := refused("resolver"); got < flood-resolverPS {
		t.Errorf("resolver refusals per source = %v, want at least %d", got, flood-resolverPS)
	}
	if got := refused("admin"); got < flood-adminPS {
		t.Errorf("admin refusals per source = %v, want at least %d", got, flood-adminPS)
	}

	// The kept ones sent nothing: closed after the first-byte limit.
	const slack = 4 * time.Second
	for _, l := range []struct {
		name  string
		conns []*heldConn
	}{{"resolver", res}, {"admin", adm}} {
		for heldOpen(l.conns) > 0 && time.Since(start) < firstByte+slack+2*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		if k := heldOpen(l.conns); k > 0 {
			t.Errorf("%s: %d silent connections still open %v after the flood began (first-byte limit %v)", l.name, k, time.Since(start), firstByte)
		}
		for _, c := range l.conns {
			if d := time.Duration(c.closed.Load()); d >= firstByte+slack {
				t.Errorf("%s: a silent connection was closed %v after its dial, limit %v", l.name, d, firstByte)
				break
			}
		}
	}
}

// TestDescriptorLimit runs the node with 256 descriptors (prlimit) and holds
// idle connections from many sources until the public part of its connection
// budget is used up: the node stays up, a connection opened before keeps
// being served, a new public connection is closed at once, and the admin
// listener (health, readiness, writes) keeps working from the reserve. When
// the idle connections close, new ones are served again. Then the limit is
// lowered under the budget while the node runs (prlimit --pid), so accepts
// fail with EMFILE for real: the node sheds and retries instead of exiting,
// and recovers once the flood closes.
func TestDescriptorLimit(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not installed")
	}
	n := startNodeWrapped(t, filepath.Join(t.TempDir(), "data"),
		[]string{prlimit, "--nofile=256:256", "sh", "-c", `"$0" "$@"; exit $?`}, "--demo")
	h := n.Handles[0]
	other := clientFrom("127.0.0.2")
	resolves := func(what string) {
		t.Helper()
		if r, err := do(other, "GET", n.resolverURL()+"/"+h, nil); err != nil || r.Status != http.StatusFound {
			t.Fatalf("%s: resolution from a new connection: %v %d", what, err, r.Status)
		}
	}
	resolves("before the flood")

	// An open keep-alive connection from 127.0.0.3.
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
	keep, err := d.Dial("tcp", n.addr["resolver"])
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	kbr := bufio.NewReader(keep)
	ask := func(what string) {
		t.Helper()
		keep.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(keep, "GET /%s HTTP/1.1\r\nHost: x\r\n\r\n", h)
		resp, err := http.ReadResponse(kbr, nil)
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("%s: request on the open connection: %v", what, err)
		}
		resp.Body.Close()
	}
	ask("before the flood")

	// 300 idle connections from 30 sources (10 each: no per-source rule
	// applies) over the three public TCP listeners: beyond the budget.
	var srcs []string
	for i := range 30 {
		srcs = append(srcs, fmt.Sprintf("127.0.1.%d", i+1))
	}
	var flood []*heldConn
	for _, l := range []string{"resolver", "dns", "hdl"} {
		flood = append(flood, hold(t, n.addr[l], 100, srcs...)...)
	}
	time.Sleep(300 * time.Millisecond) // the refused ones are closed at accept
	if open := heldOpen(flood); open >= len(flood) || open < 100 {
		t.Fatalf("%d of %d flood connections open, want the budget's public part (180 less those held)", open, len(flood))
	}
	select {
	case <-n.done:
		t.Fatalf("pidnode exited under the flood: %v\n%s", n.state, n.stderr.String())
	default:
	}
	ask("with the public budget used up")
	t.Logf("budget flood: %d of %d open", heldOpen(flood), len(flood))
	if r, err := do(other, "GET", n.resolverURL()+"/"+h, nil); err == nil {
		t.Errorf("new public connection with the budget used up: %d, want it closed", r.Status)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r, err := do(other, "GET", n.adminURL()+p, nil); err != nil || r.Status != 200 {
			t.Errorf("admin %s with the public budget used up: %v %d", p, err, r.Status)
		}
	}
	if r, err := do(other, "POST", n.adminURL()+testColl, payload("https://example.org/fd", "REGISTERED", resourceInfo("x", "y")), auth(n.Key)...); err != nil || r.Status != http.StatusCreated {
		t.Errorf("admin write with the public budget used up: %v %d %s", err, r.Status, r.Body)
	}
	if v := metricValue(t, n, `pidnode_listener_refused_total{listener="resolver",reason="budget"}`); v < 1 {
		t.Errorf("resolver budget refusals = %v, want some", v)
	}
	for _, c := range flood {
		c.c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := do(other, "GET", n.resolverURL()+"/"+h, nil)
		if err == nil && r.Status == http.StatusFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no resolution 5 s after the flood closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Now fewer descriptors than the budget: accepts fail with EMFILE.
	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(n.pid()), "--nofile=120:120").CombinedOutput(); err != nil {
		t.Fatalf("prlimit --pid: %v %s", err, out)
	}
	flood = hold(t, n.addr["resolver"], 200, srcs...)
	time.Sleep(500 * time.Millisecond)
	select {
	case <-n.done:
		t.Fatalf("pidnode exited out of descriptors: %v\n%s", n.state, n.stderr.String())
	default:
	}
	ask("out of descriptors")
	t.Logf("EMFILE flood: %d of %d open", heldOpen(flood), len(flood))
	for _, c := range flood {
		c.c.Close()
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		r, err := do(other, "GET", n.resolverURL()+"/"+h, nil)
		if err == nil && r.Status == http.StatusFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no resolution 5 s after the EMFILE flood closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := metricValue(t, n, `pidnode_listener_accept_retries_total{listener="resolver"}`); v < 1 {
		t.Errorf("resolver accept retries = %v, want the EMFILE ones counted", v)
	}
	for _, l := range []string{"resolver", "admin", "dns", "hdl"} {
		if _, err := net.DialTimeout("tcp", n.addr[l], time.Second); err != nil {
			t.Errorf("%s listener gone after the floods: %v", l, err)
		}
	}
}
