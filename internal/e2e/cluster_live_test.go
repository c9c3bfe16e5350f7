package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pidnode/internal/etcdtest"
)

// pausableProxy forwards TCP connections from a loopback port to target.
// Paused, it forwards no byte in either direction, on open connections and
// on new ones, which it accepts and holds: to the node behind it, etcd is
// silent, as behind a cut network. Resumed, every held byte moves on.
//
// Refusing, it closes every connection and each new one at once, as a
// stopped etcd whose port refuses them would.
type pausableProxy struct {
	ln       net.Listener
	target   string
	mu       sync.Mutex
	gate     chan struct{} // closed while forwarding
	refusing bool
	conns    map[net.Conn]bool
}

func newPausableProxy(t *testing.T, target string) *pausableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausableProxy{ln: ln, target: target, gate: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.gate)
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			refusing := p.refusing
			p.mu.Unlock()
			if refusing {
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[u] = true, true
			p.mu.Unlock()
			go p.pipe(u, c)
			go p.pipe(c, u)
		}
	}()
	return p
}

// closeAll closes every connection the proxy holds.
func (p *pausableProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Refuse closes every connection and refuses new ones until Resume.
func (p *pausableProxy) Refuse() {
	p.mu.Lock()
	p.refusing = true
	p.mu.Unlock()
	p.closeAll()
}

// pipe copies from src to dst, waiting at the gate before each write.
func (p *pausableProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			g := p.gate
			p.mu.Unlock()
			<-g
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// URL is the proxy's address as an etcd endpoint.
func (p *pausableProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Pause stops forwarding.
func (p *pausableProxy) Pause() {
	p.mu.Lock()
	p.gate = make(chan struct{})
	p.mu.Unlock()
}

// Resume forwards again, the held bytes first, and accepts connections.
func (p *pausableProxy) Resume() {
	p.mu.Lock()
	p.refusing = false
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
	p.mu.Unlock()
}

// nodeMetric reads one unlabelled sample of a node's /metrics.
func nodeMetric(t *testing.T, n *node, name string) float64 {
	t.Helper()
	r := mustDo(t, "GET", n.adminURL()+"/metrics", nil)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// pollWithin polls cond every 50 ms and fails the test if it does not hold
// within d; it returns how long it took.
func pollWithin(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// readyzBody is the body of a node's /readyz.
func readyzBody(t *testing.T, n *node) string {
	t.Helper()
	return string(mustDo(t, "GET", n.adminURL()+"/readyz", nil).Body)
}

// TestClusterPartitionReadiness cuts one node off from a healthy 3-member
// etcd (a proxy between them stops forwarding, which neither ends its
// connection nor its watch): within 5 s its /readyz says writes are
// unavailable and its connected gauge is 0, its writes answer 503 and each
// is counted in writes_unavailable_total, while the other node writes on;
// within 5 s of healing it says writes are ready and writes again.
func TestClusterPartitionReadiness(t *testing.T) {
	c := etcdtest.Start(t, 3, clusterEtcd)
	px := newPausableProxy(t, c.Members()[0].Endpoint()[len("http://"):])
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), "--etcd-endpoints", px.URL(), "--node-name", "a", "--admin-rate", "0", "--demo")
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	pollWithin(t, 5*time.Second, "a ready before the cut", func() bool { return bytes.Contains([]byte(readyzBody(t, a)), []byte("writes: ready")) })
	if v := nodeMetric(t, a, "pidnode_cluster_connected"); v != 1 {
		t.Fatalf("a connected before the cut: %v", v)
	}

	px.Pause()
	took := pollWithin(t, 5*time.Second, "a's /readyz says writes unavailable after the cut", func() bool {
		return bytes.Contains([]byte(readyzBody(t, a)), []byte("writes: unavailable"))
	})
	t.Logf("writes unavailable on /readyz %v after the cut: %q", took, readyzBody(t, a))
	if v := nodeMetric(t, a, "pidnode_cluster_connected"); v != 0 {
		t.Errorf("a connected while cut off: %v", v)
	}
	if v := nodeMetric(t, a, "pidnode_cluster_etcd_rtt_seconds"); v < 0.5 {
		t.Errorf("a's etcd round trip while cut off: %v s, want the wait of a read without answer", v)
	}
	before := nodeMetric(t, a, "pidnode_cluster_writes_unavailable_total")
	refused := 0
	for i := 0; i < 2; i++ {
		r := mustDo(t, "POST", a.adminURL()+testColl, payload("https://example.org/cut/"+strconv.Itoa(i), "REGISTERED", resourceInfo("cut", "x")), auth(a.Key)...)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Fatalf("write through the cut-off node: %d %s", r.Status, r.Body)
		}
		refused++
	}
	if got := nodeMetric(t, a, "pidnode_cluster_writes_unavailable_total") - before; got != float64(refused) {
		t.Errorf("writes_unavailable_total grew by %v over %d 503s", got, refused)
	}
	// The other node is not cut off.
	if s := readyzBody(t, b); !bytes.Contains([]byte(s), []byte("writes: ready")) {
		t.Errorf("b while a is cut off: %q", s)
	}
	b.create(t, a.Key, payload("https://example.org/cut/b", "REGISTERED", resourceInfo("cut", "b")))

	px.Resume()
	took = pollWithin(t, 5*time.Second, "a's /readyz says writes ready after healing", func() bool {
		return bytes.Contains([]byte(readyzBody(t, a)), []byte("writes: ready"))
	})
	t.Logf("writes ready on /readyz %v after healing", took)
	if v := nodeMetric(t, a, "pidnode_cluster_connected"); v != 1 {
		t.Errorf("a connected after healing: %v", v)
	}
	a.create(t, a.Key, payload("https://example.org/cut/healed", "REGISTERED", resourceInfo("cut", "healed")))
}

// TestClusterEtcdRefusing puts a node behind a proxy that closes its
// connections to etcd and refuses new ones for longer than gRPC's first
// reconnect backoffs: the node says writes are unavailable within 5 s, and
// ready within 5 s of etcd taking connections again.
func TestClusterEtcdRefusing(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	px := newPausableProxy(t, c.Members()[0].Endpoint()[len("http://"):])
	a := startNode(t, filepath.Join(t.TempDir(), "a"), "--etcd-endpoints", px.URL(), "--node-name", "a")
	pollWithin(t, 5*time.Second, "a ready", func() bool { return strings.Contains(readyzBody(t, a), "writes: ready") })
	px.Refuse()
	took := pollWithin(t, 5*time.Second, "a's /readyz says writes unavailable while etcd refuses", func() bool {
		return strings.Contains(readyzBody(t, a), "writes: unavailable")
	})
	t.Logf("writes unavailable %v after the refusals began", took)
	time.Sleep(8*time.Second - took)
	px.Resume()
	took = pollWithin(t, 5*time.Second, "a's /readyz says writes ready after etcd takes connections again", func() bool {
		return strings.Contains(readyzBody(t, a), "writes: ready")
	})
	t.Logf("writes ready %v after etcd took connections again", took)
}

// signalExit sends sig to n and returns how long the node took to exit,
// failing the test past limit.
func signalExit(t *testing.T, n *node, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	syscall.Kill(n.pid(), syscall.SIGINT)
	select {
	case <-n.done:
	case <-time.After(limit):
		t.Errorf("pidnode did not exit within %v of SIGINT\n%s", limit, n.stderr.String())
		n.kill()
	}
	return time.Since(start)
}

// TestClusterShutdownWithoutEtcd stops etcd before the nodes, as one Ctrl-C
// to `make cluster` does: each node, the jobs' leader and the one
// campaigning for the lead alike, still exits within its shutdown timeout
// of SIGINT. A node whose graceful shutdown is still going on exits at once
// at a second SIGINT.
func TestClusterShutdownWithoutEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	const timeout = 15 * time.Second // the default --shutdown-timeout
	flags := func(name string) []string {
		return append(clusterFlags(c, name), "--shutdown-timeout", timeout.String())
	}
	a := startNode(t, filepath.Join(dir, "a"), flags("a")...)
	b := startNode(t, filepath.Join(dir, "b"), flags("b")...)
	slow := startNode(t, filepath.Join(dir, "slow"), append(flags("slow"), "--shutdown-delay", "30s")...)
	// One of them leads the jobs' election, the others campaign.
	pollWithin(t, 5*time.Second, "a job leader", func() bool {
		sum := 0.0
		for _, n := range []*node{a, b, slow} {
			sum += nodeMetric(t, n, "pidnode_cluster_leading")
		}
		return sum == 1
	})
	c.Members()[0].Stop()

	var wg sync.WaitGroup
	for _, n := range []*node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The delay, then the timeout: nothing waits on etcd past them.
			took := signalExit(t, n, time.Second+timeout)
			t.Logf("exited %v after SIGINT without etcd", took)
		}()
	}
	start := time.Now()
	syscall.Kill(slow.pid(), syscall.SIGINT)
	time.Sleep(500 * time.Millisecond)
	select {
	case <-slow.done:
		t.Fatalf("the node with --shutdown-delay 30s exited %v after one SIGINT", time.Since(start))
	default:
	}
	took := signalExit(t, slow, time.Second)
	t.Logf("exited %v after a second SIGINT", took)
	wg.Wait()
}

