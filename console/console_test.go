package console

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"pidnode/access"
	"pidnode/internal/storetest"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/read"
	"pidnode/registry"
	"pidnode/write"
)

// The console over the services alone, without the JSON API: what it
// needs is what Config names. The journeys through the admin listener
// (admin's console tests) drive the same pages mounted beside the API.

type harness struct {
	t    *testing.T
	ops  *operator.Service
	adm  *access.Admission
	ts   *httptest.Server
	c    *http.Client
	last string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	db, namer := storetest.Open(t)
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := access.New(access.Config{Registry: reg, OperatorKey: "operator-secret-123", LastUsedInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := access.NewSessions(access.SessionsConfig{Registry: reg, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	adm := access.NewAdmission(access.AdmissionConfig{Keys: keys})
	writes, err := write.New(write.Config{Registry: reg, Namer: namer, Model: mod})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := read.New(read.Config{DB: db, Registry: reg, Namer: namer, Model: mod})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := operator.New(operator.Config{Registry: reg, Keys: keys, Namer: namer, Prefixes: []string{"21.12345", "21.T12345"}, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Namer: namer, Model: mod, Registry: reg, Keys: keys, Sessions: sessions, Admission: adm,
		Writes: writes, Read: rd, Operator: ops, ApplyLimit: adm.AddrLimit(100), SignInLimit: adm.AddrLimit(SignInPerHour)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Mount(mux)
	h := &harness{t: t, ops: ops, adm: adm, ts: httptest.NewServer(mux)}
	t.Cleanup(h.ts.Close)
	jar, _ := cookiejar.New(nil)
	h.c = &http.Client{Jar: jar}
	return h
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

func (h *harness) do(method, path string, form url.Values) (int, string) {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		if _, ok := form["csrf"]; !ok {
			if m := csrfRE.FindStringSubmatch(h.last); m != nil {
				form.Set("csrf", m[1])
			}
		}
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, h.ts.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", h.ts.URL)
	}
	res, err := h.c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	h.last = string(b)
	return res.StatusCode, h.last
}

func (h *harness) want(what string, status int, body string, wantStatus int, wants ...string) {
	h.t.Helper()
	if status != wantStatus {
		h.t.Fatalf("%s: status %d, want %d\n%s", what, status, wantStatus, body)
	}
	for _, w := range wants {
		if !strings.Contains(body, w) {
			h.t.Errorf("%s: the page does not say %q\n%s", what, w, body)
		}
	}
}

// TestConsoleOnItsOwn: an application through the form, approved by the
// operator's page, the new SNAA's key signed in, an identifier created and
// listed, maintenance refusing the next write: the whole journey over the
// services, with no API behind the pages.
func TestConsoleOnItsOwn(t *testing.T) {
	h := newHarness(t)
	st, body := h.do("POST", "/apply", url.Values{"organisation": {"Own Org"}, "technical_contact.name": {"T"},
		"technical_contact.email": {"t@example.org"}, "administrative_contact.name": {"A"},
		"administrative_contact.email": {"a@example.org"}, "maintenance_statement": {"We keep them."}, "policy_version": {"1"}})
	h.want("apply", st, body, 201, "Application received")
	apps, err := h.ops.Applications(registry.StateSubmitted)
	if err != nil || len(apps) != 1 {
		t.Fatalf("applications after the form: %v, %v", apps, err)
	}

	h.do("GET", "/console/sign-in", nil)
	st, body = h.do("POST", "/console/sign-in", url.Values{"key": {"operator-secret-123"}})
	h.want("operator sign-in", st, body, 200, "Applications", "Own Org")
	h.do("GET", "/console/ops/application?id="+apps[0].ID, nil)
	st, body = h.do("POST", "/console/ops/approve", url.Values{"id": {apps[0].ID}, "namespace": {"OWN1"}, "prefixes": {"21.12345"}})
	h.want("approve", st, body, 200, "OWN1")
	m := regexp.MustCompile(`id="new-key">([^<]+)<`).FindStringSubmatch(body)
	if m == nil || !access.WellFormed(m[1]) {
		t.Fatalf("the approval page shows no key\n%s", body)
	}
	st, body = h.do("POST", "/console/ops/approve", url.Values{"id": {apps[0].ID}, "prefixes": {"21.12345"}})
	h.want("approve twice", st, body, 409, "already APPROVED")

	secret := m[1]
	h.do("POST", "/console/sign-out", url.Values{})
	h.do("GET", "/console/sign-in", nil)
	st, body = h.do("POST", "/console/sign-in", url.Values{"key": {secret}})
	h.want("SNAA sign-in", st, body, 200, "Your identifiers", "Own Org")
	h.do("GET", "/console/new", nil)
	st, body = h.do("POST", "/console/new", url.Values{
		"url":                                              {"https://example.org/landing"},
		"metadata.curation_contact":                        {"curator@example.org"},
		"metadata.status":                                  {"REGISTERED"},
		"metadata.schema_version":                          {"v1.0.1"},
		"metadata.metadata_license":                        {"CC0-1.0"},
		"metadata.resource_info.label":                     {"Own thing"},
		"metadata.resource_info.description":               {"a description text"},
		"metadata.resource_info.resource_category":         {"SAMPLE"},
		"metadata.resource_info.representation_variants#n": {"1"},
		"metadata.resource_info.representation_variants[0].variant_url": {"https://example.org/landing.ttl"},
		"metadata.resource_info.representation_variants[0].media_type":  {"text/turtle"},
	})
	h.want("create", st, body, 200, "The identifier was created.", "Own thing")
	st, body = h.do("GET", "/console/ids", nil)
	h.want("list", st, body, 200, "Own thing", "REGISTERED", "https://example.org/landing", "1 identifier")
	st, body = h.do("GET", "/console/ids?q=own+thi&sort=-changed", nil)
	h.want("search", st, body, 200, "1 identifier match", "Own thing")
	st, body = h.do("GET", "/console/ids?q=nothing+like+it", nil)
	h.want("search without match", st, body, 200, "0 identifiers match", "No identifiers match this search.")
	st, body = h.do("GET", "/console/ids?sort=size", nil)
	h.want("a bad order", st, body, 400, "sort")
	st, body = h.do("GET", "/console/ids/export?format=csv&q=own", nil)
	h.want("export", st, body, 200, "handle,id,label,status,url,created,updated", "Own thing")
	st, body = h.do("GET", "/console/bulk/template", nil)
	h.want("bulk template", st, body, 200, "op,id,url,")
	// The overviews of the namespace's feed features.
	st, body = h.do("GET", "/console/events", nil)
	h.want("change feed", st, body, 200, "created identifier", "/OWN1/", "fields changed")
	st, body = h.do("GET", "/console/webhooks", nil)
	h.want("webhooks", st, body, 200, "This node delivers no webhooks.")
	st, body = h.do("GET", "/console/stats", nil)
	h.want("statistics", st, body, 200, "This node keeps no resolution statistics.")
	st, body = h.do("GET", "/console/events?before=x", nil)
	h.want("a malformed feed page", st, body, 400, "before must be the sequence number")

	h.adm.SetReadOnly(true)
	h.do("GET", "/console/new", nil)
	st, body = h.do("POST", "/console/new", url.Values{"url": {"https://example.org/other"}})
	h.want("create in maintenance", st, body, 503, "maintenance")
}

// TestConsoleOperatorPages: the applicant's status after approval names
// the namespace granted and whom to contact; suspending an SNAA and
// revoking its key ask first and say when done; the audit page pages
// newest first, filters by SNAA and action, and folds each entry's
// changes under a sentence.
func TestConsoleOperatorPages(t *testing.T) {
	h := newHarness(t)
	st, body := h.do("POST", "/apply", url.Values{"organisation": {"Steward Org"}, "technical_contact.name": {"T"},
		"technical_contact.email": {"t@example.org"}, "administrative_contact.name": {"A"},
		"administrative_contact.email": {"a@example.org"}, "maintenance_statement": {"We keep them."}, "policy_version": {"1"}})
	h.want("apply", st, body, 201, "Application received")
	appID := regexp.MustCompile(`id="app-id">([^<]+)<`).FindStringSubmatch(body)[1]
	tok := regexp.MustCompile(`id="status-token">([^<]+)<`).FindStringSubmatch(body)[1]

	h.do("GET", "/console/sign-in", nil)
	h.do("POST", "/console/sign-in", url.Values{"key": {"operator-secret-123"}})
	st, body = h.do("POST", "/console/ops/approve", url.Values{"id": {appID}, "namespace": {"STEW"}, "prefixes": {"21.12345"}})
	h.want("approve", st, body, 200, "STEW")
	snaaID := regexp.MustCompile(`/console/ops/snaa\?id=([a-z0-9_]+)`).FindStringSubmatch(body)[1]

	st, body = h.do("POST", "/apply/status", url.Values{"id": {appID}, "token": {tok}})
	h.want("status after approval", st, body, 200, "APPROVED", "Namespace granted", "<strong>STEW</strong>", "21.12345/STEW/…", "the operator of this node")

	// Suspend: a confirmation first, nothing changed until confirmed.
	h.do("GET", "/console/ops/snaa?id="+snaaID, nil)
	st, body = h.do("POST", "/console/ops/snaa", url.Values{"id": {snaaID}, "action": {"suspend"}})
	h.want("suspend asks", st, body, 200, "Suspend Steward Org?", `name="confirm" value="yes"`)
	if sn, err := h.ops.SNAA(snaaID); err != nil || sn.Suspended {
		t.Fatalf("suspended before the confirmation: %+v, %v", sn, err)
	}
	st, body = h.do("POST", "/console/ops/snaa", url.Values{"id": {snaaID}, "action": {"suspend"}, "confirm": {"yes"}})
	h.want("suspended", st, body, 200, "The SNAA is suspended")
	st, body = h.do("POST", "/console/ops/snaa", url.Values{"id": {snaaID}, "action": {"reinstate"}})
	h.want("reinstated", st, body, 200, "The SNAA is reinstated")
	keyID := regexp.MustCompile(`name="key_id" value="(key_[a-z0-9]+)"`).FindStringSubmatch(body)[1]
	st, body = h.do("POST", "/console/ops/keys/revoke", url.Values{"id": {snaaID}, "key_id": {keyID}})
	h.want("revoke asks", st, body, 200, "Revoke this key?", "Revoke key "+keyID+" of Steward Org")
	st, body = h.do("POST", "/console/ops/keys/revoke", url.Values{"id": {snaaID}, "key_id": {keyID}, "confirm": {"yes"}})
	h.want("revoked", st, body, 200, "The key was revoked.", "revoked 20")

	// The audit log: newest first, two to a page here by limit.
	st, body = h.do("GET", "/console/ops/audit?limit=2", nil)
	h.want("audit", st, body, 200, "The operator revoked key", "The operator changed SNAA", "Older entries", "field")
	if strings.Index(body, "revoked key") > strings.Index(body, "changed SNAA") {
		t.Error("the audit page is not newest first")
	}
	if strings.Contains(body, `class="json"`) || strings.Contains(body, `{&#34;`) {
		t.Error("the audit page shows raw JSON")
	}
	next := regexp.MustCompile(`href="/console/ops/audit\?([^"]+)" rel="next"`).FindStringSubmatch(body)
	if next == nil {
		t.Fatal("no link to older entries")
	}
	st, body = h.do("GET", "/console/ops/audit?"+strings.ReplaceAll(next[1], "&amp;", "&"), nil)
	h.want("older audit entries", st, body, 200, "Newest entries")
	st, body = h.do("GET", "/console/ops/audit?action=application.approve&snaa="+snaaID, nil)
	h.want("audit filtered", st, body, 200, "approved application", "<details>")
	if strings.Contains(body, "revoked key") {
		t.Error("the action filter shows other actions")
	}
	st, body = h.do("GET", "/console/ops/audit?from=never", nil)
	h.want("a malformed date", st, body, 400, "from must be a date such as")
}
