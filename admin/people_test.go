package admin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"pidnode/console"
	"pidnode/people"
)

var inviteRE = regexp.MustCompile(`id="invite-link">([^<]+)<`)
var totpRE = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// invite invites email with role through b's people page and returns the
// invitation link's path and query.
func invite(t *testing.T, b *browser, email, role string) string {
	t.Helper()
	wantPage(t, b.get("/console/people"), 200, `name="email"`, `type="email"`)
	p := b.post("/console/people", url.Values{"email": {email}, "role": {role}})
	wantPage(t, p, 200, "only this once", strings.ToLower(email))
	link, err := url.Parse(html.UnescapeString(inviteRE.FindStringSubmatch(p.Body)[1]))
	if err != nil {
		t.Fatal(err)
	}
	return link.RequestURI()
}

// join accepts the invitation at link in a new browser and returns it.
func join(t *testing.T, e *env, link, password string, totp bool) (*browser, *page) {
	t.Helper()
	b := e.browser()
	wantPage(t, b.get(link), 200, "You were invited as")
	f := url.Values{"token": {strings.TrimPrefix(link, "/console/join?token=")}, "password": {password}, "password2": {password}}
	if totp {
		f.Set("totp", "1")
	}
	return b, b.post("/console/join", f)
}

// apiAs sends an API request with b's cookies, as a script of the console
// does, with csrf in CSRFHeader if not empty.
func apiAs(t *testing.T, b *browser, method, path, csrf string, body any) *page {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, b.base+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set(console.CSRFHeader, csrf)
	}
	return b.send(req)
}

