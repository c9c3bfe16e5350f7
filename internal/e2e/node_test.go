package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binPath is the pidnode binary TestMain builds once for every test.
var binPath string

func TestMain(m *testing.M) {
	// No test checks links: the demo data's URLs are public ones, and tests
	// send nothing beyond loopback (docs/product.md §4.4). Every pidnode these
	// tests start inherits it.
	os.Setenv("PIDNODE_LINKCHECK_INTERVAL", "0")
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run()) // listing tests (make fuzz does) needs no binary
	}
	dir, err := os.MkdirTemp("", "pidnode-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "pidnode")
	if b := os.Getenv("PIDNODE_E2E_BIN"); b != "" {
		// A prebuilt binary (e.g. from a clean checkout while the tree is mid-edit).
		binPath = b
	} else if out, err := exec.Command("go", buildArgs()...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build pidnode: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildArgs() []string {
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	return append(args, "pidnode/cmd/pidnode")
}

// syncBuf is an io.Writer safe for the exec package's copying goroutines and
// the test's readers.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// node is one running pidnode process.
type node struct {
	t       testing.TB
	cmd     *exec.Cmd
	nodePID int  // the node's process: cmd's, or its child when cmd is a wrapper (strace)
	wrapped bool // cmd is a wrapper
	data    string
	addr    map[string]string // resolver, admin, dns, hdl
	stdout  *syncBuf
	stderr  *syncBuf
	done    chan struct{} // closed when the process has exited
	state   *os.ProcessState

	// From the demo welcome text, on the first start of a demo database only.
	Key     string   // the demo SNAA's API key
	Handles []string // demo production handles in creation order (last: OBSOLETED)
}

var (
	keyRE    = regexp.MustCompile(`\bpid_[a-z0-9]{20,}\b`)
	handleRE = regexp.MustCompile(`21\.12345/svc/DMO/[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]\b`) // generated ids: the demo's five
)

// startNode runs the binary on data with every listener on 127.0.0.1:0 and
// waits until it is ready. extra flags follow the defaults (e.g. "--demo").
// The process is killed at the end of the test if still running, and its
// stderr is checked for panics and data races.
func startNode(t testing.TB, data string, extra ...string) *node {
	t.Helper()
	return startNodeWrapped(t, data, nil, extra...)
}

// startNodeWrapped is startNode with the binary run by a wrapper command
// (wrap, then the binary and its arguments), e.g. strace; wrap nil runs it
// directly. Signals go to the node, not the wrapper, and the wrapper must
// exit when the node does.
func startNodeWrapped(t testing.TB, data string, wrap []string, extra ...string) *node {
	t.Helper()
	if err := os.MkdirAll(data, 0o750); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(data, "ready")
	os.Remove(ready)
	_, dbErr := os.Stat(filepath.Join(data, "pidnode.db"))
	demo := errors.Is(dbErr, os.ErrNotExist) && contains(extra, "--demo")
	args := append([]string{"serve", "--data", data, "--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--dns-addr", "127.0.0.1:0", "--hdl-addr", "127.0.0.1:0", "--ready-file", ready}, extra...)
	n := &node{t: t, data: data, addr: map[string]string{}, stdout: &syncBuf{}, stderr: &syncBuf{}, done: make(chan struct{})}
	if len(wrap) > 0 {
		n.cmd = exec.Command(wrap[0], append(append(wrap[1:len(wrap):len(wrap)], binPath), args...)...)
	} else {
		n.cmd = exec.Command(binPath, args...)
	}
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.nodePID, n.wrapped = n.cmd.Process.Pid, len(wrap) > 0
	go func() {
		n.cmd.Wait()
		n.state = n.cmd.ProcessState
		close(n.done)
	}()
	t.Cleanup(func() {
		n.kill()
		n.checkStderr()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(ready)
		welcome := n.stdout.String()
		if err == nil && strings.Contains(welcome, "(native protocol, TCP and UDP)") && (!demo || strings.Contains(welcome, "--server ")) {
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if name, a, ok := strings.Cut(sc.Text(), " "); ok {
					n.addr[name] = a
				}
			}
			if len(wrap) > 0 {
				n.nodePID = childPID(t, n.cmd.Process.Pid)
			}
			break
		}
		select {
		case <-n.done:
			t.Fatalf("pidnode exited before ready (%v)\nstdout:\n%s\nstderr:\n%s", n.state, welcome, n.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pidnode not ready after 30 s\nstdout:\n%s\nstderr:\n%s", welcome, n.stderr.String())
		}
	}
	if demo {
		welcome := n.stdout.String()
		n.Key = keyRE.FindString(welcome)
		seen := map[string]bool{}
		for _, h := range handleRE.FindAllString(welcome, -1) {
			if !seen[h] {
				seen[h] = true
				n.Handles = append(n.Handles, h)
			}
		}
		if n.Key == "" || len(n.Handles) != 5 {
			t.Fatalf("demo welcome text: key %q, handles %q\n%s", n.Key, n.Handles, welcome)
		}
	}
	return n
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// children lists the child processes of pid.
func children(pid int) ([]int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		c, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// childPID is the only child of process pid (a wrapper's node).
func childPID(t testing.TB, pid int) int {
	t.Helper()
	c, err := children(pid)
	if err != nil || len(c) != 1 {
		t.Fatalf("the wrapper (pid %d) has children %v (%v), want one", pid, c, err)
	}
	return c[0]
}

func (n *node) pid() int { return n.nodePID }

// kill sends SIGKILL and waits for the exit.
func (n *node) kill() {
	select {
	case <-n.done:
		return
	default:
	}
	if n.wrapped {
		// A killed tracer leaves its tracee running: kill the node first,
		// found now if the test ended before it was ready.
		pids := []int{n.nodePID}
		if n.nodePID == n.cmd.Process.Pid {
			pids, _ = children(n.nodePID)
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
}

// stop sends SIGTERM and returns the exit code, failing the test if the node
// does not exit within timeout.
func (n *node) stop(timeout time.Duration) int {
	n.t.Helper()
	syscall.Kill(n.nodePID, syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(timeout):
		n.t.Errorf("pidnode did not exit within %v of SIGTERM", timeout)
		n.kill()
	}
	return n.state.ExitCode()
}

// checkStderr fails the test if the node printed a panic or a data race.
func (n *node) checkStderr() {
	s := n.stderr.String()
	for _, bad := range []string{"panic", "DATA RACE", "fatal error"} {
		if i := strings.Index(s, bad); i >= 0 {
			end := min(len(s), i+2000)
			n.t.Errorf("pidnode stderr has %q:\n%s", bad, s[max(0, i-200):end])
		}
	}
}

func (n *node) resolverURL() string { return "http://" + n.addr["resolver"] }
func (n *node) adminURL() string    { return "http://" + n.addr["admin"] }

// operatorKey reads the key the node created in its data directory.
func (n *node) operatorKey() string {
	b, err := os.ReadFile(filepath.Join(n.data, "operator.key"))
	if err != nil {
		n.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// httpClient never follows redirects and never waits forever.
func httpClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
	}
}

var defaultClient = httpClient(15 * time.Second)

// reply is a fully read HTTP response.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends one request and reads the whole reply; transport errors are returned.
func do(c *http.Client, method, url string, body []byte, hdr ...string) (reply, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return reply{}, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{resp.StatusCode, resp.Header, b}, nil
}

// mustDo is do that fails the test on a transport error.
func mustDo(t testing.TB, method, url string, body []byte, hdr ...string) reply {
	t.Helper()
	r, err := do(defaultClient, method, url, body, hdr...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// Admin API helpers for the demo SNAA (namespace DMO) under the test prefix.
const (
	testColl = "/testpid/v2/handles/21.T12345/DMO/"
)

func auth(key string) []string {
	return []string{"Authorization", "Bearer " + key, "Content-Type", "application/json"}
}

// resourceInfo is a valid pid4cat resource_info.
func resourceInfo(label, desc string) map[string]any {
	return map[string]any{
		"label": label, "description": desc, "resource_category": "SAMPLE",
		"representation_variants": []any{map[string]any{"variant_url": "https://example.org/item.ttl", "media_type": "text/turtle"}},
	}
}

// payload is a valid create body.
func payload(url, status string, ri map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"url": url, "metadata": map[string]any{
		"status": status, "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"curation_contact": "pids@example.org", "resource_info": ri,
	}})
	return b
}

// identifier is the part of the admin API's identifier body the tests read.
type identifier struct {
	Handle   string         `json:"handle"`
	ID       string         `json:"id"`
	URL      string         `json:"url"`
	Metadata map[string]any `json:"metadata"`
	Version  uint64         `json:"version"`
	Links    struct {
		Resolve, API, Noredirect string
	} `json:"links"`
}

// create makes an identifier through the admin API and fails the test unless 201.
func (n *node) create(t testing.TB, key string, body []byte) identifier {
	t.Helper()
	r := mustDo(t, "POST", n.adminURL()+testColl, body, auth(key)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var id identifier
	if err := json.Unmarshal(r.Body, &id); err != nil {
		t.Fatal(err)
	}
	return id
}

func etag(v uint64) string { return `"` + strconv.FormatUint(v, 10) + `"` }