// TestClusterStorageFull fills a one-member etcd with a tiny quota through a
// node's writes: once etcd raises its NOSPACE alarm, writes answer 507
// /problems/storage-full without Retry-After, /readyz says storage full and
// the metrics count it; after the README's recovery step (`pidnode cluster
// reclaim`) writes resume.
func TestClusterStorageFull(t *testing.T) {
	opts := clusterEtcd
	opts.QuotaBackendBytes = 1 << 20
	c := etcdtest.Start(t, 1, opts)
	a := startNode(t, filepath.Join(t.TempDir(), "a"), append(clusterFlags(c, "a"), "--demo")...)

	var (
		mu       sync.Mutex
		full     []reply
		other    []reply
		created  int
		wg       sync.WaitGroup
		deadline = time.Now().Add(12 * time.Second)
	)
	// Each writer creates a record and updates it over and over: etcd keeps
	// every revision until a compaction, as it keeps the statistics every
	// node publishes at each flush, which is what fills an etcd that runs
	// without --auto-compaction-retention. The URLs are random, so that
	// the values etcd stores do not compress away.
	long := func() string {
		b := make([]byte, 500)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := a.create(t, a.Key, payload("https://example.org/fill/"+strconv.Itoa(w), "REGISTERED", resourceInfo("fill", "x")))
			item := "/testpid/v2/handles/21.T12345/DMO/" + id.ID
			for i := 0; time.Now().Before(deadline); i++ {
				r := mustDo(t, "PUT", a.adminURL()+item, payload("https://example.org/fill/"+strconv.Itoa(w)+"/"+strconv.Itoa(i)+"/"+long(),
					"REGISTERED", resourceInfo("fill", "x")), auth(a.Key)...)
				mu.Lock()
				switch r.Status {
				case http.StatusOK:
					created++
				case http.StatusInsufficientStorage:
					full = append(full, r)
				default:
					other = append(other, r)
				}
				mu.Unlock()
				if r.Status != http.StatusOK {
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d updates before etcd was full", created)
	if len(other) > 0 {
		t.Fatalf("filling etcd: %d other replies, first %d %s", len(other), other[0].Status, other[0].Body)
	}
	if len(full) == 0 {
		t.Fatalf("etcd not full after %d updates", created)
	}
	r := full[0]
	if !bytes.Contains(r.Body, []byte(`"type":"/problems/storage-full"`)) || r.Header.Get("Retry-After") != "" ||
		r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("write to a full etcd: %d %v %s", r.Status, r.Header, r.Body)
	}
	if s := readyzBody(t, a); !bytes.Contains([]byte(s), []byte("writes: storage full")) {
		t.Errorf("/readyz with etcd full: %q", s)
	}
	if v := nodeMetric(t, a, "pidnode_cluster_storage_full"); v != 1 {
		t.Errorf("storage_full gauge: %v", v)
	}
	if v := nodeMetric(t, a, "pidnode_cluster_writes_storage_full_total"); v != float64(len(full)) {
		t.Errorf("writes_storage_full_total %v after %d 507s", v, len(full))
	}

	// The README's recovery step.
	out, err := exec.Command(binPath, "cluster", "reclaim", "--etcd-endpoints", c.Endpoints()).CombinedOutput()
	if err != nil {
		t.Fatalf("pidnode cluster reclaim: %v\n%s", err, out)
	}
	t.Logf("pidnode cluster reclaim:\n%s", out)
	pollWithin(t, 5*time.Second, "writes ready after reclaim", func() bool {
		return bytes.Contains([]byte(readyzBody(t, a)), []byte("writes: ready"))
	})
	a.create(t, a.Key, payload("https://example.org/after-reclaim", "REGISTERED", resourceInfo("fill", "after")))
	if v := nodeMetric(t, a, "pidnode_cluster_storage_full"); v != 0 {
		t.Errorf("storage_full gauge after reclaim: %v", v)
	}
}
