package admin

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"pidnode/console"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browser is a cookie-keeping client of the console, as a browser without
// JavaScript uses it: it follows redirects and sends same-origin headers.
type browser struct {
	t    *testing.T
	e    *env
	c    *http.Client
	base string
	last string // the last page's HTML
}

// The console's session cookie, as browsers see it: with TLS the
// __Host- prefix pins it to the host, path / and Secure.
const (
	cookiePlain = "pidnode-session"
	cookieTLS   = "__Host-pidnode-session"
)

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := *e.ts.Client()
	c.Jar = jar
	return &browser{t: e.t, e: e, c: &c, base: e.ts.URL}
}

type page struct {
	Status int
	Header http.Header
	Body   string
	URL    string
}

func (b *browser) send(req *http.Request) *page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	b.last = string(raw)
	return &page{Status: res.StatusCode, Header: res.Header, Body: string(raw), URL: res.Request.URL.String()}
}

func (b *browser) get(path string) *page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.send(req)
}

// post sends a form as the page's own form does (with its CSRF token
// unless form sets one).
func (b *browser) post(path string, form url.Values) *page {
	b.t.Helper()
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", csrfOf(b.last))
	}
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.send(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

func csrfOf(body string) string {
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func wantPage(t *testing.T, p *page, status int, texts ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("%s: status %d, want %d\n%s", p.URL, p.Status, status, p.Body)
	}
	for _, x := range texts {
		if !strings.Contains(p.Body, x) {
			t.Fatalf("%s: page lacks %q\n%s", p.URL, x, p.Body)
		}
	}
}

// signIn signs b in with key and returns the page it lands on.
func (b *browser) signIn(key string) *page {
	b.t.Helper()
	b.get("/console/sign-in")
	return b.post("/console/sign-in", url.Values{"key": {key}})
}

func applyForm(org, email string) url.Values {
	return url.Values{
		"organisation":                 {org},
		"technical_contact.name":       {"Tech Person"},
		"technical_contact.email":      {email},
		"administrative_contact.name":  {"Admin Person"},
		"administrative_contact.email": {"admin-" + email},
		"maintenance_statement":        {"Our repository team keeps the landing pages."},
		"policy_version":               {"1"},
		"prefixes":                     {testTestPrefix},
		"custom_ids":                   {"true"},
	}
}

var appIDRE = regexp.MustCompile(`id="app-id">(app_[a-z0-9]+)<`)
var statusTokRE = regexp.MustCompile(`id="status-token">(ast_[a-z0-9]+)<`)
var keyRE = regexp.MustCompile(`id="new-key">(pid_[a-z0-9]+)<`)

func TestApplyForm(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	p := b.get("/apply")
	wantPage(t, p, 200, "Policy for Sub-Name Assigning Authorities", `name="policy_version" value="1"`, testPrefix, testTestPrefix)

	// Errors come back field by field, next to the fields, with what was typed.
	f := applyForm("Typed Org", "not-an-email")
	f.Del("policy_version")
	f.Set("maintenance_statement", "")
	p = b.post("/apply", f)
	wantPage(t, p, 422, `value="Typed Org"`, `value="not-an-email"`, `href="#f-technical_contact-email"`)
	for _, field := range []string{"technical_contact.email", "maintenance_statement"} {
		if !regexp.MustCompile(`(?s)<label for="` + console.FieldID(field) + `">.*?<p class="error">`).MatchString(p.Body) {
			t.Errorf("no error shown at %s", field)
		}
	}
	f = applyForm("Typed Org", "tech@example.org")
	f.Del("policy_version")
	wantPage(t, b.post("/apply", f), 422, "is required")
	f.Set("policy_version", "0.9")
	wantPage(t, b.post("/apply", f), 422, "agree to the current policy")

	// The honeypot field.
	f = applyForm("Bot Org", "bot@example.org")
	f.Set("website", "http://spam.example")
	wantPage(t, b.post("/apply", f), 422, "must be left empty")

	// A good application: the id and the status token, once.
	p = b.post("/apply", applyForm("Good Org", "tech@example.org"))
	wantPage(t, p, 201, "only this once")
	id, tok := appIDRE.FindStringSubmatch(p.Body)[1], statusTokRE.FindStringSubmatch(p.Body)[1]

	// Status, through the form and the JSON route.
	wantPage(t, b.post("/apply/status", url.Values{"id": {id}, "token": {tok}}), 200, "SUBMITTED", "not decided yet")
	wantPage(t, b.post("/apply/status", url.Values{"id": {id}, "token": {tok + "x"}}), 404)
	var st ApplicationStatus
	e.want(e.do("GET", "/apply/v1/applications/"+id, tok, nil), 200).json(t, &st)
	if st.State != StateSubmitted {
		t.Fatalf("state %q", st.State)
	}
	e.want(e.do("GET", "/apply/v1/applications/"+id, "wrong", nil), 404)
	e.want(e.do("GET", "/apply/v1/applications/"+id, "", nil), 401)

	// The operator sees what was asked for; a rejection's reason reaches the applicant.
	var app Application
	e.want(e.do("GET", "/ops/v1/applications/"+id, testOpKey, nil), 200).json(t, &app)
	if app.Organisation != "Good Org" || !app.CustomIDs || len(app.Prefixes) != 1 || app.Prefixes[0] != testTestPrefix || app.StatusHash == "" {
		t.Fatalf("stored %+v", app)
	}
	e.want(e.do("POST", "/ops/v1/applications/"+id+"/reject", testOpKey, map[string]string{"note": "We need <b>more</b> detail."}), 200)
	p = b.post("/apply/status", url.Values{"id": {id}, "token": {tok}})
	wantPage(t, p, 200, "REJECTED", "We need &lt;b&gt;more&lt;/b&gt; detail.")

	// The JSON route: same checks, problem+json.
	body := map[string]any{"organisation": "JSON Org", "technical_contact": map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"}, "policy_version": "1", "maintenance_statement": "kept",
		"prefixes": []string{"21.NOPE"}}
	r := e.want(e.do("POST", "/apply/v1/applications", "", body), 422)
	if pr := r.problem(t); len(pr.Errors) != 1 || pr.Errors[0].Field != "prefixes[0]" {
		t.Fatalf("errors %+v", pr.Errors)
	}
	delete(body, "prefixes")
	var rc ApplicationReceipt
	r = e.want(e.do("POST", "/apply/v1/applications", "", body), 201)
	r.json(t, &rc)
	e.conform("ApplicationReceipt", r.Body)
	if rc.StatusToken == "" || r.Header.Get("Location") != rc.StatusURL {
		t.Fatalf("receipt %+v", rc)
	}
	r = e.want(e.do("GET", rc.StatusURL, rc.StatusToken, nil), 200)
	e.conform("ApplicationStatus", r.Body)
	// Approved: the status names whom to contact.
	e.want(e.do("POST", "/ops/v1/applications/"+rc.ID+"/approve", testOpKey, map[string]any{}), 200)
	e.want(e.do("GET", rc.StatusURL, rc.StatusToken, nil), 200).json(t, &st)
	if st.State != StateApproved || st.Contact == "" {
		t.Fatalf("status %+v", st)
	}

	// Body size limit.
	big := applyForm("Big Org", "big@example.org")
	big.Set("maintenance_statement", strings.Repeat("x", applyMaxBody))
	wantPage(t, b.post("/apply", big), 413)
}

func TestApplyLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Policy = &Policy{Version: "7", Title: "T", Text: "Be good.", MaxOpenPerEmail: 2, PerHour: 4}
	})
	b := e.browser()
	f := applyForm("Org", "same@example.org")
	f.Set("policy_version", "7")
	wantPage(t, b.post("/apply", f), 201)
	wantPage(t, b.post("/apply", f), 201)
	// A third open application naming the same address is refused.
	wantPage(t, b.post("/apply", f), 409, "already waiting")
	// The fourth request from this address is the last of the hour.
	f.Set("technical_contact.email", "other@example.org")
	f.Set("administrative_contact.email", "other2@example.org")
	wantPage(t, b.post("/apply", f), 201)
	p := b.post("/apply", f)
	wantPage(t, p, 429, "too many applications")
	if p.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if err := CheckPolicy(&Policy{Version: "1", Title: "T"}); err == nil {
		t.Error("a policy without text was accepted")
	}
}

