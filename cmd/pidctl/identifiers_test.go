package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onboard applies and approves an SNAA with namespace ns (custom ids on)
// on node n, and returns the command line prefix of its key.
func onboard(t *testing.T, n *node, ns string) []string {
	t.Helper()
	var app struct{ ID string }
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"--admin", n.url, "--json"}, applyArgs...)...)), &app); err != nil {
		t.Fatal(err)
	}
	var res struct{ Key struct{ Secret string } }
	if err := json.Unmarshal([]byte(mustRun(t, "--admin", n.url, "--key-file", n.opKeyFile, "--json", "approve", app.ID, "--namespace", ns, "--custom-ids")), &res); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), ns+".key")
	os.WriteFile(f, []byte(res.Key.Secret), 0o600)
	return []string{"--admin", n.url, "--key-file", f}
}

// testMeta writes a valid pid4cat metadata file and returns its name.
func testMeta(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "meta.json")
	os.WriteFile(f, []byte(`{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0",
		"curation_contact":"pids@example.org","resource_info":{"label":"Sample","resource_category":"SAMPLE",
		"representation_variants":[{"variant_url":"https://example.org/s.ttl","media_type":"text/turtle"}]}}`), 0o600)
	return f
}

// TestPidctlStatusAndHistory: --status sets the record's status on create
// (over the metadata file's) and alone on update; list --status with a
// value the model does not have fails naming the allowed ones; history
// shows every field a write changed, the status too.
func TestPidctlStatusAndHistory(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "STA")
	meta := testMeta(t)
	var id struct {
		Handle   string
		Metadata struct{ Status string }
	}
	out := mustRun(t, append(sn, "create", "--url", "https://example.org/a", "--metadata", meta, "--status", "SUBMITTED", "--json")...)
	if err := json.Unmarshal([]byte(out), &id); err != nil || id.Metadata.Status != "SUBMITTED" {
		t.Fatalf("create --status SUBMITTED: %v\n%s", err, out)
	}
	out = mustRun(t, append(sn, "update", id.Handle, "--status", "DEPRECATED")...)
	if !strings.Contains(out, "status:    DEPRECATED") || !strings.Contains(out, "https://example.org/a") {
		t.Errorf("update --status DEPRECATED:\n%s", out)
	}
	patch := filepath.Join(t.TempDir(), "patch.json")
	os.WriteFile(patch, []byte(`{"url":"https://example.org/b"}`), 0o600)
	out = mustRun(t, append(sn, "update", id.Handle, "--file", patch, "--status", "REGISTERED")...)
	if !strings.Contains(out, "status:    REGISTERED") || !strings.Contains(out, "https://example.org/b") {
		t.Errorf("update --file --status REGISTERED:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "update", id.Handle, "--status", "GONE")...); code != 1 || !strings.Contains(errs, "metadata.status") {
		t.Errorf("update --status GONE: exit %d %s", code, errs)
	}

	code, out, errs := pidctl(t, append(sn, "list", "--status", "bogus")...)
	if code == 0 || out != "" || !strings.Contains(errs, "SUBMITTED, REGISTERED, OBSOLETED, DEPRECATED") {
		t.Errorf("list --status bogus: exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
	if out := mustRun(t, append(sn, "list", "--status", "registered")...); !strings.Contains(out, id.Handle) {
		t.Errorf("list --status registered:\n%s", out)
	}

	out = mustRun(t, append(sn, "history", id.Handle)...)
	for _, want := range []string{
		"handle.create", "url: https://example.org/a", "metadata.status: SUBMITTED", "metadata.resource_info.label: Sample",
		"metadata.status: SUBMITTED → DEPRECATED",
		"url: https://example.org/a → https://example.org/b", "metadata.status: DEPRECATED → REGISTERED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	// The status-only update is one line: the fields it left alone are not shown.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "SUBMITTED → DEPRECATED") && strings.Contains(l, "url:") {
			t.Errorf("history line of the status change names the URL: %q", l)
		}
	}
}

// TestPidctlCustomIDAsTyped: a custom id goes to the node as typed; the node
// stores it in upper case, and pidctl says so instead of hiding it.
func TestPidctlCustomIDAsTyped(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "CID")
	meta := testMeta(t)
	code, out, errs := pidctl(t, append(sn, "create", "--custom-id", "batch-1", "--url", "https://example.org/b", "--metadata", meta)...)
	if code != 0 || !strings.Contains(out, "21.12345/svc/CID/BATCH-1") ||
		!strings.Contains(errs, `the node wrote the id "batch-1" as "BATCH-1" (handle 21.12345/svc/CID/BATCH-1)`) {
		t.Errorf("create --custom-id batch-1: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, _, errs = pidctl(t, append(sn, "create", "--custom-id", "BATCH-2", "--url", "https://example.org/b", "--metadata", meta)...)
	if code != 0 || errs != "" {
		t.Errorf("create --custom-id BATCH-2: exit %d, stderr %q, want no note", code, errs)
	}
}

// TestPidctlHintsNameOptions: the API's advice reaches the user in pidctl's
// options, not in HTTP headers.
func TestPidctlHintsNameOptions(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "HNT")
	meta := testMeta(t)
	for _, c := range []struct {
		name     string
		args     []string
		want     []string
		mustNot  string
		wantCode int
	}{
		{"no key", []string{"--admin", n.url, "whoami"}, []string{"401", "--key-file FILE", "PIDCTL_KEY_FILE"}, "Authorization", 1},
		{"no key, backup", []string{"--admin", n.url, "backup", filepath.Join(t.TempDir(), "b.db")}, []string{"401", "--key-file FILE", "PIDCTL_KEY_FILE"}, "Authorization", 1},
		{"custom id taken", append(sn, "create", "--custom-id", "h1", "--url", "https://example.org/h", "--metadata", meta),
			[]string{"409", "already exists; update it with pidctl update HANDLE"}, "If-None-Match", 1},
		{"stale --if-match", append(sn, "update", "21.12345/HNT/H1", "--url", "https://example.org/x", "--if-match", "7"),
			[]string{"412", "is at version 1, not 7", "retry with --if-match 1"}, "ETag", 1},
		{"idempotency key reused", append(sn, "create", "--idempotency-key", "k1", "--url", "https://example.org/other", "--metadata", meta),
			[]string{"--idempotency-key \"k1\" was already used", "give a new --idempotency-key"}, "Idempotency-Key", 1},
	} {
		if c.name == "custom id taken" {
			mustRun(t, c.args...)
		}
		if c.name == "idempotency key reused" {
			mustRun(t, append(sn, "create", "--idempotency-key", "k1", "--url", "https://example.org/first", "--metadata", meta)...)
		}
		code, _, errs := pidctl(t, c.args...)
		if code != c.wantCode || strings.Contains(errs, c.mustNot) {
			t.Errorf("%s: exit %d, stderr %s", c.name, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, errs)
			}
		}
	}
}

