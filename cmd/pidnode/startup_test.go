package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pidnode/internal/etcdtest"
	"pidnode/store"
)

// The pidnode binary, built once by the first test that needs it.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	// No test checks links: the demo data's URLs are public ones, and tests
	// send nothing beyond loopback (docs/product.md §4.4). Every pidnode these
	// tests start inherits it.
	os.Setenv("PIDNODE_LINKCHECK_INTERVAL", "0")
	// Nor do they re-execute: on a host up for longer than schedtrace's
	// period the runtime would add its line to the stderr they read
	// (sysmon_unix.go). TestServeKeepsSysmonAwake sets its own.
	os.Setenv("GODEBUG", "schedtrace=0")
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// pidnodeBin returns the path of the pidnode binary built from this package.
func pidnodeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "pidnode-cmd-test-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "pidnode")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// loopbackArgs puts every listener on 127.0.0.1:0; flags given after them win.
func loopbackArgs(data string) []string {
	return []string{"serve", "--data", data, "--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--dns-addr", "127.0.0.1:0", "--hdl-addr", "127.0.0.1:0"}
}

// failedStart runs `pidnode serve` on data (every listener on 127.0.0.1:0,
// then extra) and checks that it fails as an operator should see it: exit
// status 1, nothing on stdout, and on stderr exactly one line, no panic. It
// returns that line without its newline.
func failedStart(t *testing.T, data string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, pidnodeBin(t), append(loopbackArgs(data), extra...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("pidnode %s: %v, want exit status 1\nstdout:\n%s\nstderr:\n%s", strings.Join(extra, " "), err, &stdout, &stderr)
	}
	out := stderr.String()
	for _, bad := range []string{"panic", "goroutine "} {
		if strings.Contains(out, bad) {
			t.Errorf("stderr holds %q:\n%s", bad, out)
		}
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Errorf("stderr is not exactly one line:\n%s", out)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout of a failed start:\n%s", &stdout)
	}
	return strings.TrimSuffix(out, "\n")
}

// runningNode is a pidnode process started by startBinary.
type runningNode struct {
	cmd   *exec.Cmd
	addr  map[string]string
	done  chan struct{}
	state *os.ProcessState
}

