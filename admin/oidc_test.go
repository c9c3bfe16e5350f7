package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"pidnode/people"
)

// The example provider's users (zitadel/oidc example/server/storage).
const (
	oidcUser1 = "test-user@127.0.0.1" // subject id1
	oidcUser2 = "test-user2"          // subject id2
	oidcPass  = "verysecure"
)

// oidcNode is a node whose people sign in through a real OpenID Connect
// provider on loopback (zitadel/oidc's op package, with its example
// storage and login form).
type oidcNode struct {
	e        *env
	base     string // the node's admin URL
	issuer   string
	callback string
	oidc     *people.OIDC
}

func newOIDCNode(t *testing.T) *oidcNode {
	t.Helper()
	var h http.Handler = http.NotFoundHandler()
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(node.Close)
	n := &oidcNode{base: node.URL, callback: node.URL + "/console/oidc/callback"}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.issuer = "http://" + l.Addr().String()
	st := storage.NewStorageWithClients(storage.NewUserStore(n.issuer), map[string]*storage.Client{
		"pidnode": storage.WebClient("pidnode", "pidnode-secret", n.callback),
		"other":   storage.WebClient("other", "other-secret", n.callback),
	})
	// The example server logs every request through slog's default
	// logger, which it sets to the one it is given: a quiet one.
	quiet := slog.New(slog.DiscardHandler)
	prov := &http.Server{Handler: exampleop.SetupServer(n.issuer, st, quiet, false), ReadHeaderTimeout: 5 * time.Second}
	go prov.Serve(l)
	t.Cleanup(func() { prov.Close() })

	n.oidc, err = people.NewOIDC(context.Background(), people.OIDCConfig{Issuer: n.issuer, ClientID: "pidnode",
		ClientSecret: "pidnode-secret", RedirectURL: n.callback})
	if err != nil {
		t.Fatal(err)
	}
	n.e = newEnv(t, func(c *Config) { c.OIDC = n.oidc })
	h = n.e.srv.Handler()
	return n
}

func (n *oidcNode) browser() *browser {
	b := n.e.browser()
	b.base = n.base
	return b
}

// providerLogin signs in at the provider's login form, on which b stands
// (its URL carries the authorisation request's id), and follows the
// redirects back.
func providerLogin(t *testing.T, b *browser, p *page, user string) *page {
	t.Helper()
	u, err := url.Parse(p.URL)
	if err != nil || u.Query().Get("authRequestID") == "" {
		t.Fatalf("not the provider's login form: %s\n%s", p.URL, p.Body)
	}
	f := url.Values{"username": {user}, "password": {oidcPass}, "id": {u.Query().Get("authRequestID")}}
	req, _ := http.NewRequest("POST", u.Scheme+"://"+u.Host+"/login/username", strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(req)
}

// TestOIDCSignIn: an invitee joins through the provider, the subject is
// bound to the person, who later signs in through it and sees the
// namespace; an unknown subject is refused; a callback not started in
// this browser is refused.
func TestOIDCSignIn(t *testing.T) {
	n := newOIDCNode(t)
	key := onboard(t, n.e, "Federated Org", "fed@example.org")
	ns := nsOf(t, n.e, key)
	adm := n.browser()
	adm.signIn(key)
	link := invite(t, adm, "fed-person@example.org", "editor")

	b := n.browser()
	wantPage(t, b.get(link), 200, "Continue with your institution")
	wantPage(t, b.get("/console/sign-in"), 200, "Sign in with your institution")
	if strings.Contains(b.last, `action="/console/sign-in/person"`) {
		t.Error("the sign-in page offers passwords on a node with OpenID Connect")
	}
	b.get(link)
	p := b.post("/console/oidc/start", url.Values{"token": {strings.TrimPrefix(link, "/console/join?token=")}})
	p = providerLogin(t, b, p, oidcUser1)
	wantPage(t, p, 200, "You are signed in as fed-person@example.org")
	wantPage(t, b.get("/console/ids"), 200, "Your identifiers", ns, "fed-person@example.org")

	// Later: a new browser signs in through the provider alone.
	b2 := n.browser()
	b2.get("/console/sign-in")
	p = providerLogin(t, b2, b2.post("/console/oidc/start", url.Values{}), oidcUser1)
	wantPage(t, p, 200, "You are signed in as fed-person@example.org")

	// An unknown subject is refused.
	b3 := n.browser()
	b3.get("/console/sign-in")
	p = providerLogin(t, b3, b3.post("/console/oidc/start", url.Values{}), oidcUser2)
	wantPage(t, p, 401, "not a person of this node")
	wantPage(t, b3.get("/console/ids"), 401, "Sign in")

	// A callback this browser did not start (no state cookie) is refused.
	wantPage(t, n.browser().get("/console/oidc/callback?code=x&state=y"), 403, "not started in this browser")
}

// idToken runs the authorisation code flow at the provider for clientID
// with nonce, as a relying party does, and returns the ID token.
func idToken(t *testing.T, n *oidcNode, clientID, secret, nonce string) string {
	t.Helper()
	var disc struct {
		Auth  string `json:"authorization_endpoint"`
		Token string `json:"token_endpoint"`
	}
	res, err := http.Get(n.issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&disc)
	res.Body.Close()
	b := n.browser()
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), n.callback) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	q := url.Values{"client_id": {clientID}, "redirect_uri": {n.callback}, "response_type": {"code"}, "scope": {"openid"}, "state": {"s"}, "nonce": {nonce}}
	req, _ := http.NewRequest("GET", disc.Auth+"?"+q.Encode(), nil)
	p := providerLogin(t, b, b.send(req), oidcUser1)
	loc, err := url.Parse(p.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("no code: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
	}
	f := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {n.callback}}
	req, _ = http.NewRequest("POST", disc.Token, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, secret)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var tok struct {
		IDToken string `json:"id_token"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.IDToken == "" {
		t.Fatalf("token endpoint: %d %s", res.StatusCode, raw)
	}
	return tok.IDToken
}

// TestOIDCVerify: the ID token's signature, audience, expiry and nonce
// are checked, each with a token of the real provider.
func TestOIDCVerify(t *testing.T) {
	n := newOIDCNode(t)
	ctx := context.Background()
	good := idToken(t, n, "pidnode", "pidnode-secret", "nonce-1")
	if sub, err := n.oidc.Verify(ctx, good, "nonce-1"); err != nil || sub != "id1" {
		t.Fatalf("Verify(good) = %q, %v", sub, err)
	}
	refused := func(name string, o *people.OIDC, tok, nonce string) {
		t.Helper()
		if _, err := o.Verify(ctx, tok, nonce); !errors.Is(err, people.ErrOIDC) {
			t.Errorf("Verify(%s) = %v, want ErrOIDC", name, err)
		}
	}
	refused("another nonce", n.oidc, good, "nonce-2")
	parts := strings.Split(good, ".")
	claims := []byte(parts[1])
	claims[10] ^= 1 // one bit of the claims
	refused("tampered", n.oidc, parts[0]+"."+string(claims)+"."+parts[2], "nonce-1")
	refused("unsigned", n.oidc, parts[0]+"."+parts[1]+".", "nonce-1")
	refused("another audience", n.oidc, idToken(t, n, "other", "other-secret", "nonce-1"), "nonce-1")
	later, err := people.NewOIDC(ctx, people.OIDCConfig{Issuer: n.issuer, ClientID: "pidnode", RedirectURL: n.callback,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	refused("expired", later, good, "nonce-1")
}
