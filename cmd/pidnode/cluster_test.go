package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"pidnode/internal/etcdtest"
	"pidnode/store"
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

// A cluster node's /metrics carries the cluster families and passes
// promlint; its welcome text names the node.
func TestClusterMetrics(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: 4096, MaxRequestBytes: 8 << 20})
	n, cancel, done := startTestNode(t, t.TempDir(), "--demo", "--etcd-endpoints", c.Endpoints(), "--node-name", "m1")
	defer stopTestNode(t, cancel, done)
	var welcome bytes.Buffer
	n.printWelcome(&welcome)
	if !strings.Contains(welcome.String(), "cluster     node m1") {
		t.Errorf("welcome text:\n%s", welcome.String())
	}
	_, body := get(t, "http://"+n.addr("admin")+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{"pidnode_cluster_node_info", "pidnode_cluster_applied_revision", "pidnode_cluster_lag_revisions",
		"pidnode_cluster_lag_seconds", "pidnode_cluster_etcd_rtt_seconds", "pidnode_cluster_resyncs_total",
		"pidnode_cluster_watch_restarts_total", "pidnode_cluster_etcd_txns_total", "pidnode_cluster_applies_total", "pidnode_cluster_connected"} {
		if fams[want] == nil {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The demo's writes went through etcd and were applied here.
	if f := fams["pidnode_cluster_applied_revision"]; f == nil || f.Metric[0].GetGauge().GetValue() < 5 {
		t.Errorf("applied revision: %v", f)
	}
	if f := fams["pidnode_cluster_etcd_txns_total"]; f == nil || f.Metric[0].GetCounter().GetValue() < 5 {
		t.Errorf("etcd transactions: %v", f)
	}
}

// `pidnode import` refuses a cluster node's copy: what it wrote would be on
// that node alone.
func TestImportRefusesReplica(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(store.Config{Path: dbPath(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *store.Tx) error { return tx.SetAppliedRevision(42) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out, errb bytes.Buffer
	code := run([]string{"import", "--data", dir, "--extra-prefix", "123", "-"}, func(string) string { return "" },
		strings.NewReader(referenceRecord+"\n"), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "cluster node's copy of etcd (applied revision 42)") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("import into a replica: exit %d, stderr %q", code, errb.String())
	}
}
