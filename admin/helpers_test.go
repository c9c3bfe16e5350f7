package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/route"
	"pidnode/linkcheck"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/stats"
	"pidnode/store"
	"pidnode/webhook"
)

const (
	testPrefix     = "21.12345"
	testTestPrefix = "21.T12345"
	testOpKey      = "operator-key-for-tests-0123456789"
)

// env is a real admin server over a real store, with the real cache as Invalidator.
type env struct {
	t     *testing.T
	db    *store.DB
	namer *handlev.Namer
	cache *cache.Cache
	srv   *Server
	ts    *httptest.Server
	path  string
}

func newEnv(t *testing.T, mod ...func(*Config)) *env {
	t.Helper()
	return newEnvAt(t, filepath.Join(t.TempDir(), "pidnode.db"), mod...)
}

// newEnvAt is newEnv on the database file at path (which may exist).
func newEnvAt(t *testing.T, path string, mod ...func(*Config)) *env {
	t.Helper()
	return newEnvWith(t, path, nil, mod...)
}

// newEnvWith is newEnvAt with the webhook feature's routes (the feed's and
// the endpoints') configured by hooks.
func newEnvWith(t *testing.T, path string, hooks []func(*webhook.RoutesConfig), mod ...func(*Config)) *env {
	t.Helper()
	db, err := store.Open(store.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, path: path}
	e.namer, err = handlev.NewNamer(handlev.NamerConfig{Prefix: testPrefix, TestPrefix: testTestPrefix})
	if err != nil {
		t.Fatal(err)
	}
	e.cache, err = cache.New(cache.Config{Source: db, Alt: e.namer.AppendAltKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DB: db, Namer: e.namer, Invalidator: e.cache, OperatorKey: testOpKey, PublicURL: "https://pid.example.org"}
	for _, m := range mod {
		m(&cfg)
	}
	if cfg.Routes == nil { // the features with routes of their own, as a node has them
		cfg.Routes = featureRoutes(t, db, e.namer, &cfg, hooks...)
	}
	e.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.ts = httptest.NewServer(e.srv.Handler())
	t.Cleanup(e.close)
	return e
}

// featureRoutes are the routes of the features in packages of their own,
// over db, as cmd/pidnode hands them to a node's API; it sets cfg.Stats to
// the statistics feature whose routes they include, as a node does.
func featureRoutes(t *testing.T, db *store.DB, namer *handlev.Namer, cfg *Config, hooks ...func(*webhook.RoutesConfig)) []route.Route {
	t.Helper()
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	var w webhook.Writer
	if cfg.Writer != nil {
		w = cfg.Writer
	}
	wcfg := webhook.RoutesConfig{Registry: reg, Writer: w, Rand: cfg.Rand, Now: cfg.Now}
	for _, h := range hooks {
		h(&wcfg)
	}
	feed, err := webhook.Routes(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Stats = stats.New(stats.Config{DB: db, Namer: namer, Now: cfg.Now})
	rs := cfg.Stats.Routes()
	rs = append(rs, feed...)
	return append(rs, linkcheck.Routes(db, namer)...)
}

// close stops the server and closes the database, as a node's shutdown
// does. It may be called more than once.
func (e *env) close() {
	e.ts.Close()
	e.srv.Close()
	e.db.Close()
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *resp) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

func (r *resp) problem(t *testing.T) Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (status %d, body %s)", ct, r.Status, r.Body)
	}
	var p Problem
	r.json(t, &p)
	if p.Status != r.Status || p.Type == "" || p.Title == "" {
		t.Fatalf("problem %+v does not match status %d", p, r.Status)
	}
	return p
}

// do sends a request. body may be a string, []byte or a value to JSON-encode;
// hdr holds header pairs.
func (e *env) do(method, path, key string, body any, hdr ...string) *resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		jb, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(jb)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

func (e *env) want(r *resp, status int) *resp {
	e.t.Helper()
	if r.Status != status {
		e.t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

var testApplication = map[string]any{
	"organisation":           "Leibniz Institute for Catalysis",
	"technical_contact":      map[string]string{"name": "Tech Person", "email": "tech@example.org"},
	"administrative_contact": map[string]string{"name": "Admin Person", "email": "admin@example.org"},
	"policy_version":         "v1.0",
	"maintenance_statement":  "Landing pages are kept by the institute's repository team.",
}

// snaa onboards an SNAA and returns the approval result.
func (e *env) snaa(approve map[string]any) ApproveResult {
	e.t.Helper()
	var app Application
	e.want(e.do("POST", "/ops/v1/applications", testOpKey, testApplication), 201).json(e.t, &app)
	if approve == nil {
		approve = map[string]any{}
	}
	var res ApproveResult
	e.want(e.do("POST", "/ops/v1/applications/"+app.ID+"/approve", testOpKey, approve), 200).json(e.t, &res)
	return res
}

func validPayload() map[string]any {
	return map[string]any{
		"url": "https://landing.example.org/item/42",
		"metadata": map[string]any{
			"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
			"curation_contact": "pids@example.org",
			"resource_info": map[string]any{
				"label": "Sample 42", "description": "A catalyst sample", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://landing.example.org/item/42.ttl",
					"media_type": "text/turtle", "encoding_format": "UTF-8", "size": 12345}},
			},
		},
	}
}

// recordCount counts the records in the store.
func (e *env) recordCount() int {
	e.t.Helper()
	n := 0
	if err := e.db.View(func(tx *store.Tx) error {
		n = tx.Bolt().Bucket(store.BucketRecords).Stats().KeyN
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }
