package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidnode/linkcheck"
	"pidnode/model"
	"pidnode/registry"
)

// TestPidctlOwnKeys: with its key an SNAA lists its keys, issues itself
// another, and revokes the first with the second; the revoked key then
// fails. The operator's forms with SNAA_ID keep working.
func TestPidctlOwnKeys(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "KEY")
	out := mustRun(t, append(sn, "keys", "list")...)
	if !strings.Contains(out, "initial") || strings.Count(out, "key_") != 1 || strings.Contains(out, "pid_") {
		t.Fatalf("keys list (own):\n%s", out)
	}
	first := strings.Fields(strings.Split(out, "\n")[1])[0]
	var k struct{ ID, Secret string }
	if err := json.Unmarshal([]byte(mustRun(t, append(sn, "keys", "create", "--name", "rotated", "--json")...)), &k); err != nil || !strings.HasPrefix(k.Secret, "pid_") {
		t.Fatalf("keys create: %+v %v", k, err)
	}
	second := []string{"--admin", n.url, "--key-file", writeKey(t, k.Secret)}
	if out := mustRun(t, append(second, "keys", "list")...); !strings.Contains(out, "rotated") || !strings.Contains(out, first) {
		t.Errorf("keys list with the new key:\n%s", out)
	}
	if out := mustRun(t, append(second, "keys", "revoke", first)...); !strings.Contains(out, "key "+first+" revoked") {
		t.Errorf("keys revoke %s:\n%s", first, out)
	}
	if code, _, errs := pidctl(t, append(sn, "whoami")...); code != 1 || !strings.Contains(errs, "401") {
		t.Errorf("the revoked first key: exit %d %s", code, errs)
	}
	if code, _, errs := pidctl(t, append(second, "keys", "create")...); code != 1 || !strings.Contains(errs, "name") {
		t.Errorf("keys create without --name: exit %d %s", code, errs)
	}
	op := []string{"--admin", n.url, "--key-file", n.opKeyFile}
	var snaas struct{ SNAAs []struct{ ID string } }
	json.Unmarshal([]byte(mustRun(t, append(op, "snaas", "--json")...)), &snaas)
	if out := mustRun(t, append(op, "keys", "list", snaas.SNAAs[0].ID)...); !strings.Contains(out, "rotated") {
		t.Errorf("operator keys list SNAA_ID:\n%s", out)
	}
}

