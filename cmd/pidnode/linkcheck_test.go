package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"pidnode/internal/buildinfo"
	"pidnode/internal/etcdtest"
)

// linkTarget is a local site for link checks: /ok answers 200, /down 404
// until up is set; it records the User-Agents it saw.
type linkTarget struct {
	*httptest.Server
	up  atomic.Bool
	mu  sync.Mutex
	uas map[string]bool
}

func newLinkTarget(t *testing.T) *linkTarget {
	lt := &linkTarget{uas: map[string]bool{}}
	lt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lt.mu.Lock()
		lt.uas[r.UserAgent()] = true
		lt.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/down") && !lt.up.Load() {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(lt.Close)
	return lt
}

// linkcheckFlags turn the checker on at test speed, for loopback only.
var linkcheckFlags = []string{"--outbound-allow", "127.0.0.0/8", "--linkcheck-interval", "1s", "--linkcheck-failures", "2",
	"--linkcheck-min-age", "1s", "--linkcheck-host-delay", "0", "--linkcheck-contact", "ops@example.org",
	"--public-url", "https://pid.example.org", "--dns-addr", "", "--hdl-addr", ""}

// newLinkSNAA creates the SNAA of namespace LNK on the node at admin and
// two identifiers: one whose target is down, one whose target is up, both
// with a variant that is up. It returns the key and the handles.
func newLinkSNAA(t *testing.T, admin, opKey string, lt *linkTarget) (key, down, up string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	key = enrolSNAA(t, c, admin, opKey, "Link Lab", "LNK")
	create := func(path string) string {
		p := map[string]any{"url": lt.URL + path, "metadata": map[string]any{"status": "REGISTERED", "schema_version": "v1.0.1",
			"metadata_license": "CC0-1.0", "curation_contact": "pids@example.org",
			"resource_info": map[string]any{"label": "x", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": lt.URL + "/ok.ttl", "media_type": "text/turtle"}}}}}
		code, body := call(t, c, "POST", admin+"/pid/v2/handles/21.12345/LNK/", key, p)
		if code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		var id struct{ Handle, ID string }
		json.Unmarshal(body, &id)
		return id.ID
	}
	return key, create("/down"), create("/ok")
}

// waitLinks polls the namespace's listing (state=all) on the node at admin
// until ok accepts it.
func waitLinks(t *testing.T, admin, key string, ok func(states map[string]string) bool) map[string]string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := call(t, c, "GET", admin+"/pid/v2/handles/21.12345/LNK/linkcheck?state=all", key, nil)
		var page struct {
			Targets []struct{ URL, State string }
		}
		json.Unmarshal(body, &page)
		states := map[string]string{}
		for _, r := range page.Targets {
			states[r.URL] = r.State
		}
		if code == 200 && ok(states) {
			return states
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// feedActions returns the actions of the namespace's feed.
func feedActions(t *testing.T, admin, key string) []string {
	t.Helper()
	code, body := call(t, &http.Client{Timeout: 10 * time.Second}, "GET", admin+"/pid/v2/handles/21.12345/LNK/events?limit=1000", key, nil)
	if code != 200 {
		t.Fatalf("events: %d %s", code, body)
	}
	var p struct {
		Events []struct{ Action, Handle string }
	}
	json.Unmarshal(body, &p)
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Action)
	}
	return out
}

// TestLinkcheckOnNode runs the checker in a node against a local site:
// the target that is down becomes broken (an event in the feed, a broken
// count in /metrics, which still passes promlint), then recovers when it
// comes back; the site saw the configured User-Agent.
func TestLinkcheckOnNode(t *testing.T) {
	lt := newLinkTarget(t)
	n, cancel, done := startTestNode(t, t.TempDir(), linkcheckFlags...)
	defer stopTestNode(t, cancel, done)
	admin := "http://" + n.addr("admin")
	key, _, _ := newLinkSNAA(t, admin, n.opKey, lt)
	// A webhook of the link check kinds (from the start of the feed) is told
	// of both state changes.
	var (
		hookMu  sync.Mutex
		hookGot []string
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d struct{ Events []struct{ Action string } }
		if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		hookMu.Lock()
		for _, e := range d.Events {
			hookGot = append(hookGot, e.Action)
		}
		hookMu.Unlock()
	}))
	defer hook.Close()
	if code, body := call(t, &http.Client{Timeout: 10 * time.Second}, "POST", admin+"/pid/v2/handles/21.12345/LNK/webhooks", key,
		map[string]any{"url": hook.URL, "kinds": []string{"linkcheck.broken", "linkcheck.recovered"}, "after": 0}); code != 201 {
		t.Fatalf("register webhook: %d %s", code, body)
	}
	waitLinks(t, admin, key, func(s map[string]string) bool { return s[lt.URL+"/down"] == "broken" && len(s) == 1 })
	if a := strings.Join(feedActions(t, admin, key), ","); !strings.HasSuffix(a, "linkcheck.broken") {
		t.Errorf("feed actions %s, want a linkcheck.broken last", a)
	}
	_, body := get(t, admin+"/metrics")
	if !bytes.Contains(body, []byte(`pidnode_linkcheck_broken_targets{namespace="21.12345/SVC/LNK"} 1`)) {
		t.Errorf("/metrics lacks the broken count:\n%s", grepLines(body, "pidnode_linkcheck"))
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	lt.up.Store(true)
	waitLinks(t, admin, key, func(s map[string]string) bool { return len(s) == 0 })
	if a := strings.Join(feedActions(t, admin, key), ","); !strings.Contains(a, "linkcheck.broken,linkcheck.recovered") {
		t.Errorf("feed actions %s, want linkcheck.broken then linkcheck.recovered", a)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		hookMu.Lock()
		got := strings.Join(hookGot, ",")
		hookMu.Unlock()
		if got == "linkcheck.broken,linkcheck.recovered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook received %q, want linkcheck.broken,linkcheck.recovered", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.uas) != 1 || !lt.uas["pidnode/"+buildinfo.Read().Version+" (+https://pid.example.org; ops@example.org)"] {
		t.Errorf("User-Agents seen: %v", lt.uas)
	}
}

// TestLinkcheckCluster: in a cluster of two nodes, the checker runs on the
// elected one and its results are cluster data: both nodes list the broken
// target and show its event.
func TestLinkcheckCluster(t *testing.T) {
	lt := newLinkTarget(t)
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: 4096, MaxRequestBytes: 8 << 20})
	dir := t.TempDir()
	a, cancelA, doneA := startTestNode(t, filepath.Join(dir, "a"), append([]string{"--etcd-endpoints", c.Endpoints(), "--node-name", "a"}, linkcheckFlags...)...)
	defer stopTestNode(t, cancelA, doneA)
	b, cancelB, doneB := startTestNode(t, filepath.Join(dir, "b"), append([]string{"--etcd-endpoints", c.Endpoints(), "--node-name", "b"}, linkcheckFlags...)...)
	defer stopTestNode(t, cancelB, doneB)
	key, _, _ := newLinkSNAA(t, "http://"+a.addr("admin"), a.opKey, lt)
	for _, n := range []*node{a, b} {
		admin := "http://" + n.addr("admin")
		waitLinks(t, admin, key, func(s map[string]string) bool { return s[lt.URL+"/down"] == "broken" })
		if a := strings.Join(feedActions(t, admin, key), ","); !strings.Contains(a, "linkcheck.broken") {
			t.Errorf("node %s: feed actions %s, want linkcheck.broken", n.cfg.NodeName, a)
		}
	}
}