// onboard files an application through the form, approves it as the
// operator in the console and returns the SNAA's first key.
func onboard(t *testing.T, e *env, org, email string) string {
	t.Helper()
	b := e.browser()
	p := b.post("/apply", applyForm(org, email))
	wantPage(t, p, 201)
	id := appIDRE.FindStringSubmatch(p.Body)[1]
	op := e.browser()
	wantPage(t, op.signIn(testOpKey), 200, "Applications", org)
	wantPage(t, op.get("/console/ops/application?id="+id), 200, "Approve")
	p = op.post("/console/ops/approve", url.Values{"id": {id}, "prefixes": {testPrefix, testTestPrefix}, "custom_ids": {"true"}})
	wantPage(t, p, 200, "only this once")
	return keyRE.FindStringSubmatch(p.Body)[1]
}

// createForm is the generated form filled in as a person would.
func createForm(label string) url.Values {
	return url.Values{
		"base":                                     {"test"},
		"url":                                      {"https://landing.example.org/x"},
		"metadata.curation_contact":                {"curator@example.org"},
		"metadata.status":                          {"REGISTERED"},
		"metadata.schema_version":                  {"v1.0.1"},
		"metadata.metadata_license":                {"CC0-1.0"},
		"metadata.resource_info.label":             {label},
		"metadata.resource_info.description":       {"a description text"},
		"metadata.resource_info.resource_category": {"SAMPLE"},
		"metadata.resource_info.representation_variants#n":              {"1"},
		"metadata.resource_info.representation_variants[0].variant_url": {"https://landing.example.org/x.ttl"},
		"metadata.resource_info.representation_variants[0].media_type":  {"text/turtle"},
		"metadata.resource_info.representation_variants[0].size":        {"12"},
		"metadata.related_identifiers#n":                                {"0"},
	}
}