// startBinary runs `pidnode serve` on data (every listener on 127.0.0.1:0,
// then extra) and waits until its ready file is written. It is killed at the
// end of the test if still running.
func startBinary(t *testing.T, data string, extra ...string) *runningNode {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(pidnodeBin(t), append(append(loopbackArgs(data), "--ready-file", ready, "--shutdown-delay", "0"), extra...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &runningNode{cmd: cmd, addr: map[string]string{}, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		n.state = cmd.ProcessState
		close(n.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-n.done
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, err := os.ReadFile(ready); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if name, a, ok := strings.Cut(line, " "); ok {
					n.addr[name] = a
				}
			}
			return n
		}
		select {
		case <-n.done:
			t.Fatalf("pidnode exited before ready (%v):\n%s", n.state, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("pidnode not ready after 30 s")
		}
	}
}

// stop sends SIGTERM and waits for exit status 0.
func (n *runningNode) stop(t *testing.T) {
	t.Helper()
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
		if n.state.ExitCode() != 0 {
			t.Errorf("exit after SIGTERM: %v", n.state)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
}

// checkDBFree fails the test unless the database of data can be opened,
// i.e. no process holds it any more.
func checkDBFree(t *testing.T, data string) {
	t.Helper()
	if _, err := os.Stat(dbPath(data)); errors.Is(err, os.ErrNotExist) {
		return
	}
	db, err := store.Open(store.Config{Path: dbPath(data), NoSync: true})
	if err != nil {
		t.Fatalf("database still held after the failed start: %v", err)
	}
	db.Close()
}

// freeAddr returns a loopback address whose port was free for both TCP and
// UDP a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := ln.Addr().String()
		pc, err := net.ListenPacket("udp", a)
		ln.Close()
		if err == nil {
			pc.Close()
			return a
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return ""
}

// checkAddrsFree fails the test unless every address can be bound again
// (TCP, and UDP for the dns and hdl listeners).
func checkAddrsFree(t *testing.T, addrs map[string]string) {
	t.Helper()
	for name, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("%s listener %s (tcp) still bound after the failed start: %v", name, a, err)
			continue
		}
		ln.Close()
		if name == "dns" || name == "hdl" {
			pc, err := net.ListenPacket("udp", a)
			if err != nil {
				t.Errorf("%s listener %s (udp) still bound after the failed start: %v", name, a, err)
				continue
			}
			pc.Close()
		}
	}
}

// TestStartFailsDataLocked: a second node on the data directory of a running
// one says which process holds it, and leaves it alone; once the first has
// stopped, the directory starts again, even with a lock file a crash left.
func TestStartFailsDataLocked(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	first := startBinary(t, data)
	lock, err := os.ReadFile(store.LockFile(dbPath(data)))
	if err != nil {
		t.Fatalf("running node has no lock file: %v", err)
	}
	got := failedStart(t, data)
	want := fmt.Sprintf("pidnode serve: %s is in use by another pidnode (pid %d); stop it or choose another --data", dbPath(data), first.cmd.Process.Pid)
	if got != want {
		t.Errorf("second start on a held data directory:\n got %s\nwant %s", got, want)
	}
	if b, _ := os.ReadFile(store.LockFile(dbPath(data))); !bytes.Equal(b, lock) {
		t.Errorf("the failed start changed the holder's lock file: %q, was %q", b, lock)
	}
	first.stop(t)
	// A lock file naming a running process (this test) but no flock behind
	// it, as a crash leaves one, does not block the next start.
	if err := os.WriteFile(store.LockFile(dbPath(data)), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startBinary(t, data).stop(t)
}

// TestStartFailsPortInUse: each listener whose address is taken names itself,
// the address and its setting; the database is released again.
func TestStartFailsPortInUse(t *testing.T) {
	for _, tc := range []struct{ name, flag, network string }{
		{"resolver", "resolver-addr", ""},
		{"admin", "admin-addr", ""},
		{"dns", "dns-addr", "tcp"},
		{"hdl", "hdl-addr", "tcp"},
		{"dns", "dns-addr", "udp"},
		{"hdl", "hdl-addr", "udp"},
	} {
		t.Run(tc.name+"/"+tc.network, func(t *testing.T) {
			// For a UDP case the node binds the same port over TCP first, and
			// the UDP port this test holds may be another process's TCP port
			// on a busy machine: then the node rightly names its TCP
			// listener. That attempt is retried with a new port, only when
			// the TCP port is indeed held by someone else.
			for attempt := 1; ; attempt++ {
				var addr string
				var hold io.Closer
				if tc.network == "udp" {
					pc, err := net.ListenPacket("udp", "127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					hold, addr = pc, pc.LocalAddr().String()
				} else {
					ln, err := net.Listen("tcp", "127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					hold, addr = ln, ln.Addr().String()
				}
				data := filepath.Join(t.TempDir(), "data")
				got := failedStart(t, data, "--"+tc.flag, addr)
				where := addr
				if tc.network != "" {
					where += " (" + tc.network + ")"
				}
				msg := "pidnode serve: %s listener %s: address already in use; stop what holds it or set --%s"
				want := fmt.Sprintf(msg, tc.name, where, tc.flag)
				tcpTaken := fmt.Sprintf(msg, tc.name, addr+" (tcp)", tc.flag)
				if got != want && tc.network == "udp" && got == tcpTaken && attempt < 5 {
					if ln, err := net.Listen("tcp", addr); err != nil {
						hold.Close()
						checkDBFree(t, data)
						continue
					} else {
						ln.Close()
					}
				}
				if got != want {
					t.Errorf("\n got %s\nwant %s", got, want)
				}
				hold.Close()
				checkDBFree(t, data)
				return
			}
		})
	}
}

// TestStartFailsClosesEarlierListeners: when the last listener (hdl) cannot
// bind, the ones bound before it are free again after the exit, and so is
// the database.
func TestStartFailsClosesEarlierListeners(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t), "dns": freeAddr(t)}
	data := filepath.Join(t.TempDir(), "data")
	got := failedStart(t, data, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"],
		"--dns-addr", addrs["dns"], "--hdl-addr", held.Addr().String())
	if !strings.Contains(got, "hdl listener "+held.Addr().String()+" (tcp): address already in use") {
		t.Errorf("got %s, want the hdl listener's address in use", got)
	}
	checkAddrsFree(t, addrs)
	checkDBFree(t, data)
}

// TestStartNodeFailureReleasesEverything: inside the process too, a start
// that fails at its last listener returns an error (no panic) after closing
// the listeners it bound, the database and the store's goroutine.
func TestStartNodeFailureReleasesEverything(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t), "dns": freeAddr(t)}
	data := t.TempDir()
	cfg, _, err := loadConfig("serve", []string{"--data", data, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"],
		"--dns-addr", addrs["dns"], "--hdl-addr", held.Addr().String(), "--demo", "--linkcheck-interval", "0"}, func(string) string { return "" }, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := startNode(context.Background(), cfg, slog.New(slog.DiscardHandler))
	var se *startError
	if n != nil || !errors.As(err, &se) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("startNode = %v, %v; want nil and a *startError for the address in use", n, err)
	}
	checkAddrsFree(t, addrs)
	checkDBFree(t, data)
	if _, err := os.Stat(store.LockFile(dbPath(data))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after the failed start: %v", err)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "pidnode/store.(*DB)") {
		t.Errorf("a store goroutine outlives the failed start:\n%s", stacks)
	}
}

