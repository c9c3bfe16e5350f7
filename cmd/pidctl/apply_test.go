package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pidnode/admin"
)

// applyArgs are a complete application on the command line.
var applyArgs = []string{"apply", "--organisation", "Applicant Lab", "--tech-name", "Tech", "--tech-email", "tech@example.org",
	"--admin-name", "Boss", "--admin-email", "boss@example.org", "--policy-version", "1", "--maintenance", "The lab keeps its pages."}

// TestPidctlApplyWithoutKey: an applicant applies with no key, and the key
// of the environment is not sent (a listener that refuses keys in clear
// text takes the application); the reply's status token is printed, and
// apply-status shows the state with it. Approving without --prefix grants
// the test prefix the application asked for, and custom ids as asked.
func TestPidctlApplyWithoutKey(t *testing.T) {
	refusing := adminNode(t, func(c *admin.Config) { c.RefuseKeys = true })
	t.Setenv("PIDCTL_KEY_FILE", refusing.opKeyFile)
	if code, out, errs := pidctl(t, append([]string{"--admin", refusing.url}, applyArgs...)...); code != 0 || !strings.Contains(out, "ast_") {
		t.Errorf("apply on a listener that refuses keys, with PIDCTL_KEY_FILE set: exit %d\n%s%s", code, out, errs)
	}
	t.Setenv("PIDCTL_KEY_FILE", "")

	n := adminNode(t, nil)
	dir := t.TempDir()
	out := mustRun(t, append([]string{"--admin", n.url}, append(applyArgs, "--prefix", "21.t12345", "--custom-ids")...)...)
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "application app_") || !strings.HasSuffix(lines[0], ": SUBMITTED") ||
		!strings.HasPrefix(lines[2], "ast_") || !strings.Contains(lines[3], n.url+"/apply/v1/applications/app_") {
		t.Fatalf("apply printed:\n%s", out)
	}
	appID := strings.TrimSuffix(strings.TrimPrefix(lines[0], "application "), ": SUBMITTED")
	tokFile := filepath.Join(dir, "status.token")
	os.WriteFile(tokFile, []byte(lines[2]+"\n"), 0o600)
	status := func() string {
		t.Helper()
		var st struct{ State string }
		if err := json.Unmarshal([]byte(mustRun(t, "--admin", n.url, "apply-status", appID, "--token-file", tokFile, "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.State
	}
	if st := status(); st != "SUBMITTED" {
		t.Errorf("apply-status = %s, want SUBMITTED", st)
	}
	if code, _, errs := pidctl(t, "--admin", n.url, "apply-status", appID); code != 2 || !strings.Contains(errs, "--token-file FILE") {
		t.Errorf("apply-status without a token: exit %d %s", code, errs)
	}

	var res struct {
		SNAA struct {
			Prefixes  []string
			CustomIDs bool `json:"custom_ids"`
		}
	}
	// A single node has no etcd shards to name.
	if code, _, errOut := pidctl(t, "--admin", n.url, "--key-file", n.opKeyFile, "approve", appID, "--namespace", "APL", "--shard", "d1"); code == 0 || !strings.Contains(errOut, "shard") {
		t.Errorf("approve --shard on a single node: exit %d, %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "--admin", n.url, "--key-file", n.opKeyFile, "approve", appID, "--namespace", "APL", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.SNAA.Prefixes, []string{"21.T12345"}) || !res.SNAA.CustomIDs {
		t.Errorf("approve without --prefix: SNAA prefixes %v custom ids %v, want [21.T12345] true as asked", res.SNAA.Prefixes, res.SNAA.CustomIDs)
	}
	if st := status(); st != "APPROVED" {
		t.Errorf("apply-status after approval = %s, want APPROVED", st)
	}
}