var idLinkRE = regexp.MustCompile(`/console/id\?base=test&amp;id=([A-Z0-9-]+)`)

func TestConsoleJourney(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "Journey Org", "journey@example.org")
	b := e.browser()
	p := b.signIn(key)
	wantPage(t, p, 200, "Your identifiers", "Journey Org")
	if strings.Contains(p.Body, key) || strings.Contains(p.URL, key) {
		t.Fatal("the key is in the page or its URL")
	}

	// The generated form: every model field, the list of variants.
	p = b.get("/console/new?base=test")
	wantPage(t, p, 200, `name="metadata.resource_info.representation_variants[0].variant_url"`,
		`name="metadata.status"`, `<option value="SAMPLE">`, `value="CC0-1.0"`, `value="add:metadata.related_identifiers"`)

	// Field errors from the API, next to their fields, values kept.
	bad := createForm("Bad one")
	bad.Set("metadata.resource_info.representation_variants[0].size", "twelve")
	bad.Set("metadata.status", "")
	p = b.post("/console/new", bad)
	wantPage(t, p, 422, `value="twelve"`, "must be a whole number")
	for _, field := range []string{"metadata.resource_info.representation_variants[0].size", "metadata.status"} {
		if !regexp.MustCompile(`(?s)<label for="` + regexp.QuoteMeta(console.FieldID(field)) + `">[^<]*(<span[^>]*>[^<]*</span>)?</label>\s*(<p class="help"[^>]*>[^<]*</p>\s*)?<p class="error"`).MatchString(p.Body) {
			t.Errorf("no error next to %s:\n%s", field, p.Body)
		}
	}
	// The same payload through the API fails with the same errors.
	api := e.do("PUT", "/testpid/v2/handles/"+testTestPrefix+"/"+nsOf(t, e, key)+"/", key, map[string]any{
		"url": "https://landing.example.org/x", "metadata": map[string]any{"curation_contact": "curator@example.org", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
			"resource_info": map[string]any{"label": "Bad one", "description": "described", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://landing.example.org/x.ttl", "media_type": "text/turtle", "size": "twelve"}}}}})
	for _, fe := range e.want(api, 422).problem(t).Errors {
		if !strings.Contains(p.Body, html.EscapeString(fe.Message)) {
			t.Errorf("the console does not show the API's error %s: %s", fe.Field, fe.Message)
		}
	}

	// Add a second variant without JavaScript: the form comes back with it.
	f := createForm("With two")
	f.Set("list", "add:metadata.resource_info.representation_variants")
	p = b.post("/console/new", f)
	wantPage(t, p, 200, `name="metadata.resource_info.representation_variants[1].variant_url"`, `value="https://landing.example.org/x.ttl"`)

	// Create.
	p = b.post("/console/new", createForm("Created in the console"))
	wantPage(t, p, 200, "The identifier was created.", "Created in the console", `<svg viewBox`, "Created</strong>")
	id := regexp.MustCompile(`name="id" value="([A-Z0-9-]+)"`).FindStringSubmatch(p.Body)[1]

	// Edit: remove the description (an empty optional field), change the label.
	p = b.get("/console/edit?base=test&id=" + id)
	wantPage(t, p, 200, `value="Created in the console"`, `name="version" value="1"`)
	ef := createForm("Edited label")
	ef.Set("id", id)
	ef.Set("version", "1")
	ef.Set("metadata.resource_info.description", "")
	p = b.post("/console/edit", ef)
	wantPage(t, p, 200, "Your changes were saved.", "Edited label", "Resource info › Label", "<del>Created in the console</del>", "<ins>Edited label</ins>")
	// The emptied description is gone: only the history's before column
	// still shows it.
	if n := strings.Count(p.Body, "a description text"); n != 2 || !strings.Contains(p.Body, "<del>a description text</del>") || !strings.Contains(p.Body, "<ins>a description text</ins>") {
		t.Errorf("the emptied description is shown %d times, not only in the history (created, removed)", n)
	}
	// A stale version is refused with the API's 412; the page shows the
	// saved version beside the edit, and sending the form again saves the
	// edit on top of the saved version.
	ef.Set("metadata.resource_info.label", "Stale edit")
	p = b.post("/console/edit", ef)
	wantPage(t, p, 412, "version 2 was saved while you were editing version 1", `name="version" value="2"`,
		"Apply my edit on top of version 2", "<td class=\"saved\">Edited label</td><td class=\"mine\">Stale edit</td>")
	ef.Set("version", "2")
	wantPage(t, b.post("/console/edit", ef), 200, "Your changes were saved.", "<ins>Stale edit</ins>")
	ef.Set("metadata.resource_info.label", "Edited label")
	ef.Set("version", "3")
	wantPage(t, b.post("/console/edit", ef), 200, "Your changes were saved.")

	// Status change with the tombstone preview.
	p = b.post("/console/status", url.Values{"base": {"test"}, "id": {id}, "version": {"4"}, "status": {"OBSOLETED"}})
	wantPage(t, p, 200, "tombstone", "Edited label", `name="confirm" value="yes"`)
	p = b.post("/console/status", url.Values{"base": {"test"}, "id": {id}, "version": {"4"}, "status": {"OBSOLETED"}, "confirm": {"yes"}})
	wantPage(t, p, 200, "The status was changed.", "(now OBSOLETED)")

	// Bulk: JSON Lines and CSV in the shared bulk format, results summarised.
	jl := `{"op":"create","url":"https://bulk.example.org/1","metadata":{"curation_contact":"c@example.org","status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","resource_info":{"resource_category":"DEVICE","representation_variants":[{"media_type":"text/html"}]}}}
{"op":"create","url":"not a url"}`
	wantPage(t, b.get("/console/bulk/template?base=test"), 200, "op,id,url,curation_contact,status")
	b.get("/console/bulk?base=test")
	p = b.post("/console/bulk", url.Values{"base": {"test"}, "format": {"jsonl"}, "text": {jl}})
	wantPage(t, p, 200, "1 created, 0 updated, 1 failed.", "<td>created</td>", "<td>failed</td>")
	csvText := "op,url,curation_contact,status,schema_version,metadata_license,resource_info.resource_category,resource_info.representation_variants\n" +
		`create,https://csv.example.org/1,c@example.org,REGISTERED,v1.0.1,CC0-1.0,DEVICE,"[{""media_type"":""text/html""}]"` + "\n" +
		`create,https://csv.example.org/2,c@example.org,NOPE,v1.0.1,CC0-1.0,DEVICE,"[{""media_type"":""text/html""}]"` + "\n" +
		`update,,,,,,,,` + "\n" + `update,NO-SUCH-ID,https://csv.example.org/3,,,,,,` + "\n"
	p = b.post("/console/bulk", url.Values{"base": {"test"}, "format": {"csv"}, "text": {csvText}})
	wantPage(t, p, 200, "1 created, 0 updated, 3 failed.", "Status must be one of")
	p = b.get("/console/ids?base=test&url=" + url.QueryEscape("https://csv.example.org/*"))
	if n := len(idLinkRE.FindAllString(p.Body, -1)); n != 1 {
		t.Errorf("URL search found %d identifiers, want 1", n)
	}

	// Rotate: a second key, then revoke the first; this session ends.
	b.get("/console/keys")
	p = b.post("/console/keys", url.Values{"name": {"rotated"}})
	wantPage(t, p, 200, "only this once")
	newKey := keyRE.FindStringSubmatch(p.Body)[1]
	firstID := regexp.MustCompile(`name="key_id" value="(key_[a-z0-9]+)"`).FindStringSubmatch(p.Body)[1]
	p = b.post("/console/keys/revoke", url.Values{"key_id": {firstID}})
	wantPage(t, p, 200, "Revoke this key?", "It is the key you signed in with", `name="confirm" value="yes"`)
	e.want(e.do("GET", "/testpid/v2/me", key, nil), 200)
	p = b.post("/console/keys/revoke", url.Values{"key_id": {firstID}, "confirm": {"yes"}})
	wantPage(t, p, 401, "revoked")
	wantPage(t, b.get("/console/ids"), 401, "Sign in")
	e.want(e.do("GET", "/testpid/v2/me", key, nil), 401)
	nb := e.browser()
	wantPage(t, nb.signIn(newKey), 200, "Your identifiers")
	wantPage(t, nb.signIn(key), 401, "is unknown or revoked")

	// The audit log names the SNAA as the actor of its own key changes.
	op := e.browser()
	op.signIn(testOpKey)
	p = op.get("/console/ops/audit")
	wantPage(t, p, 200, "issued key", "revoked key", "with key")
}

// nsOf is the namespace of the key's SNAA.
func nsOf(t *testing.T, e *env, key string) string {
	var me struct {
		SNAA SNAA `json:"snaa"`
	}
	e.want(e.do("GET", "/pid/v2/me", key, nil), 200).json(t, &me)
	return me.SNAA.Namespace
}

func TestConsoleSecurity(t *testing.T) {
	e := newEnv(t)
	keyA := onboard(t, e, "Org A", "a@example.org")
	keyB := onboard(t, e, "Org B", "b@example.org")
	a := e.browser()
	a.signIn(keyA)
	p := a.post("/console/new", createForm("A's own"))
	wantPage(t, p, 200, "The identifier was created.")
	idA := regexp.MustCompile(`name="id" value="([A-Z0-9-]+)"`).FindStringSubmatch(p.Body)[1]

	t.Run("headers", func(t *testing.T) {
		for _, path := range []string{"/apply", "/console/sign-in", "/console/ids", "/console/nope"} {
			p := a.get(path)
			h := p.Header
			if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
				strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
				t.Errorf("%s: CSP %q", path, csp)
			}
			if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: headers %v", path, h)
			}
			if strings.Contains(p.Body, "<script") || strings.Contains(p.Body, " style=") || strings.Contains(p.Body, "<style") {
				t.Errorf("%s: inline script or style", path)
			}
		}
	})
	t.Run("cookie", func(t *testing.T) {
		b := e.browser()
		b.get("/console/sign-in")
		b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		p := b.post("/console/sign-in", url.Values{"key": {keyA}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", p.Status)
		}
		var c string
		for _, v := range p.Header.Values("Set-Cookie") {
			if strings.HasPrefix(v, cookiePlain+"=") {
				c = v
			}
		}
		if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") || !strings.Contains(c, "Path=/") {
			t.Errorf("session cookie %q", c)
		}
		if strings.Contains(p.Header.Get("Location"), "pid_") {
			t.Error("key in the redirect")
		}
	})
	t.Run("CSRF", func(t *testing.T) {
		// A cross-site post: refused by its origin, whatever it carries.
		for _, h := range [][2]string{{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
			form := createForm("forged").Encode() + "&csrf=" + url.QueryEscape(csrfOf(a.last))
			req, _ := http.NewRequest("POST", a.base+"/console/new", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set(h[0], h[1])
			wantPage(t, a.send(req), 403, "cross-site")
		}
		// Without the token, or with another session's, refused.
		wantPage(t, a.post("/console/new", withCSRF(createForm("forged"), "")), 403, "CSRF")
		b := e.browser()
		b.signIn(keyB)
		b.get("/console/ids")
		wantPage(t, a.post("/console/new", withCSRF(createForm("forged"), csrfOf(b.last))), 403, "CSRF")
		// Sign-in and sign-out too.
		c := e.browser()
		wantPage(t, c.post("/console/sign-in", url.Values{"key": {keyA}, "csrf": {"guess"}}), 403)
		wantPage(t, a.post("/console/sign-out", url.Values{"csrf": {"guess"}}), 403)
		if strings.Contains(a.get("/console/ids").Body, "forged") {
			t.Fatal("a forged post created an identifier")
		}
	})
	t.Run("fixation", func(t *testing.T) {
		// A session token planted before sign-in is never the session's.
		b := e.browser()
		u, _ := url.Parse(b.base)
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookiePlain, Value: "planted-by-attacker", Path: "/"}})
		b.signIn(keyA)
		var got string
		for _, c := range b.c.Jar.Cookies(u) {
			if c.Name == cookiePlain {
				got = c.Value
			}
		}
		if got == "" || got == "planted-by-attacker" {
			t.Fatalf("session cookie after sign-in %q", got)
		}
		att := e.browser()
		att.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookiePlain, Value: "planted-by-attacker", Path: "/"}})
		wantPage(t, att.get("/console/ids"), 401, "Sign in")
		// A second sign-in replaces the session: the first token ends.
		b.signIn(keyA)
		old := e.browser()
		old.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookiePlain, Value: got, Path: "/"}})
		wantPage(t, old.get("/console/ids"), 401)
	})
	t.Run("isolation", func(t *testing.T) {
		b := e.browser()
		b.signIn(keyB)
		// A's identifier is not B's: B's console looks in B's namespace only.
		p := b.get("/console/id?base=test&id=" + idA)
		if p.Status != 404 || strings.Contains(p.Body, "A&#39;s own") || strings.Contains(p.Body, "A's own") {
			t.Fatalf("B reads A's identifier: %d\n%s", p.Status, p.Body)
		}
		b.get("/console/ids?base=test")
		ef := createForm("taken over")
		ef.Set("id", idA)
		wantPage(t, b.post("/console/edit", ef), 404)
		for _, path := range []string{"/console/ops/applications", "/console/ops/snaas", "/console/ops/audit", "/console/ops/snaa?id=x"} {
			wantPage(t, b.get(path), 403)
		}
		wantPage(t, b.post("/console/ops/approve", url.Values{"id": {"x"}}), 403)
		// B cannot revoke A's keys.
		b.get("/console/keys")
		var akeys struct{ Keys []Key }
		var me struct{ SNAA SNAA }
		e.want(e.do("GET", "/pid/v2/me", keyA, nil), 200).json(t, &me)
		e.want(e.do("GET", "/ops/v1/snaas/"+me.SNAA.ID+"/keys", testOpKey, nil), 200).json(t, &akeys)
		wantPage(t, b.post("/console/keys/revoke", url.Values{"key_id": {akeys.Keys[0].ID}}), 404)
		e.want(e.do("GET", "/pid/v2/me", keyA, nil), 200)
		// The operator's session is not an SNAA's.
		op := e.browser()
		op.signIn(testOpKey)
		wantPage(t, op.get("/console/ids"), 403)
	})
	t.Run("XSS", func(t *testing.T) {
		const x = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`
		// Through the application form into the operator's queue.
		b := e.browser()
		f := applyForm(x, "xss@example.org")
		f.Set("technical_contact.name", x)
		f.Set("administrative_contact.name", x)
		f.Set("maintenance_statement", x)
		wantPage(t, b.post("/apply", f), 201)
		op := e.browser()
		op.signIn(testOpKey)
		p := op.get("/console/ops/applications")
		checkEscaped(t, p, x)
		id := regexp.MustCompile(`application\?id=(app_[a-z0-9]+)">`).FindStringSubmatch(p.Body)[1]
		checkEscaped(t, op.get("/console/ops/application?id="+id), x)
		// Rejected forms echo every field.
		f.Set("technical_contact.email", x)
		checkEscaped(t, b.post("/apply", f), x)
		// Through every identifier field into the SNAA's pages.
		a.get("/console/new?base=test")
		cf := createForm(x)
		cf.Set("metadata.resource_info.description", x)
		cf.Set("metadata.resource_info.representation_variants[0].media_type", x)
		cf.Set("url", "https://example.org/"+x)
		cf.Set("metadata.curation_contact", x)
		checkEscaped(t, a.post("/console/new", cf), x) // refused: the values come back
		cf = createForm(x)
		cf.Set("metadata.resource_info.description", x)
		cf.Set("metadata.resource_info.representation_variants[0].encoding_format", x)
		p = a.post("/console/new", cf)
		wantPage(t, p, 200, "The identifier was created.")
		checkEscaped(t, p, x)
		checkEscaped(t, op.get("/console/ops/audit"), x)
		checkEscaped(t, op.post("/console/ops/approve", url.Values{"id": {id}, "prefixes": {testTestPrefix}}), x)
		checkEscaped(t, op.get("/console/ops/snaas"), x)
	})
}