// TestPidctlListSearch: list --q finds by words of the URL and id, --sort
// and --page give numbered pages with a total, --format csv exports every
// match.
func TestPidctlListSearch(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "LS")
	meta := testMeta(t)
	for _, c := range []struct{ id, url string }{{"ZINC-1", "https://example.org/zinc"}, {"CU-2", "https://example.org/copper"}, {"ZINC-3", "https://example.net/zinc"}} {
		mustRun(t, append(sn, "create", "--custom-id", c.id, "--url", c.url, "--metadata", meta)...)
	}
	out := mustRun(t, append(sn, "list", "--q", "zinc example.net")...)
	if !strings.Contains(out, "LS/ZINC-3") || strings.Contains(out, "ZINC-1") || !strings.Contains(out, "page 1 of 1 (1 identifiers)") {
		t.Errorf("list --q 'zinc example.net':\n%s", out)
	}
	out = mustRun(t, append(sn, "list", "--sort", "-id", "--page", "2", "--limit", "2")...)
	if !strings.Contains(out, "LS/CU-2") || strings.Contains(out, "ZINC") || !strings.Contains(out, "page 2 of 2 (3 identifiers)") {
		t.Errorf("list --sort -id --page 2 --limit 2:\n%s", out)
	}
	out = mustRun(t, append(sn, "list", "--q", "zinc", "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] != "handle,id,label,status,url,created,updated" || !strings.Contains(lines[1], ",ZINC-1,Sample,REGISTERED,https://example.org/zinc,") {
		t.Errorf("list --q zinc --format csv:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "list", "--sort", "size")...); code == 0 || !strings.Contains(errs, "sort") {
		t.Errorf("list --sort size: exit %d, stderr %q; want a failure naming sort", code, errs)
	}
}

// TestPidctlBulkCSV: bulk reads the bulk CSV (one column per model field);
// each result names the line its row starts on (a quoted cell may span
// lines), an update of an unknown id fails in words and creates nothing,
// and the summary counts created, updated and failed rows.
func TestPidctlBulkCSV(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "BC")
	f := filepath.Join(t.TempDir(), "items.csv")
	os.WriteFile(f, []byte("op,id,url,status,curation_contact,schema_version,metadata_license,resource_info.label,resource_info.description,resource_info.resource_category,resource_info.representation_variants\n"+
		`create,B-1,https://example.org/b1,REGISTERED,c@example.org,v1.0.1,CC0-1.0,Boron,"two`+"\n"+`lines",SAMPLE,"[{""variant_url"":""https://example.org/b1.ttl""}]"`+"\n"+
		"update,NONE-2,https://example.org/none,,,,,,,,\n"+
		"update,B-1,,OBSOLETED,,,,,,,\n"), 0o600)
	code, out, errs := pidctl(t, append(sn, "bulk", f)...)
	if code != 1 || !strings.Contains(out, "3 items, 1 failed (1 created, 1 updated)") {
		t.Fatalf("bulk: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"2     201", "4     404", "no identifier 21.12345/svc/BC/NONE-2", "5     200"} {
		if !strings.Contains(out, want) {
			t.Errorf("bulk output lacks %q:\n%s", want, out)
		}
	}
	if out := mustRun(t, append(sn, "get", "21.12345/svc/BC/B-1")...); !strings.Contains(out, "OBSOLETED") {
		t.Errorf("B-1 after the bulk:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "get", "21.12345/svc/BC/NONE-2")...); code == 0 || !strings.Contains(errs, "404") {
		t.Errorf("get of the unknown id: exit %d, %s; want a 404 (the update must not create it)", code, errs)
	}
}
