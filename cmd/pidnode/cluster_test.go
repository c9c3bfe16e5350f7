package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidnode/internal/etcdtest"
)

// A cluster node that cannot join says why in one line: etcd not
// answering, etcd's limits too small for a bulk write, a database that is
// a single node's rather than a replica.
func TestClusterStartErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	line := failedStart(t, t.TempDir(), "--etcd-endpoints", closed)
	if !strings.Contains(line, "etcd "+closed+" did not answer") || !strings.Contains(line, "--etcd-endpoints") {
		t.Errorf("etcd down: %q", line)
	}

	small := etcdtest.Start(t, 1, etcdtest.Options{})
	line = failedStart(t, t.TempDir(), "--etcd-endpoints", small.Endpoints())
	if !strings.Contains(line, "--max-txn-ops") || !strings.Contains(line, "--max-txn-ops=4096 --max-request-bytes=8388608") {
		t.Errorf("small etcd limits: %q", line)
	}

	ok := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: 4096, MaxRequestBytes: 8 << 20})
	data := t.TempDir()
	runCmd(t, referenceRecord+"\n", "import", "--data", data, "--extra-prefix", "123", "-")
	line = failedStart(t, data, "--etcd-endpoints", ok.Endpoints(), "--etcd-prefix", "/other/")
	if !strings.Contains(line, "pidnode.db holds data of its own") || !strings.Contains(line, "pidnode cluster seed") {
		t.Errorf("single node's data: %q", line)
	}

	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	line = failedStart(t, t.TempDir(), "--etcd-endpoints", ok.Endpoints(), "--etcd-password-file", pw)
	if !strings.Contains(line, "--etcd-username and --etcd-password-file go together") {
		t.Errorf("password without user: %q", line)
	}
}
