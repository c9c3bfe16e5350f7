package e2e

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pidnode/internal/etcdtest"
)

// consoleGet fetches a console page with the session cookie (no jar: the
// cookie goes wherever the test sends it).
func consoleReq(t *testing.T, method, u, cookie string, form url.Values) (int, string, *http.Response) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		pu, _ := url.Parse(u)
		req.Header.Set("Origin", "http://"+pu.Host)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res
}

var csrfFieldRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// consoleSignIn signs in on n's console with key and returns the session
// cookie ("name=value").
func consoleSignIn(t *testing.T, n *node, key string) string {
	t.Helper()
	_, page, res := consoleReq(t, "GET", n.adminURL()+"/console/sign-in", "", nil)
	var pre string
	for _, c := range res.Cookies() {
		pre = c.Name + "=" + c.Value
	}
	csrf := html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
	st, body, res := consoleReq(t, "POST", n.adminURL()+"/console/sign-in", pre, url.Values{"key": {key}, "csrf": {csrf}})
	if st != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", st, body)
	}
	for _, c := range res.Cookies() {
		if c.Name == "pidnode-session" && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatal("sign-in set no session cookie")
	return ""
}

// TestClusterConsoleSession: a console session started on one node is
// valid on the other (the sessions bucket is replicated); signing out on
// the other ends it on both, and revoking the key through one node ends
// its sessions on both.
func TestClusterConsoleSession(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)

	cookie := consoleSignIn(t, a, a.Key)
	for _, n := range []*node{a, b} {
		st, body, _ := consoleReq(t, "GET", n.adminURL()+"/console/ids?base=test", cookie, nil)
		if st != http.StatusOK || !strings.Contains(body, "Your identifiers") {
			t.Fatalf("the session started on a, on %s: %d\n%s", n.addr["admin"], st, body)
		}
	}
	// A write through the session on b, read through a.
	_, page, _ := consoleReq(t, "GET", b.adminURL()+"/console/keys", cookie, nil)
	csrf := html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
	st, body, _ := consoleReq(t, "POST", b.adminURL()+"/console/keys", cookie, url.Values{"csrf": {csrf}, "name": {"issued on b"}})
	if st != http.StatusOK || !strings.Contains(body, "only this once") {
		t.Fatalf("issuing a key on b: %d\n%s", st, body)
	}
	newKey := regexp.MustCompile(`id="new-key">(pid_[a-z0-9]+)<`).FindStringSubmatch(body)[1]
	if _, body, _ := consoleReq(t, "GET", a.adminURL()+"/console/keys", cookie, nil); !strings.Contains(body, "issued on b") {
		t.Fatalf("a does not list the key issued on b:\n%s", body)
	}

	// Sign out on b: the session ends on a too.
	st, _, _ = consoleReq(t, "POST", b.adminURL()+"/console/sign-out", cookie, url.Values{"csrf": {csrf}})
	if st != http.StatusOK {
		t.Fatalf("sign-out on b: %d", st)
	}
	if st, _, _ := consoleReq(t, "GET", a.adminURL()+"/console/ids", cookie, nil); st != http.StatusUnauthorized {
		t.Fatalf("a session signed out on b still works on a: %d", st)
	}

	// Revoking the demo key through a ends its sessions on b at once.
	cookie = consoleSignIn(t, b, a.Key)
	other := consoleSignIn(t, a, newKey)
	_, page, _ = consoleReq(t, "GET", a.adminURL()+"/console/keys", other, nil)
	csrf = html.UnescapeString(csrfFieldRE.FindStringSubmatch(page)[1])
	first := regexp.MustCompile(`name="key_id" value="(key_[a-z0-9]+)"`).FindStringSubmatch(page)[1]
	if st, body, _ := consoleReq(t, "POST", a.adminURL()+"/console/keys/revoke", other, url.Values{"csrf": {csrf}, "key_id": {first}, "confirm": {"yes"}}); st != http.StatusSeeOther {
		t.Fatalf("revoking on a: %d\n%s", st, body)
	}
	if st, body, _ := consoleReq(t, "GET", b.adminURL()+"/console/ids", cookie, nil); st != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Fatalf("the revoked key's session on b: %d\n%s", st, body)
	}
	if st, _, _ := consoleReq(t, "GET", b.adminURL()+"/console/ids", other, nil); st != http.StatusOK {
		t.Fatalf("the new key's session on b: %d", st)
	}
}
