// Package etcdtest starts etcd clusters for tests: one or three members on
// loopback ports chosen free, data in the test's temporary directory. Each
// member can be stopped and started again on its own, keeping its data and
// ports, so a test can take a majority away and give it back.
//
// Members run embedded in the test process (go.etcd.io/etcd/server/v3/embed)
// unless Options.Processes asks for child processes: then each member is the
// test binary itself run again (this package's init turns such a process into
// one etcd member, with the same configuration), so Kill can end it with
// SIGKILL, the way a crash or the OOM killer would, and no binary is built.
// A member process also ends when the test process does (its stdin closes).
//
// It is test support only: nothing but _test.go files and test helpers may
// import it. It imports the etcd server and client and the standard library.
package etcdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Options tune a cluster. The zero value is a cluster with etcd's defaults,
// its members embedded in the test process.
type Options struct {
	// MaxTxnOps and MaxRequestBytes are etcd's --max-txn-ops and
	// --max-request-bytes; zero keeps etcd's defaults (128 and 1.5 MiB).
	MaxTxnOps       uint
	MaxRequestBytes uint
	// QuotaBackendBytes is etcd's --quota-backend-bytes; zero keeps etcd's
	// default (2 GiB). A small one lets a test fill etcd (NOSPACE alarm).
	QuotaBackendBytes int64
	// Processes runs each member as a child process, which Member.Kill can
	// SIGKILL; embedded members can only be stopped.
	Processes bool
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
	etcd    *embed.Etcd // running embedded
	proc    *memberProc // running as a child process
	started bool        // started once: later starts join the existing cluster
}

// Start starts a cluster of n members (1 or 3 are the sizes tests use) and
// waits until it has a leader. The members end when the test ends.
func Start(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest.Start: %d members", n)
	}
	dir := t.TempDir()
	c := &Cluster{t: t, opts: opts, token: fmt.Sprintf("etcdtest-%d", time.Now().UnixNano())}
	t.Cleanup(func() { c.end() })
	// A port found free can be taken by another process before etcd binds
	// it; then the whole cluster starts again on new ports (its members'
	// peer URLs are part of the initial configuration).
	for attempt := 0; ; attempt++ {
		err := c.startMembers(t, n, filepath.Join(dir, fmt.Sprintf("try%d", attempt)))
		if err == nil {
			return c
		}
		c.end()
		if attempt >= 4 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("etcdtest: %v", err)
		}
	}
}