// TestStartFailsConfigFile: a config file that is missing, not TOML, or
// holds a setting pidnode does not know is named, with the problem.
func TestStartFailsConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.toml")
	bad := write("bad.toml", "data = \n")
	unknown := write("unknown.toml", "resolver_adr = \"127.0.0.1:0\"\n")
	wrongType := write("type.toml", "cache_entries = \"many\"\n")
	for _, tc := range []struct{ name, file, want string }{
		{"missing", missing, "pidnode serve: config file " + missing + ": no such file or directory; check --config or PIDNODE_CONFIG"},
		{"bad TOML", bad, "pidnode serve: config file " + bad + `: line 1 (last key "data"): expected value but found '\n' instead; fix it or check --config or PIDNODE_CONFIG`},
		{"unknown setting", unknown, "pidnode serve: config file " + unknown + `: unknown setting "resolver_adr"; its settings are the flags of pidnode serve -h with _ for -`},
		{"wrong type", wrongType, "pidnode serve: config file " + wrongType + `: line 1 (last key "cache_entries"): incompatible types: TOML value has type string; destination has type integer; fix it or check --config or PIDNODE_CONFIG`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			if got := failedStart(t, data, "--config", tc.file); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a start refused for its config file created the data directory")
			}
		})
	}
}

// TestStartFailsTLS: a certificate or key file that is missing, not PEM, or a
// key that does not belong to the certificate is named with its setting, and
// nothing stays bound or open.
func TestStartFailsTLS(t *testing.T) {
	cert, key, _ := selfSigned(t)
	_, otherKey, _ := selfSigned(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing certificate", []string{"--tls-cert", missing, "--tls-key", key},
			"resolver TLS certificate " + missing + ": no such file or directory; check --tls-cert"},
		{"missing key", []string{"--tls-cert", cert, "--tls-key", missing},
			"resolver TLS key " + missing + ": no such file or directory; check --tls-key"},
		{"garbage certificate", []string{"--tls-cert", garbage, "--tls-key", key},
			"resolver TLS certificate " + garbage + ": no PEM certificate in it; fix it or check --tls-cert"},
		{"garbage key", []string{"--tls-cert", cert, "--tls-key", garbage},
			"resolver TLS key " + garbage + ": no PEM private key in it; fix it or check --tls-key"},
		{"key of another certificate", []string{"--tls-cert", cert, "--tls-key", otherKey},
			"resolver TLS key " + otherKey + " and certificate " + cert + ": private key does not match public key; check --tls-cert and --tls-key"},
		{"certificate without key", []string{"--tls-cert", cert},
			"resolver TLS: --tls-cert is set but --tls-key is not; set both or neither"},
		{"admin: key of another certificate", []string{"--admin-tls-cert", cert, "--admin-tls-key", otherKey},
			"admin TLS key " + otherKey + " and certificate " + cert + ": private key does not match public key; check --admin-tls-cert and --admin-tls-key"},
		{"admin: missing certificate", []string{"--admin-tls-cert", missing, "--admin-tls-key", key},
			"admin TLS certificate " + missing + ": no such file or directory; check --admin-tls-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			addrs := map[string]string{"resolver": freeAddr(t)}
			args := append([]string{"--resolver-addr", addrs["resolver"]}, tc.args...)
			if got := failedStart(t, data, args...); got != "pidnode serve: "+tc.want {
				t.Errorf("\n got %s\nwant pidnode serve: %s", got, tc.want)
			}
			checkAddrsFree(t, addrs)
			checkDBFree(t, data)
		})
	}
}