func withCSRF(f url.Values, tok string) url.Values {
	f.Set("csrf", tok)
	return f
}

// checkEscaped fails if payload x appears unescaped in the page (it must
// appear escaped, or not at all where the field is not shown).
func checkEscaped(t *testing.T, p *page, x string) {
	t.Helper()
	if strings.Contains(p.Body, "<script>alert") || strings.Contains(p.Body, "<img src=x") {
		t.Fatalf("%s: unescaped payload\n%s", p.URL, p.Body)
	}
	if !strings.Contains(p.Body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("%s: the payload is not shown (escaped)\n%s", p.URL, p.Body)
	}
}

func TestConsoleSessionExpiry(t *testing.T) {
	var now time.Time
	clock := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	now = clock
	e := newEnv(t, func(c *Config) {
		c.Now = func() time.Time { return now }
		c.SessionIdle, c.SessionMax = 10*time.Minute, time.Hour
	})
	key := onboard(t, e, "Clock Org", "clock@example.org")
	b := e.browser()
	wantPage(t, b.signIn(key), 200, "Your identifiers")
	// Used every 9 minutes, it lives until the absolute limit.
	for i := 0; i < 6; i++ {
		now = now.Add(9 * time.Minute)
		wantPage(t, b.get("/console/ids"), 200, "Your identifiers")
	}
	now = now.Add(9 * time.Minute) // 63 minutes after sign-in
	wantPage(t, b.get("/console/ids"), 401, "expired")
	// Idle for longer than the idle limit: ended.
	wantPage(t, b.signIn(key), 200, "Your identifiers")
	now = now.Add(11 * time.Minute)
	wantPage(t, b.get("/console/ids"), 401, "without use")
	// Sign-out ends the session on the server, not only in the browser.
	wantPage(t, b.signIn(key), 200)
	u, _ := url.Parse(b.base)
	var tok string
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == cookiePlain {
			tok = c.Value
		}
	}
	wantPage(t, b.post("/console/sign-out", url.Values{}), 200, "You are signed out.")
	replay := e.browser()
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookiePlain, Value: tok, Path: "/"}})
	wantPage(t, replay.get("/console/ids"), 401)
}