func grepLines(b []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLinkcheckFlags: the link checker's settings refuse values that make
// no sense, by flag and environment, naming the setting.
func TestLinkcheckFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--linkcheck-interval", "10ms"}, nil, "--linkcheck-interval"},
		{[]string{"--linkcheck-interval", "soon"}, nil, "--linkcheck-interval"},
		{[]string{"--linkcheck-failures", "0"}, nil, "--linkcheck-failures"},
		{[]string{"--linkcheck-concurrency", "-1"}, nil, "--linkcheck-concurrency"},
		{[]string{"--linkcheck-min-age", "0"}, nil, "--linkcheck-min-age"},
		{[]string{"--linkcheck-max-bytes", "0"}, nil, "--linkcheck-max-bytes"},
		{nil, map[string]string{"PIDNODE_LINKCHECK_TIMEOUT": "forever"}, "PIDNODE_LINKCHECK_TIMEOUT"},
	} {
		_, _, err := loadConfig("serve", c.args, envFrom(c.env), &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("loadConfig(%v, %v) = %v, want an error naming %s", c.args, c.env, err, c.want)
		}
	}
	cfg, _, err := loadConfig("serve", []string{"--linkcheck-interval", "0", "--linkcheck-host-delay", "0", "--linkcheck-max-bytes", "1MiB"},
		envFrom(map[string]string{"PIDNODE_LINKCHECK_CONTACT": "ops@example.org"}), &bytes.Buffer{}, nil)
	if err != nil || cfg.LinkcheckInterval.Duration != 0 || cfg.LinkcheckMaxBytes != 1<<20 || cfg.LinkcheckContact != "ops@example.org" {
		t.Errorf("loadConfig: %+v, %v", cfg.LinkcheckConfig, err)
	}
	if d := defaultConfig(); d.LinkcheckInterval.Duration != 7*24*time.Hour || d.LinkcheckFailures != 3 || d.LinkcheckMinAge.Duration != 48*time.Hour {
		t.Errorf("defaults: %+v", d.LinkcheckConfig)
	}
}

