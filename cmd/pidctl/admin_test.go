package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidnode/admin"
	"pidnode/handlev"
	"pidnode/linkcheck"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/stats"
	"pidnode/store"
	"pidnode/webhook"
)

const opKey = "operator-key-for-pidctl-tests-0123"

// adminServer runs a real admin API over a real store.
func adminServer(t *testing.T) (url, opKeyFile string) {
	t.Helper()
	n := adminNode(t, nil)
	return n.url, n.opKeyFile
}

// node is a real admin API over a real store, on a loopback listener.
type node struct {
	url, opKeyFile string
	db             *store.DB
	namer          *handlev.Namer
}

// adminNode starts a node; mod, if set, changes its admin configuration.
func adminNode(t *testing.T, mod func(*admin.Config)) *node {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(store.Config{Path: filepath.Join(dir, "db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: m.URL.Index})
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := webhook.Routes(webhook.RoutesConfig{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	// The features' routes, as a node has them.
	routes := append(stats.New(stats.Config{DB: db, Namer: namer}).Routes(), hooks...)
	cfg := admin.Config{DB: db, Namer: namer, OperatorKey: opKey, Routes: append(routes, linkcheck.Routes(db, namer)...)}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close(); db.Close() })
	n := &node{url: ts.URL, opKeyFile: filepath.Join(dir, "operator.key"), db: db, namer: namer}
	os.WriteFile(n.opKeyFile, []byte(opKey+"\n"), 0o600)
	return n
}

// pidctl runs the command and returns exit code, stdout, stderr.
func pidctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := pidctl(t, args...)
	if code != 0 {
		t.Fatalf("pidctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func TestPidctlAdminFlow(t *testing.T) {
	url, opFile := adminServer(t)
	op := []string{"--admin", url, "--key-file", opFile}
	dir := t.TempDir()

	// apply (JSON) → applications table → approve (JSON, to capture the secret).
	var app struct{ ID, State string }
	out := mustRun(t, append(op, "--json", "apply", "--organisation", "Catalysis Institute",
		"--tech-name", "Tech", "--tech-email", "tech@example.org", "--admin-name", "Boss", "--admin-email", "boss@example.org",
		"--policy-version", "1", "--maintenance", "The repository team keeps landing pages.")...)
	if err := json.Unmarshal([]byte(out), &app); err != nil || app.State != "SUBMITTED" {
		t.Fatalf("apply: %q %v", out, err)
	}
	out = mustRun(t, append(op, "applications", "--state", "SUBMITTED")...)
	if !strings.Contains(out, "ID") || !strings.Contains(out, app.ID) || !strings.Contains(out, "Catalysis Institute") {
		t.Errorf("applications table:\n%s", out)
	}
	out = mustRun(t, append(op, "approve", app.ID, "--namespace", "CAT", "--custom-ids", "true", "--note", "welcome")...)
	if !strings.Contains(out, "namespace CAT") || !strings.Contains(out, "pid_") {
		t.Fatalf("approve:\n%s", out)
	}
	secret := out[strings.Index(out, "pid_"):]
	secret = strings.TrimSpace(secret)
	keyFile := filepath.Join(dir, "snaa.key")
	os.WriteFile(keyFile, []byte(secret), 0o600)
	sn := []string{"--admin", url, "--key-file", keyFile}

	out = mustRun(t, append(op, "snaas")...)
	if !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, "CAT") {
		t.Errorf("snaas table:\n%s", out)
	}
	var snaas struct{ SNAAs []struct{ ID string } }
	json.Unmarshal([]byte(mustRun(t, append(op, "snaas", "--json")...)), &snaas)
	snaaID := snaas.SNAAs[0].ID

	// create with --url/--metadata, get, update, history, list.
	meta := filepath.Join(dir, "meta.json")
	os.WriteFile(meta, []byte(`{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0",
		"curation_contact":"pids@example.org","resource_info":{"label":"Sample","resource_category":"SAMPLE",
		"representation_variants":[{"variant_url":"https://example.org/s.ttl","media_type":"text/turtle"}]}}`), 0o600)
	var id struct {
		Handle  string
		Version int
	}
	out = mustRun(t, append(sn, "create", "--url", "https://example.org/s", "--metadata", meta, "--json")...)
	if err := json.Unmarshal([]byte(out), &id); err != nil || !strings.HasPrefix(id.Handle, "21.12345/svc/CAT/") {
		t.Fatalf("create: %q %v", out, err)
	}
	out = mustRun(t, append(sn, "get", id.Handle)...)
	if !strings.Contains(out, "REGISTERED") || !strings.Contains(out, "https://example.org/s") {
		t.Errorf("get:\n%s", out)
	}
	short := strings.Replace(id.Handle, "/svc/", "/", 1)
	out = mustRun(t, append(sn, "update", short, "--url", "https://example.org/moved", "--if-match", "1")...)
	if !strings.Contains(out, "moved") || !strings.Contains(out, "version:   2") {
		t.Errorf("update:\n%s", out)
	}
	code, _, errs := pidctl(t, append(sn, "update", short, "--url", "https://example.org/again", "--if-match", "1")...)
	if code != 1 || !strings.Contains(errs, "412") {
		t.Errorf("stale update: exit %d, %s", code, errs)
	}
	code, _, errs = pidctl(t, append(sn, "update", short, "--url", "javascript:alert(1)")...)
	if code != 1 || !strings.Contains(errs, "422") || !strings.Contains(errs, "url:") {
		t.Errorf("invalid update: exit %d, %s", code, errs)
	}
	out = mustRun(t, append(sn, "history", id.Handle)...)
	if !strings.Contains(out, "handle.update") || !strings.Contains(out, "initial (") ||
		!strings.Contains(out, "https://example.org/s → https://example.org/moved") {
		t.Errorf("history:\n%s", out)
	}
	out = mustRun(t, append(sn, "stats")...)
	if !strings.Contains(out, "resolutions of namespace CAT") || !strings.Contains(out, "DAY") {
		t.Errorf("stats:\n%s", out)
	}
	out = mustRun(t, append(sn, "stats", short, "--from", "2026-01-01", "--to", "2026-01-31")...)
	if !strings.Contains(out, "resolutions of "+id.Handle+", 2026-01-01 to 2026-01-31: 0") {
		t.Errorf("stats HANDLE:\n%s", out)
	}
	out = mustRun(t, append(sn, "--test", "create", "--custom-id", "batch-1", "--url", "https://example.org/b", "--metadata", meta)...)
	if !strings.Contains(out, "21.T12345/svc/CAT/BATCH-1") {
		t.Errorf("custom create under test prefix:\n%s", out)
	}
	mustRun(t, append(sn, "get", "21.T12345/CAT/batch-1")...)
	out = mustRun(t, append(sn, "list")...)
	if !strings.Contains(out, id.Handle) {
		t.Errorf("list:\n%s", out)
	}

	// keys issue / list / revoke; a revoked key fails.
	out = mustRun(t, append(op, "keys", "issue", snaaID, "--name", "ci", "--json")...)
	var k struct{ ID, Secret string }
	json.Unmarshal([]byte(out), &k)
	ciFile := filepath.Join(dir, "ci.key")
	os.WriteFile(ciFile, []byte(k.Secret), 0o600)
	mustRun(t, "--admin", url, "--key-file", ciFile, "whoami")
	out = mustRun(t, append(op, "keys", "list", snaaID)...)
	if !strings.Contains(out, "LAST USED") || !strings.Contains(out, k.ID) || strings.Contains(out, "pid_") {
		t.Errorf("keys list:\n%s", out)
	}
	mustRun(t, append(op, "keys", "revoke", snaaID, k.ID)...)
	code, _, errs = pidctl(t, "--admin", url, "--key-file", ciFile, "whoami")
	if code != 1 || !strings.Contains(errs, "401") {
		t.Errorf("revoked key: exit %d %s", code, errs)
	}
	// SNAA key on an operator command: 403.
	code, _, errs = pidctl(t, append(sn, "snaas")...)
	if code != 1 || !strings.Contains(errs, "403") {
		t.Errorf("SNAA on snaas: exit %d %s", code, errs)
	}
	// reject, audit.
	var app2 struct{ ID string }
	json.Unmarshal([]byte(mustRun(t, append(op, "--json", "apply", "--organisation", "Other", "--tech-name", "T", "--tech-email", "t@example.org",
		"--admin-name", "A", "--admin-email", "a@example.org", "--policy-version", "1", "--maintenance", "x")...)), &app2)
	out = mustRun(t, append(op, "reject", app2.ID, "--note", "not a research organisation")...)
	if !strings.Contains(out, "REJECTED") {
		t.Errorf("reject:\n%s", out)
	}
	out = mustRun(t, append(op, "audit", "--limit", "1000")...)
	for _, a := range []string{"application.approve", "key.revoke", "handle.update", "application.reject"} {
		if !strings.Contains(out, a) {
			t.Errorf("audit lacks %s:\n%s", a, out)
		}
	}
	// bulk from CSV: an update of the first identifier and a failing row.
	csvFile := filepath.Join(dir, "items.csv")
	os.WriteFile(csvFile, []byte("op,id,url,status\nupdate,"+strings.Split(id.Handle, "/")[3]+",,DEPRECATED\ncreate,,https://example.org/nometa,\n"), 0o600)
	code, out, errs = pidctl(t, append(sn, "bulk", csvFile)...)
	if code != 1 || !strings.Contains(out, "200") || !strings.Contains(out, "422") || !strings.Contains(out, "2 items, 1 failed") {
		t.Errorf("bulk csv: exit %d\n%s", code, out)
	}
	if !strings.Contains(errs, "bulk: 2/2 items sent (100%), 1 failed") {
		t.Errorf("bulk progress: %q", errs)
	}
	jl := filepath.Join(dir, "items.jsonl")
	m, _ := os.ReadFile(meta)
	os.WriteFile(jl, []byte(`{"url":"https://example.org/j1","metadata":`+strings.ReplaceAll(string(m), "\n", "")+"}\n"), 0o600)
	out = mustRun(t, append(sn, "bulk", jl, "--json")...)
	if !strings.Contains(out, `"status":201`) {
		t.Errorf("bulk jsonl: %s", out)
	}
	// backup writes a database file.
	bk := filepath.Join(dir, "backup.db")
	out = mustRun(t, append(op, "backup", bk)...)
	if st, err := os.Stat(bk); err != nil || st.Size() == 0 || !strings.Contains(out, "backup written") {
		t.Errorf("backup: %v %s", err, out)
	}
	// Usage errors exit 2.
	if code, _, _ := pidctl(t, append(op, "frobnicate")...); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
}