func TestConsoleSessionWrites(t *testing.T) {
	// Requests within a minute of each other write nothing.
	e := newEnv(t)
	key := onboard(t, e, "Quiet Org", "quiet@example.org")
	b := e.browser()
	b.signIn(key)
	before := e.committedTx()
	for i := 0; i < 20; i++ {
		wantPage(t, b.get("/console/ids"), 200)
	}
	if n := e.committedTx() - before; n > 1 {
		t.Fatalf("20 page views committed %d transactions", n)
	}
}

func TestConsoleFormFollowsModel(t *testing.T) {
	mod := `name = "tiny"
[url]
index = 1
type = "URL"
[changes]
index = 16
type = "CHANGES"
[admin]
index = 100
admin_index = 300
[[fields]]
name = "colour"
required = true
index = 20
type = "COLOUR"
[fields.schema]
type = "string"
enum = ["RED", "GREEN"]
[[fields]]
name = "parts"
index = 21
type = "PARTS"
encoding = "json"
[fields.schema]
type = "array"
[fields.schema.items]
type = "object"
[fields.schema.items.properties.weight]
type = "integer"
`
	e := newEnv(t, func(c *Config) { c.Model = []byte(mod) })
	key := onboard(t, e, "Tiny Org", "tiny@example.org")
	b := e.browser()
	b.signIn(key)
	p := b.get("/console/new?base=test")
	wantPage(t, p, 200, `name="metadata.colour"`, `<option value="GREEN">`, `value="add:metadata.parts"`)
	if strings.Contains(p.Body, "resource_info") {
		t.Fatal("the form shows the default model's fields")
	}
	f := url.Values{"base": {"test"}, "url": {"https://tiny.example.org/"}, "metadata.colour": {"GREEN"},
		"metadata.parts#n": {"2"}, "metadata.parts[0].weight": {"3"}, "metadata.parts[1].weight": {"4"}}
	wantPage(t, b.post("/console/new", f), 200, "The identifier was created.", "GREEN", "Weight")
}