// TestStartFailsModel: a --model file that is missing or not a valid model
// is named, before anything is opened (missing) or after (invalid: the
// database is released).
func TestStartFailsModel(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	noName := filepath.Join(dir, "noname.json")
	notModel := filepath.Join(dir, "model.toml")
	os.WriteFile(noName, []byte(`{"name":""}`), 0o600)
	os.WriteFile(notModel, []byte("this is not a model\n"), 0o600)
	for _, tc := range []struct{ name, file, want string }{
		{"missing", missing, "model file " + missing + ": no such file or directory; check --model"},
		{"invalid model", noName, "model file " + noName + ": invalid metadata model at name: missing; fix it or check --model"},
		{"not TOML", notModel, "model file " + notModel + ": invalid metadata model: TOML: toml: line 1: expected '.' or '=', but got 'i' instead; fix it or check --model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t)}
			got := failedStart(t, data, "--model", tc.file, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"])
			if got != "pidnode serve: "+tc.want {
				t.Errorf("\n got %s\nwant pidnode serve: %s", got, tc.want)
			}
			checkAddrsFree(t, addrs)
			checkDBFree(t, data)
		})
	}
}

// TestStartFailsGeoIPDB: a --geoip-db file that is missing or not a MaxMind
// DB stops the node at start-up, named, with nothing left open.
func TestStartFailsGeoIPDB(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.mmdb")
	junk := filepath.Join(dir, "junk.mmdb")
	os.WriteFile(junk, []byte("not a maxmind database"), 0o600)
	for _, tc := range []struct{ name, file, want string }{
		{"missing", missing, "GeoIP database " + missing + ": "},
		{"not a MaxMind DB", junk, "GeoIP database " + junk + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t)}
			got := failedStart(t, data, "--geoip-db", tc.file, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"])
			if !strings.HasPrefix(got, "pidnode serve: "+tc.want) || !strings.Contains(got, "--geoip-db") {
				t.Errorf("\n got %s\nwant pidnode serve: %s…--geoip-db", got, tc.want)
			}
			checkAddrsFree(t, addrs)
			checkDBFree(t, data)
		})
	}
}