// TestPeopleJourney: an SNAA invites people by e-mail; an invitee joins
// with a password (and TOTP), signs in and sees the namespace; a viewer is
// refused an edit in the console and on the API; an editor's writes name
// the person in the audit log and the history; a removed person's session
// ends at once.
func TestPeopleJourney(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "People Org", "people@example.org")
	ns := nsOf(t, e, key)
	adm := e.browser()
	adm.signIn(key)

	// A viewer joins with a password and signs in.
	link := invite(t, adm, "Viewer@Example.org", "viewer")
	v, p := join(t, e, link, "a viewer's long password", false)
	wantPage(t, p, 200, "Welcome, viewer@example.org")
	wantPage(t, v.get(link), 404, "not valid") // single use
	v.get("/console/sign-in")
	p = v.post("/console/sign-in/person", url.Values{"email": {"viewer@example.org"}, "password": {"a viewer's long password"}})
	wantPage(t, p, 200, "Your identifiers", ns, "viewer@example.org")
	csrf := csrfOf(p.Body)

	// The viewer reads, and is refused writes: console and API alike.
	wantPage(t, v.get("/console/new?base=test"), 200)
	wantPage(t, v.post("/console/new", createForm("Not mine to make")), 403, "your role is viewer")
	wantPage(t, v.post("/console/people", url.Values{"email": {"x@example.org"}, "role": {"admin"}}), 403)
	if r := apiAs(t, v, "GET", "/pid/v2/me", "", nil); r.Status != 200 {
		t.Fatalf("GET /me with a viewer's session: %d %s", r.Status, r.Body)
	}
	if r := apiAs(t, v, "PUT", "/testpid/v2/handles/"+testTestPrefix+"/"+ns+"/", csrf, validPayload()); r.Status != 403 || !strings.Contains(r.Body, "viewer") {
		t.Fatalf("a viewer's API write: %d %s", r.Status, r.Body)
	}

	// An editor joins with TOTP; the code is asked for.
	link = invite(t, adm, "editor@example.org", "editor")
	ed, p := join(t, e, link, "an editor's long password", true)
	wantPage(t, p, 200, "only this once", "otpauth://totp/")
	secret := totpRE.FindStringSubmatch(p.Body)[1]
	ed.get("/console/sign-in")
	wantPage(t, ed.post("/console/sign-in/person", url.Values{"email": {"editor@example.org"}, "password": {"an editor's long password"}}), 401)
	code, _ := people.TOTPCode(secret, time.Now())
	ed.get("/console/sign-in")
	p = ed.post("/console/sign-in/person", url.Values{"email": {"editor@example.org"}, "password": {"an editor's long password"}, "code": {code}})
	wantPage(t, p, 200, "Your identifiers", ns)

	// The editor writes in the console; the history names the person.
	ed.get("/console/new?base=test")
	p = ed.post("/console/new", createForm("Made by a person"))
	wantPage(t, p, 200, "The identifier was created.", "by editor@example.org")
	edCSRF := csrfOf(p.Body)
	// On the API, with the session's CSRF token only.
	payload := validPayload()
	if r := apiAs(t, ed, "PUT", "/testpid/v2/handles/"+testTestPrefix+"/"+ns+"/", "", payload); r.Status != 403 {
		t.Fatalf("an API write without the CSRF token: %d %s", r.Status, r.Body)
	}
	if r := apiAs(t, ed, "PUT", "/testpid/v2/handles/"+testTestPrefix+"/"+ns+"/", edCSRF, payload); r.Status != 201 {
		t.Fatalf("an editor's API write: %d %s", r.Status, r.Body)
	}
	// The editor may not manage keys.
	ed.get("/console/keys")
	wantPage(t, ed.post("/console/keys", url.Values{"name": {"mine"}}), 403, "this needs admin")
	op := e.browser()
	op.signIn(testOpKey)
	p = op.get("/console/ops/audit")
	wantPage(t, p, 200, " invited <strong", ", person editor@example.org joined as <strong", ", person editor@example.org created identifier")

	// The viewer's session opens the change feed's stream.
	req, _ := http.NewRequest("GET", v.base+"/pid/v2/handles/"+testPrefix+"/"+ns+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := v.c.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("a viewer's event stream: %v %v", res, err)
	}
	stream := &sseClient{res: res, rd: bufio.NewReader(res.Body)}
	defer stream.close()
	if r := apiAs(t, ed, "PUT", "/pid/v2/handles/"+testPrefix+"/"+ns+"/", edCSRF, validPayload()); r.Status != 201 {
		t.Fatalf("an editor's API write: %d %s", r.Status, r.Body)
	}
	if ev, err := stream.next(); err != nil {
		t.Fatalf("the viewer's stream: %v", err)
	} else if ev.event != "handle.create" || ev.data.Person != "editor@example.org" {
		t.Fatalf("the viewer's stream sent %+v, want the editor's create naming the editor", ev)
	}

	// Removing the viewer ends its session at once, console and API.
	p = adm.get("/console/people")
	id := regexp.MustCompile(`name="id" value="(person_[a-z0-9]+)">\s*<select name="role" aria-label="Role of viewer@example.org"`).FindStringSubmatch(p.Body)
	if id == nil {
		t.Fatalf("no viewer on the people page:\n%s", p.Body)
	}
	wantPage(t, adm.post("/console/people/change", url.Values{"id": {id[1]}, "remove": {"1"}}), 200, "sessions have ended")
	wantPage(t, v.get("/console/ids"), 401, "Sign in")
	if r := apiAs(t, v, "GET", "/pid/v2/me", "", nil); r.Status != 401 {
		t.Fatalf("GET /me with a removed person's session: %d", r.Status)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.next(); err != nil {
				ended <- err
				return
			}
		}
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a removed person's event stream is still open")
	}
	// The hashes never leave the node: no page or view holds them.
	if strings.Contains(adm.get("/console/people").Body, "argon2id") {
		t.Error("the people page shows a password hash")
	}
}

// TestPeopleLockout: repeated wrong passwords lock the account (429),
// counted in a metric; an unknown address is refused as a wrong password.
func TestPeopleLockout(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "Lock Org", "lock@example.org")
	adm := e.browser()
	adm.signIn(key)
	_, p := join(t, e, invite(t, adm, "ada@example.org", "editor"), "the right long password", false)
	wantPage(t, p, 200, "Welcome")
	b := e.browser()
	for range people.DefaultLockAfter {
		b.get("/console/sign-in")
		wantPage(t, b.post("/console/sign-in/person", url.Values{"email": {"ada@example.org"}, "password": {"wrong"}}), 401, "e-mail address, password or code is wrong")
	}
	b.get("/console/sign-in")
	p = b.post("/console/sign-in/person", url.Values{"email": {"ada@example.org"}, "password": {"the right long password"}})
	wantPage(t, p, 429, "locked")
	b.get("/console/sign-in")
	wantPage(t, b.post("/console/sign-in/person", url.Values{"email": {"nobody@example.org"}, "password": {"wrong"}}), 401, "e-mail address, password or code is wrong")
	// cmd adds these families to /metrics (admin.Server.People).
	m := string(e.srv.People().AppendMetrics(nil))
	if !strings.Contains(m, "pidnode_people_lockouts_total 1") || !strings.Contains(m, `pidnode_people_signins_total{result="locked"} 1`) {
		t.Errorf("metrics lack the lockout:\n%s", m)
	}
}