func TestConsoleCookieOverTLS(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "TLS Org", "tls@example.org")
	ts := httptest.NewTLSServer(e.srv.Handler())
	t.Cleanup(ts.Close)
	b := e.browser()
	b.c, b.base = ts.Client(), ts.URL
	jar, _ := cookiejar.New(nil)
	b.c.Jar = jar
	b.get("/console/sign-in")
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	p := b.post("/console/sign-in", url.Values{"key": {key}})
	var c string
	for _, v := range p.Header.Values("Set-Cookie") {
		if strings.HasPrefix(v, cookieTLS+"=") {
			c = v
		}
	}
	if p.Status != http.StatusSeeOther || !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
		t.Fatalf("sign-in over TLS: %d, cookie %q", p.Status, c)
	}
	b.c.CheckRedirect = nil
	wantPage(t, b.get("/console/ids"), 200, "Your identifiers")
}

// TestIndexPage: the admin listener's "/" is an HTML page for a person who
// opens the address the banner prints: it links the console, the application
// form, the API description and the metrics, escapes the resolver URL it
// shows, and carries the pages' headers. Every other unknown path, and "/"
// with another method, stays a problem+json 404.
func TestIndexPage(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PublicURL = `https://pid.example.org/"><script>x</script>` })
	r := e.do("GET", "/", "", nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %q, want 200 text/html\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	body := string(r.Body)
	for _, href := range []string{"/console/", "/apply", "/apply/status", "/openapi.json", "/metrics", "/healthz"} {
		if !strings.Contains(body, `href="`+href+`"`) {
			t.Errorf("GET /: no link to %s\n%s", href, body)
		}
	}
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("GET /: the resolver URL is not escaped\n%s", body)
	}
	if csp := r.Header.Get("Content-Security-Policy"); csp != console.PageCSP {
		t.Errorf("GET /: Content-Security-Policy %q, want %q", csp, console.PageCSP)
	}
	if r := e.do("HEAD", "/", "", nil); r.Status != 200 {
		t.Errorf("HEAD /: %d, want 200", r.Status)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/nope"}, {"GET", "/index.html"}, {"POST", "/"}, {"GET", "/pid/v2/nope"}} {
		r := e.do(c.method, c.path, "", nil)
		if r.Status != 404 {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, r.Status)
		}
		r.problem(t)
	}
}