// TestStartFailsReadableKeyFile: a key file others may read is refused with
// the mode and the chmod that fixes it, and nothing is left open; once the
// mode is 0600 the same files start a node.
func TestStartFailsReadableKeyFile(t *testing.T) {
	dir := t.TempDir()
	opKey := filepath.Join(dir, "operator.key")
	if err := os.WriteFile(opKey, []byte("pidop_"+strings.Repeat("a", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hdlKey := filepath.Join(dir, "hdl.pem")
	if out, err := exec.Command(pidnodeBin(t), "keygen", hdlKey).CombinedOutput(); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, file string
		mode       os.FileMode
		extra      []string
		want       string
	}{
		{"operator key world-readable", opKey, 0o644, nil,
			"operator key file " + opKey + " is readable by other users (mode 0644); run chmod 600 " + opKey + ", or point --operator-key-file at a file only this user can read"},
		{"operator key group-readable", opKey, 0o640, nil,
			"operator key file " + opKey + " is readable by other users (mode 0640); run chmod 600 " + opKey + ", or point --operator-key-file at a file only this user can read"},
		{"signing key world-readable", hdlKey, 0o604, []string{"--hdl-key", hdlKey},
			"native-protocol signing key " + hdlKey + " is readable by other users (mode 0604); run chmod 600 " + hdlKey + ", or point --hdl-key at a file only this user can read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Chmod(tc.file, tc.mode); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(tc.file, 0o600)
			data := filepath.Join(t.TempDir(), "data")
			addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t)}
			args := append([]string{"--operator-key-file", opKey, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"]}, tc.extra...)
			got := failedStart(t, data, args...)
			if got != "pidnode serve: "+tc.want {
				t.Errorf("\n got %s\nwant pidnode serve: %s", got, tc.want)
			}
			checkAddrsFree(t, addrs)
			checkDBFree(t, data)
		})
	}
	// The same files at 0600 are accepted.
	n := startBinary(t, filepath.Join(t.TempDir(), "data"), "--operator-key-file", opKey, "--hdl-key", hdlKey)
	n.stop(t)
}

// TestStartFailsNodeNameTaken: a cluster node whose --node-name another
// running node holds says which one and exits; the same node restarted at
// once after a SIGKILL takes its name back, a clean stop frees the name at
// once, and the name reserved for seeded statistics is refused.
func TestStartFailsNodeNameTaken(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: 4096, MaxRequestBytes: 8 << 20})
	flags := func(name string) []string { return []string{"--etcd-endpoints", c.Endpoints(), "--node-name", name} }
	dataA, dataB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := startBinary(t, dataA, flags("n1")...)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	absA, err := filepath.EvalSymlinks(dataA)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pidnode serve: node name n1 is held by another running node (host %s, data directory %s); "+
		"give each node its own --node-name, or stop that node (a crashed node's name is free after 10 s)", host, absA)
	if got := failedStart(t, dataB, flags("n1")...); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	checkDBFree(t, dataB)

	// SIGKILL leaves the name's lease alive for 10 s; the same node started
	// again takes it over at once.
	a.cmd.Process.Kill()
	<-a.done
	a = startBinary(t, dataA, flags("n1")...)
	if got := failedStart(t, dataB, flags("n1")...); got != want {
		t.Errorf("after the restart:\n got %s\nwant %s", got, want)
	}
	// A clean stop gives the name up at once.
	a.stop(t)
	b := startBinary(t, dataB, flags("n1")...)
	b.stop(t)

	got := failedStart(t, t.TempDir(), flags("seed")...)
	if want := "pidnode serve: node name \"seed\" is reserved for the statistics loaded by `pidnode cluster seed`; choose another --node-name"; got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// TestStartFailsPolicy: a --policy-file that is missing, has an unknown key
// or lacks the text is named before anything is opened.
func TestStartFailsPolicy(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.toml")
	unknown := filepath.Join(dir, "unknown.toml")
	noText := filepath.Join(dir, "notext.toml")
	os.WriteFile(unknown, []byte("version = \"2\"\ntitle = \"T\"\ntext = \"x\"\nmax_open = 1\n"), 0o600)
	os.WriteFile(noText, []byte("version = \"2\"\ntitle = \"T\"\n"), 0o600)
	for _, tc := range []struct{ name, file, want string }{
		{"missing", missing, "policy file " + missing + ": no such file or directory; check --policy-file"},
		{"unknown key", unknown, "policy file " + unknown + ": unknown key \"max_open\" (known: version, title, text, contact, max_open_per_email, applications_per_hour); fix it or check --policy-file"},
		{"no text", noText, "policy file " + noText + ": version, title and text are required; fix it or check --policy-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			addrs := map[string]string{"resolver": freeAddr(t), "admin": freeAddr(t)}
			got := failedStart(t, data, "--policy-file", tc.file, "--resolver-addr", addrs["resolver"], "--admin-addr", addrs["admin"])
			if got != "pidnode serve: "+tc.want {
				t.Errorf("\n got %s\nwant pidnode serve: %s", got, tc.want)
			}
			checkAddrsFree(t, addrs)
		})
	}
}
