package admin

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSNAAOwnKeys: with one of its keys an SNAA lists its keys, issues
// another (the secret shown once, and it works), and revokes one of its own
// (which then fails); another SNAA's key is not its to revoke, and the
// operator key is not an SNAA's.
func TestSNAAOwnKeys(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "OWN"})
	other := e.snaa(map[string]any{"namespace": "OTH"})
	type keyList struct{ Keys []Key }
	var l keyList
	e.want(e.do("GET", "/pid/v2/keys", a.Key.Secret, nil), 200).json(t, &l)
	if len(l.Keys) != 1 || l.Keys[0].ID != a.Key.ID || l.Keys[0].Hash != "" {
		t.Fatalf("own keys = %+v, want only %s without its hash", l.Keys, a.Key.ID)
	}
	var ik IssuedKey
	r := e.want(e.do("POST", "/testpid/v2/keys", a.Key.Secret, map[string]string{"name": "ci"}), 201)
	r.json(t, &ik)
	if ik.SNAAID != a.SNAA.ID || !strings.HasPrefix(ik.Secret, KeyPrefix) || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("issued %+v (Cache-Control %q)", ik, r.Header.Get("Cache-Control"))
	}
	e.want(e.do("GET", "/pid/v2/me", ik.Secret, nil), 200)
	e.want(e.do("GET", "/pid/v2/keys", ik.Secret, nil), 200).json(t, &l)
	var ids []string
	for _, k := range l.Keys {
		ids = append(ids, k.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, slices.Sorted(slices.Values([]string{a.Key.ID, ik.ID}))) {
		t.Errorf("keys after issuing = %+v", l.Keys)
	}
	// Not another SNAA's key, and the operator key is not an SNAA's.
	e.want(e.do("DELETE", "/pid/v2/keys/"+other.Key.ID, a.Key.Secret, nil), 404)
	e.want(e.do("GET", "/pid/v2/me", other.Key.Secret, nil), 200)
	e.want(e.do("GET", "/pid/v2/keys", testOpKey, nil), 403)
	e.want(e.do("POST", "/pid/v2/keys", "", map[string]string{"name": "x"}), 401)
	// Rotation: the new key revokes the first, which then fails.
	e.want(e.do("DELETE", "/pid/v2/keys/"+a.Key.ID, ik.Secret, nil), 204)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 401)
	e.want(e.do("PATCH", "/pid/v2/keys", ik.Secret, nil), 405)
	var audit struct{ Entries []AuditEntry }
	e.want(e.do("GET", "/ops/v1/audit?limit=1000", testOpKey, nil), 200).json(t, &audit)
	var actors []string
	for _, en := range audit.Entries {
		if en.Action == ActKeyIssue || en.Action == ActKeyRevoke {
			actors = append(actors, en.Action+" "+en.Actor)
		}
	}
	if !slices.Contains(actors, ActKeyIssue+" snaa:"+a.SNAA.ID+" key:"+a.Key.ID) || !slices.Contains(actors, ActKeyRevoke+" snaa:"+a.SNAA.ID+" key:"+ik.ID) {
		t.Errorf("audit of the key events: %q, want them by the SNAA's keys", actors)
	}
}

// TestApproveGrantsWhatWasAskedFor: an approval without prefixes or
// custom_ids grants the application's; given, they override it.
func TestApproveGrantsWhatWasAskedFor(t *testing.T) {
	e := newEnv(t)
	apply := func(extra map[string]any) string {
		t.Helper()
		req := maps.Clone(testApplication)
		maps.Copy(req, extra)
		var app Application
		e.want(e.do("POST", "/ops/v1/applications", testOpKey, req), 201).json(t, &app)
		return app.ID
	}
	approve := func(id string, body map[string]any) SNAA {
		t.Helper()
		var res ApproveResult
		e.want(e.do("POST", "/ops/v1/applications/"+id+"/approve", testOpKey, body), 200).json(t, &res)
		return res.SNAA
	}
	for _, c := range []struct {
		name      string
		asked     map[string]any
		approve   map[string]any
		prefixes  []string
		customIDs bool
	}{
		{"test prefix and custom ids asked", map[string]any{"prefixes": []string{strings.ToLower(testTestPrefix)}, "custom_ids": true}, map[string]any{}, []string{testTestPrefix}, true},
		{"nothing asked", map[string]any{}, map[string]any{}, []string{testPrefix, testTestPrefix}, false},
		{"overridden", map[string]any{"prefixes": []string{testTestPrefix}, "custom_ids": true}, map[string]any{"prefixes": []string{testPrefix}, "custom_ids": false}, []string{testPrefix}, false},
	} {
		sn := approve(apply(c.asked), c.approve)
		if !slices.Equal(sn.Prefixes, c.prefixes) || sn.CustomIDs != c.customIDs {
			t.Errorf("%s: SNAA prefixes %v custom ids %v, want %v %v", c.name, sn.Prefixes, sn.CustomIDs, c.prefixes, c.customIDs)
		}
	}
}