// TestOperatorPeople: the operator's people are invited on the operator's
// people page; a viewer reads the queue and is refused a decision, an admin
// decides, and the audit log names the person.
func TestOperatorPeople(t *testing.T) {
	e := newEnv(t)
	op := e.browser()
	op.signIn(testOpKey)
	wantPage(t, op.get("/console/ops/people"), 200, "The operator's people", `name="email"`)
	inviteOp := func(email, role string) string {
		op.get("/console/ops/people")
		p := op.post("/console/ops/people", url.Values{"email": {email}, "role": {role}})
		wantPage(t, p, 200, "only this once")
		link, _ := url.Parse(html.UnescapeString(inviteRE.FindStringSubmatch(p.Body)[1]))
		return link.RequestURI()
	}
	signInAs := func(link, email string) *browser {
		b, p := join(t, e, link, "an operator person's password", false)
		wantPage(t, p, 200, "Welcome")
		p = b.post("/console/sign-in/person", url.Values{"email": {email}, "password": {"an operator person's password"}})
		wantPage(t, p, 200, "Applications", email)
		return b
	}
	viewer := signInAs(inviteOp("olga@example.org", "viewer"), "olga@example.org")
	admin := signInAs(inviteOp("otto@example.org", "admin"), "otto@example.org")

	var app Application
	e.want(e.do("POST", "/ops/v1/applications", testOpKey, testApplication), 201).json(t, &app)
	wantPage(t, viewer.get("/console/ops/application?id="+app.ID), 200, "Approve")
	wantPage(t, viewer.post("/console/ops/approve", url.Values{"id": {app.ID}, "prefixes": {testPrefix}}), 403, "your role is viewer")
	if r := apiAs(t, viewer, "POST", "/ops/v1/applications/"+app.ID+"/approve", csrfOf(viewer.last), map[string]any{}); r.Status != 403 || !strings.Contains(r.Body, "viewer") {
		t.Fatalf("an operator viewer's API approval: %d %s", r.Status, r.Body)
	}
	admin.get("/console/ops/application?id=" + app.ID)
	wantPage(t, admin.post("/console/ops/approve", url.Values{"id": {app.ID}, "prefixes": {testPrefix}}), 200, "only this once")
	// The same through the API with the admin's session.
	var app2 Application
	e.want(e.do("POST", "/ops/v1/applications", testOpKey, testApplication), 201).json(t, &app2)
	csrf := csrfOf(admin.get("/console/ops/applications").Body)
	if r := apiAs(t, admin, "POST", "/ops/v1/applications/"+app2.ID+"/approve", csrf, map[string]any{}); r.Status != 200 {
		t.Fatalf("an operator admin's API approval: %d %s", r.Status, r.Body)
	}
	p := op.get("/console/ops/audit")
	if n := len(regexp.MustCompile(`The operator&#39;s person otto@example.org approved application`).FindAllString(p.Body, -1)); n != 2 {
		t.Errorf("the audit log names the person of %d approvals, want 2:\n%s", n, p.Body)
	}
}

// TestPeopleWithdraw: an open invitation is listed on the people page and
// withdrawn there; its link then no longer works.
func TestPeopleWithdraw(t *testing.T) {
	e := newEnv(t)
	key := onboard(t, e, "Withdraw Org", "wd@example.org")
	adm := e.browser()
	adm.signIn(key)
	link := invite(t, adm, "late@example.org", "viewer")
	p := adm.get("/console/people")
	wantPage(t, p, 200, "Open invitations", "late@example.org")
	inv := regexp.MustCompile(`name="invitation" value="([0-9a-f]{64})"`).FindStringSubmatch(p.Body)
	if inv == nil {
		t.Fatalf("no withdraw form:\n%s", p.Body)
	}
	wantPage(t, adm.post("/console/people/change", url.Values{"invitation": {inv[1]}}), 200, "withdrawn")
	if strings.Contains(adm.last, "late@example.org") {
		t.Error("the withdrawn invitation is still listed")
	}
	wantPage(t, e.browser().get(link), 404, "not valid")
}
