package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefuseKeysOverPlainHTTP: with RefuseKeys, a plain-HTTP request carrying
// a key is refused with a problem+json 403, keyless routes keep working, and
// the same server over TLS accepts keys.
func TestRefuseKeysOverPlainHTTP(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "SEC"})

	refusing := newEnv(t, func(c *Config) { c.RefuseKeys = true })
	cases := []struct {
		name, path, key string
		want            int
	}{
		{"operator key", "/ops/v1/snaas", testOpKey, 403},
		{"snaa key", "/pid/v2/me", a.Key.Secret, 403},
		{"garbage authorization", "/pid/v2/me", "x", 403},
		{"no key: 401 as usual", "/pid/v2/me", "", 401},
		{"healthz", "/healthz", "", 200},
		{"metrics", "/metrics", "", 200},
		{"openapi", "/openapi.json", "", 200},
	}
	for _, c := range cases {
		r := refusing.do("GET", c.path, c.key, nil)
		if r.Status != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.Status, c.want, r.Body)
			continue
		}
		if c.want == 403 {
			if p := r.problem(t); !strings.Contains(p.Detail, "plain HTTP") {
				t.Errorf("%s: detail %q", c.name, p.Detail)
			}
		}
	}
	// Without RefuseKeys (loopback or --admin-insecure) keys work over plain HTTP.
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)

	// Over TLS the refusing server accepts keys.
	tlsSrv := httptest.NewTLSServer(refusing.srv.Handler())
	defer tlsSrv.Close()
	req, _ := http.NewRequest("GET", tlsSrv.URL+"/ops/v1/snaas", nil)
	req.Header.Set("Authorization", "Bearer "+testOpKey)
	res, err := tlsSrv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("over TLS: status %d, want 200", res.StatusCode)
	}
}

func TestReadyz(t *testing.T) {
	e := newEnv(t)
	e.want(e.do("GET", "/readyz", "", nil), 200)
	e.srv.SetNotReady("listeners not bound yet")
	p := e.want(e.do("GET", "/readyz", "", nil), 503).problem(t)
	if !strings.Contains(p.Detail, "listeners not bound yet") {
		t.Errorf("detail %q", p.Detail)
	}
	e.want(e.do("GET", "/healthz", "", nil), 200) // alive all the same
	e.srv.SetNotReady("")
	e.want(e.do("GET", "/readyz", "", nil), 200)
}
