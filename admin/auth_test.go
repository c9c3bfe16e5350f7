package admin

import (
	"strings"
	"testing"

	"pidnode/access"
)

func TestAuthorisationMatrix(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "AAA", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "BBB", "prefixes": []string{testTestPrefix}})
	aKey, bKey := a.Key.Secret, b.Key.Secret

	var created Identifier
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/AAA/", aKey, validPayload()), 201).json(t, &created)
	item := "/pid/v2/handles/21.12345/AAA/" + created.ID

	var revoked IssuedKey
	e.want(e.do("POST", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, map[string]string{"name": "old"}), 201).json(t, &revoked)
	e.want(e.do("GET", item, revoked.Secret, nil), 200)
	e.want(e.do("DELETE", "/ops/v1/snaas/"+a.SNAA.ID+"/keys/"+revoked.ID, testOpKey, nil), 204)

	unknown := KeyPrefix + strings.Repeat("a", access.KeySecretLen-len(KeyPrefix))
	records := e.recordCount()
	update := map[string]any{"url": "https://evil.example.org/"}

	type req struct{ method, path string }
	createGen := req{"PUT", "/pid/v2/handles/21.12345/AAA/"}
	updateItem := req{"PUT", item}
	readItem := req{"GET", item}
	cases := []struct {
		name    string
		auth    string // full Authorization header value; "" = none
		reqs    []req
		status  int
		wwwAuth string // substring of WWW-Authenticate
	}{
		{"no key", "", []req{createGen, updateItem, readItem}, 401, "Bearer"},
		{"wrong scheme", "Basic " + aKey, []req{createGen, updateItem, readItem}, 401, "invalid_request"},
		{"malformed key", "Bearer pid_short", []req{createGen, updateItem, readItem}, 401, "invalid_token"},
		{"malformed alphabet", "Bearer " + KeyPrefix + strings.Repeat("1", access.KeySecretLen-len(KeyPrefix)), []req{createGen, updateItem}, 401, "invalid_token"},
		{"unknown key", "Bearer " + unknown, []req{createGen, updateItem, readItem}, 401, "invalid_token"},
		{"revoked key", "Bearer " + revoked.Secret, []req{createGen, updateItem, readItem}, 401, "invalid_token"},
		{"other SNAA's namespace", "Bearer " + bKey, []req{{"PUT", "/testpid/v2/handles/21.T12345/AAA/"}, {"PUT", "/testpid/v2/handles/21.T12345/AAA/X1"}, {"GET", "/testpid/v2/handles/21.T12345/AAA/X1"}}, 403, ""},
		{"SNAA without the production prefix", "Bearer " + bKey, []req{{"PUT", "/pid/v2/handles/21.12345/BBB/"}, {"PUT", "/pid/v2?customid=abc"}, {"GET", "/pid/v2/handles/21.12345/BBB/X1"}}, 403, ""},
		{"other SNAA on production item", "Bearer " + bKey, []req{updateItem, readItem}, 403, ""},
		{"test base with production prefix", "Bearer " + aKey, []req{{"PUT", "/testpid/v2/handles/21.12345/AAA/"}, {"PUT", "/testpid/v2/handles/21.12345/AAA/" + created.ID}, {"GET", "/testpid/v2/handles/21.12345/AAA/" + created.ID}}, 404, ""},
		{"production base with test prefix", "Bearer " + aKey, []req{{"PUT", "/pid/v2/handles/21.T12345/AAA/"}, {"GET", "/pid/v2/handles/21.T12345/AAA/" + created.ID}}, 404, ""},
		{"SNAA key on operator routes", "Bearer " + aKey, []req{{"GET", "/ops/v1/snaas"}, {"POST", "/ops/v1/applications"}, {"POST", "/ops/v1/snaas/" + a.SNAA.ID + "/keys"}, {"DELETE", "/ops/v1/snaas/" + a.SNAA.ID + "/keys/" + a.Key.ID}}, 403, ""},
		{"no key on operator routes", "", []req{{"GET", "/ops/v1/snaas"}, {"POST", "/ops/v1/applications"}}, 401, "Bearer"},
		{"unknown key on operator routes", "Bearer " + unknown, []req{{"GET", "/ops/v1/applications"}}, 401, "invalid_token"},
		{"revoked key on operator routes", "Bearer " + revoked.Secret, []req{{"GET", "/ops/v1/snaas"}}, 401, "invalid_token"},
		{"operator key on SNAA routes", "Bearer " + testOpKey, []req{createGen, updateItem, readItem}, 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, rq := range tc.reqs {
				var body any
				if rq.method != "GET" && rq.method != "DELETE" {
					body = validPayload()
					if rq.path == item {
						body = update
					}
				}
				var hdr []string
				if tc.auth != "" {
					hdr = []string{"Authorization", tc.auth}
				}
				r := e.do(rq.method, rq.path, "", body, hdr...)
				if r.Status != tc.status {
					t.Errorf("%s %s: status %d, want %d; %s", rq.method, rq.path, r.Status, tc.status, r.Body)
					continue
				}
				r.problem(t)
				if tc.wwwAuth != "" && !strings.Contains(r.Header.Get("WWW-Authenticate"), tc.wwwAuth) {
					t.Errorf("%s %s: WWW-Authenticate %q, want it to contain %q", rq.method, rq.path, r.Header.Get("WWW-Authenticate"), tc.wwwAuth)
				}
			}
		})
	}
	if n := e.recordCount(); n != records {
		t.Errorf("records: %d, want %d unchanged", n, records)
	}
	var after Identifier
	e.want(e.do("GET", item, aKey, nil), 200).json(t, &after)
	if after.Version != 1 || after.URL != created.URL {
		t.Errorf("record changed: version %d url %s", after.Version, after.URL)
	}
	// Suspension takes effect on the next request too.
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"suspended": true}), 200)
	e.want(e.do("GET", item, aKey, nil), 403).problem(t)
}