// TestConsoleAdmission: the console's reads and writes are admitted as the
// API admits them: writes are refused in maintenance, reads are not, and a
// suspended SNAA's session reads nothing.
func TestConsoleAdmission(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "Admitted Org", "admitted@example.org")
	b := e.browser()
	wantPage(t, b.signIn(key), 200, "Your identifiers")
	b.get("/console/new?base=test")
	e.srv.SetReadOnly(true)
	wantPage(t, b.post("/console/new", createForm("In maintenance")), 503, "maintenance")
	wantPage(t, b.get("/console/ids?base=test"), 200, "Your identifiers")
	b.get("/console/bulk?base=test")
	wantPage(t, b.post("/console/bulk", url.Values{"base": {"test"}, "format": {"jsonl"}, "text": {`{"url":"https://bulk.example.org/m"}`}}), 503, "maintenance")
	e.srv.SetReadOnly(false)
	b.get("/console/new?base=test")
	wantPage(t, b.post("/console/new", createForm("After maintenance")), 200, "The identifier was created.")

	var me struct {
		SNAA SNAA `json:"snaa"`
	}
	e.want(e.do("GET", "/pid/v2/me", key, nil), 200).json(t, &me)
	e.want(e.do("PATCH", "/ops/v1/snaas/"+me.SNAA.ID, testOpKey, map[string]any{"suspended": true}), 200)
	wantPage(t, b.get("/console/ids?base=test"), 403, "suspended")
}

// TestConsoleOpsRefusals: the operator's pages refuse what the operator
// routes refuse, with the same problems.
func TestConsoleOpsRefusals(t *testing.T) {
	e := newEnv(t)
	op := e.browser()
	wantPage(t, op.signIn(testOpKey), 200, "Applications")
	wantPage(t, op.get("/console/ops/applications?state=bogus"), 400, "state must be SUBMITTED, APPROVED or REJECTED")
	wantPage(t, op.get("/console/ops/applications?state=rejected"), 200, "Applications")
	wantPage(t, op.get("/console/ops/application?id=app_none"), 404, "no application")
	wantPage(t, op.get("/console/ops/snaa?id=snaa_none"), 404, "no SNAA")
	wantPage(t, op.get("/console/ops/audit?before=x"), 400, "before must be the sequence number of an audit entry")
	wantPage(t, op.get("/console/ops/audit"), 200, "Audit log")
}
