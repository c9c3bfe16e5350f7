package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPidctlSNAASet: `pidctl snaa-set` changes an SNAA on a real admin API,
// and each change takes effect on what the SNAA's own key may do: custom ids
// refused once switched off, every request refused while suspended (and
// served again after), writes confined to the prefixes it is given. Bad flag
// values are usage errors and an unknown SNAA is the API's 404.
func TestPidctlSNAASet(t *testing.T) {
	url, opFile := adminServer(t)
	op := []string{"--admin", url, "--key-file", opFile}
	dir := t.TempDir()
	var app struct{ ID string }
	out := mustRun(t, append(op, "--json", "apply", "--organisation", "Set Lab",
		"--tech-name", "Tech", "--tech-email", "tech@example.org", "--admin-name", "Boss", "--admin-email", "boss@example.org",
		"--policy-version", "1", "--maintenance", "kept")...)
	if err := json.Unmarshal([]byte(out), &app); err != nil || app.ID == "" {
		t.Fatalf("apply: %q %v", out, err)
	}
	var approved struct {
		SNAA struct{ ID string }
		Key  struct{ Secret string }
	}
	out = mustRun(t, append(op, "--json", "approve", app.ID, "--namespace", "SET", "--custom-ids", "true")...)
	if err := json.Unmarshal([]byte(out), &approved); err != nil || approved.SNAA.ID == "" || approved.Key.Secret == "" {
		t.Fatalf("approve: %q %v", out, err)
	}
	id := approved.SNAA.ID
	keyFile := filepath.Join(dir, "snaa.key")
	os.WriteFile(keyFile, []byte(approved.Key.Secret), 0o600)
	sn := []string{"--admin", url, "--key-file", keyFile}
	meta := filepath.Join(dir, "meta.json")
	os.WriteFile(meta, []byte(`{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0",
		"curation_contact":"pids@example.org","resource_info":{"label":"Sample","resource_category":"SAMPLE",
		"representation_variants":[{"variant_url":"https://example.org/s.ttl","media_type":"text/turtle"}]}}`), 0o600)

	type snaa struct {
		CustomIDs bool     `json:"custom_ids"`
		Suspended bool     `json:"suspended"`
		Prefixes  []string `json:"prefixes"`
	}
	show := func() snaa {
		t.Helper()
		var s snaa
		if err := json.Unmarshal([]byte(mustRun(t, append(op, "--json", "snaa", id)...)), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	set := func(args ...string) snaa {
		t.Helper()
		var s snaa
		out := mustRun(t, append(append(op, "--json", "snaa-set", id), args...)...)
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("snaa-set %v: %q %v", args, out, err)
		}
		if got := show(); got.CustomIDs != s.CustomIDs || got.Suspended != s.Suspended || !slices.Equal(got.Prefixes, s.Prefixes) {
			t.Errorf("snaa-set %v replied %+v, the SNAA is now %+v", args, s, got)
		}
		return s
	}
	create := func(extra ...string) (int, string) {
		t.Helper()
		code, out, errs := pidctl(t, append(append(sn, "create", "--url", "https://example.org/s", "--metadata", meta), extra...)...)
		return code, out + errs
	}

	if !show().CustomIDs {
		t.Fatal("approved with --custom-ids true, SNAA says false")
	}
	if code, out := create("--custom-id", "first"); code != 0 {
		t.Fatalf("custom id while allowed: exit %d %s", code, out)
	}
	if s := set("--custom-ids", "false"); s.CustomIDs {
		t.Errorf("after --custom-ids false: %+v", s)
	}
	if code, out := create("--custom-id", "second"); code != 1 || !strings.Contains(out, "403") {
		t.Errorf("custom id after --custom-ids false: exit %d %s, want 1 and 403", code, out)
	}
	if code, out := create(); code != 0 {
		t.Errorf("generated id after --custom-ids false: exit %d %s", code, out)
	}

	if s := set("--suspended", "true"); !s.Suspended {
		t.Errorf("after --suspended true: %+v", s)
	}
	if code, out, errs := pidctl(t, append(sn, "whoami")...); code != 1 || !strings.Contains(errs, "403") {
		t.Errorf("whoami while suspended: exit %d %s %s, want 1 and 403", code, out, errs)
	}
	if code, out := create(); code != 1 {
		t.Errorf("create while suspended: exit %d %s", code, out)
	}
	if s := set("--suspended", "false"); s.Suspended {
		t.Errorf("after --suspended false: %+v", s)
	}
	mustRun(t, append(sn, "whoami")...)

	if s := set("--prefix", "21.T12345"); !slices.Equal(s.Prefixes, []string{"21.T12345"}) || s.CustomIDs || s.Suspended {
		t.Errorf("after --prefix 21.T12345: %+v, want only the prefix changed", s)
	}
	if code, out := create(); code != 1 || !strings.Contains(out, "403") {
		t.Errorf("production create with only the test prefix: exit %d %s, want 1 and 403", code, out)
	}
	if code, out := create("--test"); code != 0 || !strings.Contains(out, "21.T12345/svc/SET/") {
		t.Errorf("test create with the test prefix: exit %d %s", code, out)
	}

	before := show()
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--custom-ids=maybe"}, `--custom-ids is a switch`},
		{[]string{"--suspended=yes"}, `--suspended is a switch`},
		// A switch takes no separate value, so "maybe" is a second ID.
		{[]string{"--custom-ids", "maybe"}, "want exactly one SNAA ID"},
	} {
		if code, _, errs := pidctl(t, append(append(op, "snaa-set", id), bad.args...)...); code != 2 || !strings.Contains(errs, bad.want) {
			t.Errorf("snaa-set %v: exit %d %s, want a usage error saying %q", bad.args, code, errs, bad.want)
		}
	}
	if got := show(); got.CustomIDs != before.CustomIDs || got.Suspended != before.Suspended || !slices.Equal(got.Prefixes, before.Prefixes) {
		t.Errorf("a refused snaa-set changed the SNAA: %+v → %+v", before, got)
	}
	// No switch: a usage error, and nothing is sent (no audit entry).
	audit := mustRun(t, append(op, "audit", "--limit", "1000")...)
	if code, out, errs := pidctl(t, append(op, "snaa-set", id)...); code != 2 || out != "" || !strings.Contains(errs, "nothing to change") {
		t.Errorf("snaa-set with no switch: exit %d %s %s, want 2 and a usage error", code, out, errs)
	}
	if got := mustRun(t, append(op, "audit", "--limit", "1000")...); got != audit {
		t.Errorf("snaa-set with no switch wrote to the audit log:\n%s", got)
	}
	if code, _, errs := pidctl(t, append(op, "snaa-set", "no-such-snaa", "--suspended", "true")...); code != 1 || !strings.Contains(errs, "404") {
		t.Errorf("unknown SNAA: exit %d %s, want 1 and 404", code, errs)
	}
}