func TestRevocationIsImmediate(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(nil)
	var k IssuedKey
	e.want(e.do("POST", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, map[string]string{"name": "ci"}), 201).json(t, &k)
	e.conform("IssuedKey", mustJSON(t, k))
	for i := 0; i < 3; i++ {
		e.want(e.do("GET", "/pid/v2/me", k.Secret, nil), 200)
	}
	e.want(e.do("DELETE", "/ops/v1/snaas/"+a.SNAA.ID+"/keys/"+k.ID, testOpKey, nil), 204)
	e.want(e.do("GET", "/pid/v2/me", k.Secret, nil), 401)
	// The other key still works, and the list shows times but never a secret or hash.
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	r := e.want(e.do("GET", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, nil), 200)
	e.conform("KeyList", r.Body)
	if strings.Contains(string(r.Body), "pid_") || strings.Contains(string(r.Body), "hash") {
		t.Errorf("key list leaks a secret or hash: %s", r.Body)
	}
	var kl struct{ Keys []Key }
	r.json(t, &kl)
	if len(kl.Keys) != 2 || kl.Keys[1].Revoked == nil || kl.Keys[1].LastUsed == nil {
		t.Errorf("keys = %+v, want 2 with the second revoked and used", kl.Keys)
	}
}

// A key in use is served from the auth cache (no read transaction per
// request), and operator changes still take effect on the next request.
func TestAuthCache(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(nil)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	before := e.srv.db.Stats().TxN
	for range 3 {
		e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	}
	if n := e.srv.db.Stats().TxN - before; n != 0 {
		t.Errorf("%d read transactions for 3 requests with a cached key, want 0", n)
	}
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"suspended": true}), 200)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 403)
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"suspended": false}), 200)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	e.want(e.do("DELETE", "/ops/v1/snaas/"+a.SNAA.ID+"/keys/"+a.Key.ID, testOpKey, nil), 204)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 401)
}
