package e2e

import (
	"html"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pidnode/internal/etcdtest"
)

// preForm GETs a page that has a sign-in style form and returns its
// pre-session cookie ("name=value") and CSRF token.
func preForm(t *testing.T, u string) (cookie, csrf string) {
	t.Helper()
	st, page, res := consoleReq(t, "GET", u, "", nil)
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, st, page)
	}
	for _, c := range res.Cookies() {
		if c.Name == "pidnode-signin" {
			cookie = c.Name + "=" + c.Value
		}
	}
	return cookie, html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
}

// TestClusterPersonRemoved: a person invited on one node joins and signs
// in on the other; the session works on both; removing the person on the
// first node ends the session on the second at once.
func TestClusterPersonRemoved(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)

	admin := consoleSignIn(t, a, a.Key)
	_, page, _ := consoleReq(t, "GET", a.adminURL()+"/console/people", admin, nil)
	csrf := html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
	st, body, _ := consoleReq(t, "POST", a.adminURL()+"/console/people", admin, url.Values{"csrf": {csrf}, "email": {"pat@example.org"}, "role": {"editor"}})
	m := regexp.MustCompile(`id="invite-link">[^<]*token=([^<"]+)<`).FindStringSubmatch(body)
	if st != http.StatusOK || m == nil {
		t.Fatalf("inviting on a: %d\n%s", st, body)
	}
	token := html.UnescapeString(m[1])

	// Join and sign in on b.
	pre, csrf := preForm(t, b.adminURL()+"/console/join?token="+url.QueryEscape(token))
	const pw = "pat's long cluster password"
	st, body, _ = consoleReq(t, "POST", b.adminURL()+"/console/join", pre, url.Values{"csrf": {csrf}, "token": {token}, "password": {pw}, "password2": {pw}})
	if st != http.StatusOK || !strings.Contains(body, "Welcome, pat@example.org") {
		t.Fatalf("joining on b: %d\n%s", st, body)
	}
	pre, csrf = preForm(t, b.adminURL()+"/console/sign-in")
	st, body, res := consoleReq(t, "POST", b.adminURL()+"/console/sign-in/person", pre, url.Values{"csrf": {csrf}, "email": {"pat@example.org"}, "password": {pw}})
	var person string
	for _, c := range res.Cookies() {
		if c.Name == "pidnode-session" && c.Value != "" {
			person = c.Name + "=" + c.Value
		}
	}
	if st != http.StatusSeeOther || person == "" {
		t.Fatalf("signing in on b: %d\n%s", st, body)
	}
	for _, n := range []*node{a, b} {
		if st, body, _ := consoleReq(t, "GET", n.adminURL()+"/console/ids", person, nil); st != http.StatusOK || !strings.Contains(body, "pat@example.org") {
			t.Fatalf("the person's session on %s: %d\n%s", n.addr["admin"], st, body)
		}
	}

	// Remove the person on a: the session on b ends.
	_, page, _ = consoleReq(t, "GET", a.adminURL()+"/console/people", admin, nil)
	csrf = html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
	id := regexp.MustCompile(`name="id" value="(person_[a-z0-9]+)"`).FindStringSubmatch(page)[1]
	if st, body, _ := consoleReq(t, "POST", a.adminURL()+"/console/people/change", admin, url.Values{"csrf": {csrf}, "id": {id}, "remove": {"1"}}); st != http.StatusSeeOther {
		t.Fatalf("removing on a: %d\n%s", st, body)
	}
	if st, body, _ := consoleReq(t, "GET", b.adminURL()+"/console/ids", person, nil); st != http.StatusUnauthorized {
		t.Fatalf("the removed person's session on b: %d\n%s", st, body)
	}
	if st, _, _ := consoleReq(t, "GET", b.adminURL()+"/pid/v2/me", person, nil); st != http.StatusUnauthorized {
		t.Fatalf("the removed person's session on b's API: %d", st)
	}
}
