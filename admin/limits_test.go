package admin

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidnode/store"
)

func TestRateLimit(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, func(c *Config) { c.RateLimit = 1; c.RateBurst = 2; c.Now = clk.now })
	a := e.snaa(nil)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	r := e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 429)
	r.problem(t)
	if r.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	clk.add(time.Second)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
}

func TestReadOnlyMetricsBackup(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "ROM"})
	coll := "/pid/v2/handles/21.12345/ROM/"
	var id Identifier
	e.want(e.do("PUT", coll, a.Key.Secret, validPayload()), 201).json(t, &id)
	e.srv.SetReadOnly(true)
	e.want(e.do("PUT", coll, a.Key.Secret, validPayload()), 503).problem(t)
	e.want(e.do("PUT", coll+id.ID, a.Key.Secret, map[string]any{"url": "https://x.org/"}), 503)
	e.want(e.do("GET", coll+id.ID, a.Key.Secret, nil), 200)
	e.srv.SetReadOnly(false)
	e.want(e.do("GET", "/pid/v2/me", "", nil), 401)

	var m bytes.Buffer
	if err := e.srv.WriteMetrics(&m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`pidnode_admin_writes_total{op="create"} 1`, `pidnode_admin_requests_total{route="PUT /pid/v2/handles/{prefix}/{ns}/{id...}",status="503"} 2`, "pidnode_admin_auth_failures_total 1"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, m.String())
		}
	}

	// The backup is a database that opens and holds the record.
	r := e.want(e.do("GET", "/ops/v1/backup", testOpKey, nil), 200)
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := writeFile(path, r.Body); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k, _, _ := e.namer.Key(id.Handle)
	if _, ok, err := db.Get(k); !ok || err != nil {
		t.Errorf("backup lacks %s: %v", id.Handle, err)
	}
	e.want(e.do("GET", "/ops/v1/backup", a.Key.Secret, nil), 403)
}
