package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPidctlSNAASetMaxKeys: `pidctl snaa-set --max-keys N` sets how many
// unrevoked keys the SNAA may hold, and `keys issue` beyond it is the API's
// 409; a value that is not an integer is a usage error, one out of range the
// API's 422.
func TestPidctlSNAASetMaxKeys(t *testing.T) {
	url, opFile := adminServer(t)
	op := []string{"--admin", url, "--key-file", opFile}
	var app struct{ ID string }
	out := mustRun(t, append(op, "--json", "apply", "--organisation", "Keys Lab",
		"--tech-name", "Tech", "--tech-email", "tech@example.org", "--admin-name", "Boss", "--admin-email", "boss@example.org",
		"--policy-version", "1", "--maintenance", "kept")...)
	if err := json.Unmarshal([]byte(out), &app); err != nil || app.ID == "" {
		t.Fatalf("apply: %q %v", out, err)
	}
	var approved struct{ SNAA struct{ ID string } }
	out = mustRun(t, append(op, "--json", "approve", app.ID, "--namespace", "KEYS")...)
	if err := json.Unmarshal([]byte(out), &approved); err != nil || approved.SNAA.ID == "" {
		t.Fatalf("approve: %q %v", out, err)
	}
	id := approved.SNAA.ID
	var s struct {
		MaxKeys int `json:"max_keys"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(op, "--json", "snaa-set", id, "--max-keys", "2")...)), &s); err != nil || s.MaxKeys != 2 {
		t.Fatalf("snaa-set --max-keys 2: %+v %v", s, err)
	}
	mustRun(t, append(op, "keys", "issue", id, "--name", "second")...)
	if code, _, errs := pidctl(t, append(op, "keys", "issue", id, "--name", "third")...); code != 1 || !strings.Contains(errs, "409") {
		t.Errorf("a third key with --max-keys 2: exit %d %s, want 1 and 409", code, errs)
	}
	for _, bad := range []struct {
		arg  string
		code int
		want string
	}{
		{"ten", 2, "want an integer"},
		{"-1", 1, "422"},
		{fmt.Sprint(1001), 1, "max_keys"},
	} {
		if code, _, errs := pidctl(t, append(op, "snaa-set", id, "--max-keys", bad.arg)...); code != bad.code || !strings.Contains(errs, bad.want) {
			t.Errorf("snaa-set --max-keys %s: exit %d %s, want %d saying %q", bad.arg, code, errs, bad.code, bad.want)
		}
	}
}
