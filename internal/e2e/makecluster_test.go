package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeCluster runs bench/cluster.sh (make cluster) with the real binaries
// in a network namespace of its own (its fixed loopback ports then collide
// with nothing), and wants one operator key for the three nodes (one file,
// named by every node's banner, and no key of a node's own) and node 1's
// whole banner in the script's output: the operator key's location, the
// console, the demo key and the create example.
func TestMakeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members and three nodes")
	}
	if err := exec.Command("unshare", "-n", "ip", "link", "set", "lo", "up").Run(); err != nil {
		t.Skipf("no network namespace for the script's fixed ports (unshare -n ip link set lo up: %v)", err)
	}
	root := t.TempDir()
	bin, dir := filepath.Join(root, "bin"), filepath.Join(root, "data-cluster")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "etcd"), "pidnode/bench/cmd/etcd").CombinedOutput(); err != nil {
		t.Fatalf("go build etcd: %v\n%s", err, out)
	}
	if err := os.Symlink(binPath, filepath.Join(bin, "pidnode")); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../bench/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec bash "$0"`, script)
	cmd.Env = append(os.Environ(), "BIN="+bin, "DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// The script's trap stops etcd and the nodes; whatever is left after
		// 3 s goes with the namespace's process group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), "Ctrl-C stops everything"); {
		select {
		case <-done:
			t.Fatalf("make cluster ended:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("make cluster not up after 60 s:\n%s", out.String())
		}
	}
	got := out.String()
	key := filepath.Join(dir, "operator.key")
	for _, want := range []string{"cluster     node node1", "operator key in " + key, "/console/", "/apply", "pid_",
		"Create an identifier", "curl -sS -X PUT", "One operator key for every node: " + key} {
		if !strings.Contains(got, want) {
			t.Errorf("make cluster's output lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("no shared operator key: %v", err)
	}
	for _, i := range []string{"1", "2", "3"} {
		b, _ := os.ReadFile(filepath.Join(dir, "node"+i+".out"))
		if !strings.Contains(string(b), "operator key in "+key+"\n") {
			t.Errorf("node%s does not use the shared operator key:\n%s", i, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "node"+i, "operator.key")); err == nil {
			t.Errorf("node%s made an operator key of its own", i)
		}
	}

	// Ctrl-C after etcd went away first (killed: a member that has lost
	// its quorum may take long over a graceful stop): the nodes cannot say goodbye to
	// etcd, and the script must still end within the nodes' shutdown
	// timeout (15 s), leaving no process behind. The paths under root are
	// this test's own, so pkill and pgrep match no other process.
	etcdBin := filepath.Join(bin, "etcd")
	exec.Command("pkill", "-KILL", "-f", etcdBin).Run()
	for deadline := time.Now().Add(10 * time.Second); exec.Command("pgrep", "-f", etcdBin).Run() == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			ps, _ := exec.Command("pgrep", "-a", "-f", etcdBin).Output()
			t.Fatalf("etcd still running 10 s after SIGKILL:\n%s", ps)
		}
	}
	start := time.Now()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // what a terminal's Ctrl-C sends
	select {
	case <-done:
		t.Logf("make cluster ended %v after Ctrl-C, etcd stopped first", time.Since(start).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatalf("make cluster still running 15 s after Ctrl-C with etcd stopped first:\n%s", out.String())
	}
	if err := exec.Command("pgrep", "-f", root).Run(); err == nil {
		ps, _ := exec.Command("pgrep", "-a", "-f", root).Output()
		t.Errorf("processes left after make cluster ended:\n%s", ps)
	}
}
