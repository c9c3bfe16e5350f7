// Package etcdtest starts etcd clusters for tests: one or three members
// embedded in the test process (go.etcd.io/etcd/server/v3/embed), on loopback
// ports chosen free, data in the test's temporary directory. Each member can
// be stopped and started again on its own, keeping its data and ports, so a
// test can take a majority away and give it back.
//
// It is test support only: nothing but _test.go files and test helpers may
// import it. It imports the etcd server and client and the standard library.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Options tune a cluster. The zero value is a cluster with etcd's defaults.
type Options struct {
	// MaxTxnOps and MaxRequestBytes are etcd's --max-txn-ops and
	// --max-request-bytes; zero keeps etcd's defaults (128 and 1.5 MiB).
	MaxTxnOps       uint
	MaxRequestBytes uint
	// QuotaBackendBytes is etcd's --quota-backend-bytes; zero keeps etcd's
	// default (2 GiB). A small one lets a test fill etcd (NOSPACE alarm).
	QuotaBackendBytes int64
}

// Cluster is a running etcd cluster. Its methods are safe for concurrent use.
type Cluster struct {
	t       testing.TB
	opts    Options
	token   string
	initial string
	members []*Member
}

// Member is one etcd member.
type Member struct {
	c      *Cluster
	name   string
	dir    string
	peer   url.URL
	client url.URL
	index  int

	mu      sync.Mutex
	etcd    *embed.Etcd
	started bool // started once: later starts join the existing cluster
}

// Start starts a cluster of n members (1 or 3 are the sizes tests use) and
// waits until it has a leader. The members are stopped when the test ends.
func Start(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest.Start: %d members", n)
	}
	dir := t.TempDir()
	c := &Cluster{t: t, opts: opts, token: fmt.Sprintf("etcdtest-%d", time.Now().UnixNano())}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.Stop()
		}
	})
	// A port found free can be taken by another process before etcd binds
	// it; then the whole cluster starts again on new ports (its members'
	// peer URLs are part of the initial configuration).
	for attempt := 0; ; attempt++ {
		err := c.startMembers(t, n, filepath.Join(dir, fmt.Sprintf("try%d", attempt)))
		if err == nil {
			return c
		}
		for _, m := range c.members {
			m.Stop()
		}
		if attempt >= 4 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("etcdtest: %v", err)
		}
	}
}

// startMembers creates n members with fresh loopback ports and data under dir
// and starts them together (members of a new cluster wait for each other).
func (c *Cluster) startMembers(t testing.TB, n int, dir string) error {
	c.members = nil
	var initial []string
	for i := 0; i < n; i++ {
		m := &Member{
			c:      c,
			index:  i,
			name:   fmt.Sprintf("m%d", i),
			dir:    filepath.Join(dir, fmt.Sprintf("m%d", i)),
			peer:   url.URL{Scheme: "http", Host: freeAddr(t)},
			client: url.URL{Scheme: "http", Host: freeAddr(t)},
		}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer.String())
	}
	c.initial = strings.Join(initial, ",")
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, m := range c.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.start()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Members returns the members in order.
func (c *Cluster) Members() []*Member { return c.members }

// Endpoints returns every member's client URL, comma-separated, as
// --etcd-endpoints takes them.
func (c *Cluster) Endpoints() string {
	var s []string
	for _, m := range c.members {
		s = append(s, m.client.String())
	}
	return strings.Join(s, ",")
}

// Client returns a client of the whole cluster, closed when the test ends.
func (c *Cluster) Client() *clientv3.Client {
	c.t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(c.Endpoints(), ","),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		c.t.Fatalf("etcdtest: client: %v", err)
	}
	c.t.Cleanup(func() { cli.Close() })
	return cli
}

// Compact compacts the cluster's history up to its current revision and
// returns that revision.
func (c *Cluster) Compact() int64 {
	c.t.Helper()
	cli := c.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, "etcdtest-compact")
	if err != nil {
		c.t.Fatalf("etcdtest: compact: %v", err)
	}
	rev := r.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		c.t.Fatalf("etcdtest: compact %d: %v", rev, err)
	}
	return rev
}

// Endpoint is the member's client URL.
func (m *Member) Endpoint() string { return m.client.String() }

// Stop stops the member; its data stays. Stopping a stopped member does
// nothing.
func (m *Member) Stop() {
	m.mu.Lock()
	e := m.etcd
	m.etcd = nil
	m.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Restart starts a stopped member again on its data and ports. It returns
// once the member serves clients, which needs a majority of the cluster.
func (m *Member) Restart() {
	m.c.t.Helper()
	if err := m.start(); err != nil {
		m.c.t.Fatalf("etcdtest: restart %s: %v", m.name, err)
	}
}

func (m *Member) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd != nil {
		return nil
	}
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = m.dir
	cfg.ListenPeerUrls = []url.URL{m.peer}
	cfg.AdvertisePeerUrls = []url.URL{m.peer}
	cfg.ListenClientUrls = []url.URL{m.client}
	cfg.AdvertiseClientUrls = []url.URL{m.client}
	cfg.InitialCluster = m.c.initial
	cfg.InitialClusterToken = m.c.token
	cfg.ClusterState = embed.ClusterStateFlagNew
	if m.started {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	// Short timers: a lone member elects itself at once, a 3-member cluster
	// finds a new leader within a second of losing one.
	cfg.TickMs = 50
	cfg.ElectionMs = 500
	cfg.EnableGRPCGateway = false
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	if m.c.opts.MaxTxnOps > 0 {
		cfg.MaxTxnOps = m.c.opts.MaxTxnOps
	}
	if m.c.opts.MaxRequestBytes > 0 {
		cfg.MaxRequestBytes = m.c.opts.MaxRequestBytes
	}
	if m.c.opts.QuotaBackendBytes > 0 {
		cfg.QuotaBackendBytes = m.c.opts.QuotaBackendBytes
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start %s: %w", m.name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("%s: %w", m.name, err)
	case <-time.After(30 * time.Second):
		e.Server.Stop()
		e.Close()
		return fmt.Errorf("%s not ready after 30s", m.name)
	}
	m.etcd = e
	m.started = true
	return nil
}