func writeKey(t *testing.T, secret string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(f, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPidctlEvents: the change feed lists each write with what changed, a
// page at a time; --after continues and --all reads every page.
func TestPidctlEvents(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "EVT")
	meta := testMeta(t)
	for _, id := range []string{"e1", "e2", "e3"} {
		mustRun(t, append(sn, "create", "--custom-id", id, "--url", "https://example.org/"+id, "--metadata", meta)...)
	}
	mustRun(t, append(sn, "update", "21.12345/EVT/E1", "--status", "DEPRECATED")...)
	out := mustRun(t, append(sn, "events", "--limit", "2")...)
	if !strings.Contains(out, "21.12345/svc/EVT/E1") || !strings.Contains(out, "url: https://example.org/e1; status: REGISTERED") ||
		strings.Contains(out, "/E3") || !strings.Contains(out, "next: --after ") {
		t.Fatalf("events --limit 2:\n%s", out)
	}
	next := strings.TrimSpace(out[strings.LastIndex(out, "--after ")+len("--after "):])
	out = mustRun(t, append(sn, "events", "--after", next)...)
	if strings.Contains(out, "/E2") || !strings.Contains(out, "/E3") || !strings.Contains(out, "status: REGISTERED → DEPRECATED") {
		t.Errorf("events --after %s:\n%s", next, out)
	}
	out = mustRun(t, append(sn, "events", "--limit", "1", "--all")...)
	if strings.Count(out, "handle.create") != 3 || strings.Count(out, "handle.update") != 1 {
		t.Errorf("events --limit 1 --all:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "events", "--after", "-1")...); code != 1 || !strings.Contains(errs, "after") {
		t.Errorf("events --after -1: exit %d %s", code, errs)
	}
}

// TestPidctlWebhooks: an endpoint is registered (its secret shown once),
// listed, read, enabled (a no-op while active), its deliveries listed and
// deleted.
func TestPidctlWebhooks(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "WHK")
	out := mustRun(t, append(sn, "webhooks", "add", "--url", "https://hooks.example.org/p", "--kind", "handle.create", "--description", "ci")...)
	if !strings.Contains(out, "whsec_") || !strings.Contains(out, "→ https://hooks.example.org/p") {
		t.Fatalf("webhooks add:\n%s", out)
	}
	id := strings.Fields(out)[1]
	if out := mustRun(t, append(sn, "webhooks", "list")...); !strings.Contains(out, id) || !strings.Contains(out, "handle.create") || strings.Contains(out, "whsec_") {
		t.Errorf("webhooks list:\n%s", out)
	}
	if out := mustRun(t, append(sn, "webhooks", "get", id)...); !strings.Contains(out, "state:") || !strings.Contains(out, "active") {
		t.Errorf("webhooks get:\n%s", out)
	}
	mustRun(t, append(sn, "webhooks", "enable", id)...)
	if out := mustRun(t, append(sn, "webhooks", "deliveries", id)...); !strings.Contains(out, "ATTEMPT") {
		t.Errorf("webhooks deliveries:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "webhooks", "add", "--url", "ftp://x")...); code != 1 || !strings.Contains(errs, "422") {
		t.Errorf("webhooks add ftp: exit %d %s", code, errs)
	}
	if out := mustRun(t, append(sn, "webhooks", "delete", id)...); !strings.Contains(out, "webhook "+id+" deleted") {
		t.Errorf("webhooks delete:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "webhooks", "get", id)...); code != 1 || !strings.Contains(errs, "404") {
		t.Errorf("webhooks get after delete: exit %d %s", code, errs)
	}
}

// TestPidctlLinkcheck: the namespace's findings and one identifier's
// results, from results the link checker's registry writes.
func TestPidctlLinkcheck(t *testing.T) {
	n := adminNode(t, nil)
	sn := onboard(t, n, "LNK")
	mustRun(t, append(sn, "create", "--custom-id", "l1", "--url", "https://broken.example.org/x", "--metadata", testMeta(t))...)
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: n.db, Namer: n.namer, URLIndex: mod.URL.Index})
	if err != nil {
		t.Fatal(err)
	}
	display := n.namer.Full("21.12345", "LNK", "L1")
	key, _, err := n.namer.Key(display)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := registry.LinkResult{Handle: display, URL: "https://broken.example.org/x", Kind: "target", State: registry.LinkBroken,
		Status: 404, Error: "http", Failures: 3, FirstFailure: &now, Checked: now, Since: now}
	if err := reg.Update(func(tx registry.Tx) error { return linkcheck.PutResult(tx.Tx, n.namer, key, nil, &r) }); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, append(sn, "linkcheck")...)
	if !strings.Contains(out, display) || !strings.Contains(out, "broken") || !strings.Contains(out, "404") {
		t.Errorf("linkcheck:\n%s", out)
	}
	if out := mustRun(t, append(sn, "linkcheck", "--state", "failing")...); strings.Contains(out, display) {
		t.Errorf("linkcheck --state failing lists the broken URL:\n%s", out)
	}
	if out := mustRun(t, append(sn, "linkcheck", "21.12345/LNK/l1")...); !strings.Contains(out, "https://broken.example.org/x") {
		t.Errorf("linkcheck HANDLE:\n%s", out)
	}
	if code, _, errs := pidctl(t, append(sn, "linkcheck", "--state", "nonsense")...); code != 1 || !strings.Contains(errs, "broken, recovering, failing, all") {
		t.Errorf("linkcheck --state nonsense: exit %d %s", code, errs)
	}
}