// end ends every member: member processes are killed (their data is
// thrown away, and a member without quorum can take long to stop).
func (c *Cluster) end() {
	for _, m := range c.members {
		if c.opts.Processes {
			m.Kill()
		} else {
			m.Stop()
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

// Stop stops the member gracefully (SIGTERM for a member process); its
// data stays. Stopping a stopped member does nothing.
func (m *Member) Stop() {
	m.mu.Lock()
	e, p := m.etcd, m.proc
	m.etcd, m.proc = nil, nil
	m.mu.Unlock()
	if e != nil {
		e.Close()
	}
	if p != nil {
		if err := p.stop(); err != nil {
			m.c.t.Errorf("etcdtest: stop %s: %v", m.name, err)
		}
	}
}

// Kill ends the member process with SIGKILL, as a crash would: etcd
// recovers from its write-ahead log when it starts again. Only members of
// a cluster started with Options.Processes can be killed. Killing a
// stopped member does nothing.
func (m *Member) Kill() {
	if !m.c.opts.Processes {
		m.c.t.Fatalf("etcdtest: kill %s: members run embedded (Options.Processes is false)", m.name)
	}
	m.mu.Lock()
	p := m.proc
	m.proc = nil
	m.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Restart starts a stopped or killed member again on its data and ports.
// It returns once the member serves clients, which needs a majority of
// the cluster.
func (m *Member) Restart() {
	m.c.t.Helper()
	if err := m.start(); err != nil {
		m.c.t.Fatalf("etcdtest: restart %s: %v", m.name, err)
	}
}

func (m *Member) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd != nil || m.proc != nil {
		return nil
	}
	s := memberSpec{Name: m.name, Dir: m.dir, Peer: m.peer.String(), Client: m.client.String(),
		Initial: m.c.initial, Token: m.c.token, Existing: m.started, Opts: m.c.opts}
	if m.c.opts.Processes {
		p, err := startProc(s)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		m.proc = p
	} else {
		e, err := s.start()
		if err != nil {
			return err
		}
		m.etcd = e
	}
	m.started = true
	return nil
}

// memberSpec is what a member is started with, embedded or in a process of
// its own (which gets it as JSON in memberEnv).
type memberSpec struct {
	Name, Dir, Peer, Client, Initial, Token string
	Existing                                bool // joins the cluster it was part of
	Opts                                    Options
}

// start starts the member in this process and waits until it serves
// clients.
func (s memberSpec) start() (*embed.Etcd, error) {
	peer, err := url.Parse(s.Peer)
	if err != nil {
		return nil, err
	}
	client, err := url.Parse(s.Client)
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = s.Name
	cfg.Dir = s.Dir
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.InitialCluster = s.Initial
	cfg.InitialClusterToken = s.Token
	cfg.ClusterState = embed.ClusterStateFlagNew
	if s.Existing {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	// Short timers: a lone member elects itself at once, a 3-member cluster
	// finds a new leader within a second of losing one.
	cfg.TickMs = 50
	cfg.ElectionMs = 500
	cfg.EnableGRPCGateway = false
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	if s.Opts.MaxTxnOps > 0 {
		cfg.MaxTxnOps = s.Opts.MaxTxnOps
	}
	if s.Opts.MaxRequestBytes > 0 {
		cfg.MaxRequestBytes = s.Opts.MaxRequestBytes
	}
	if s.Opts.QuotaBackendBytes > 0 {
		cfg.QuotaBackendBytes = s.Opts.QuotaBackendBytes
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	case <-time.After(30 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("%s not ready after 30s", s.Name)
	}
}

// memberEnv, set in a process's environment, makes it an etcd member
// (init below) rather than a test binary; its value is the memberSpec.
const memberEnv = "PIDNODE_ETCDTEST_MEMBER"

// memberReady is the line a member process prints once it serves clients.
const memberReady = "etcdtest: member ready"

func init() {
	if spec, ok := os.LookupEnv(memberEnv); ok {
		os.Exit(runMember(spec))
	}
}

// runMember is the life of a member process: etcd until SIGTERM (a
// graceful stop), SIGKILL, or the end of the test process that started it
// (its stdin reaches EOF). It returns the exit code.
func runMember(spec string) int {
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	var s memberSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintf(os.Stderr, "etcdtest: %s: %v\n", memberEnv, err)
		return 2
	}
	e, err := s.start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(memberReady)
	select {
	case <-term:
		e.Close()
		return 0
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, err)
		e.Close()
		return 1
	}
}

// memberProc is a running member process.
type memberProc struct {
	cmd   *exec.Cmd
	stdin io.Closer // held open for the process's life
	out   *procOutput
	done  chan struct{} // closed when the process has exited
}

// startProc runs the test binary again as the member s and waits until it
// serves clients.
func startProc(s memberSpec) (*memberProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	p := &memberProc{cmd: exec.Command(exe), out: &procOutput{ready: make(chan struct{})}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), memberEnv+"="+string(spec))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.cmd.Wait()
		p.stdin.Close()
		close(p.done)
	}()
	select {
	case <-p.out.ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("member process exited (%v): %s", p.cmd.ProcessState, p.out.String())
	case <-time.After(35 * time.Second):
		p.kill()
		return nil, fmt.Errorf("member process not ready after 35s: %s", p.out.String())
	}
}

// stop sends SIGTERM and waits for a clean exit, killing the process if it
// takes more than 10 s.
func (p *memberProc) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if !p.cmd.ProcessState.Success() {
			return fmt.Errorf("exit %v after SIGTERM: %s", p.cmd.ProcessState, p.out.String())
		}
		return nil
	case <-time.After(10 * time.Second):
		p.kill()
		return fmt.Errorf("still running 10s after SIGTERM (killed): %s", p.out.String())
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *memberProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// procOutput keeps what a member process prints (its errors, a race
// report) and closes ready when it prints memberReady.
type procOutput struct {
	mu    sync.Mutex
	b     bytes.Buffer
	ready chan struct{}
	seen  bool
}

func (o *procOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b.Write(p)
	if !o.seen && bytes.Contains(o.b.Bytes(), []byte(memberReady+"\n")) {
		o.seen = true
		close(o.ready)
	}
	return len(p), nil
}

func (o *procOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