// TestLinkcheckTOML: the settings' TOML keys are top-level keys of the
// config file, like every other.
func TestLinkcheckTOML(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pidnode.toml")
	if err := os.WriteFile(f, []byte("linkcheck_interval = \"24h\"\nlinkcheck_contact = \"ops@example.org\"\nlinkcheck_failures = 5\nlinkcheck_max_bytes = \"8KiB\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := loadConfig("serve", []string{"--config", f}, envFrom(nil), &bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lc := cfg.LinkcheckConfig; lc.LinkcheckInterval.Duration != 24*time.Hour || lc.LinkcheckContact != "ops@example.org" || lc.LinkcheckFailures != 5 || lc.LinkcheckMaxBytes != 8<<10 {
		t.Errorf("from TOML: %+v", lc)
	}
}

// TestLinkcheckOffInDemo: --demo keeps the link checker off (the demo's URLs
// are example sites, and a demo sends nothing beyond the machine unless
// asked), unless --linkcheck-interval is given by a flag, the environment or
// the config file; the banner says it is off and how to turn it on.
func TestLinkcheckOffInDemo(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pidnode.toml")
	if err := os.WriteFile(f, []byte("linkcheck_interval = \"24h\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{[]string{"--demo"}, nil, 0},
		{nil, nil, 7 * 24 * time.Hour},
		{[]string{"--demo", "--linkcheck-interval", "1h"}, nil, time.Hour},
		{[]string{"--demo"}, map[string]string{"PIDNODE_LINKCHECK_INTERVAL": "2h"}, 2 * time.Hour},
		{[]string{"--demo", "--config", f}, nil, 24 * time.Hour},
		{nil, map[string]string{"PIDNODE_DEMO": "true"}, 0},
	} {
		cfg, _, err := loadConfig("serve", c.args, envFrom(c.env), &bytes.Buffer{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.LinkcheckInterval.Duration; got != c.want || cfg.demoLinkcheckOff != (c.want == 0) {
			t.Errorf("loadConfig(%v, %v): interval %v (demo off %v), want %v", c.args, c.env, got, cfg.demoLinkcheckOff, c.want)
		}
	}
	var out bytes.Buffer
	(&node{cfg: &Config{demoLinkcheckOff: true}}).printWelcome(&out)
	if !strings.Contains(out.String(), "link checks off") || !strings.Contains(out.String(), "--linkcheck-interval 168h turns them on") {
		t.Errorf("banner:\n%s", out.String())
	}
}
