package admin

import (
	"regexp"
	"strings"
	"testing"

	"pidnode/webhook"
)

// hooksPath is the webhook collection of an SNAA's namespace under the
// production prefix.
func hooksPath(ns string) string { return "/pid/v2/handles/" + testPrefix + "/" + ns + "/webhooks" }

var secretRE = regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)

// TestWebhookRoutes: register (secret once, cursor at the namespace's last
// event), list and read without the secret, the deliveries log, delete,
// and the audit entries of both writes.
func TestWebhookRoutes(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(nil)
	key, ns := a.Key.Secret, a.SNAA.Namespace
	e.want(e.do("POST", "/pid/v2/handles/"+testPrefix+"/"+ns+"/", key, validPayload()), 201)

	var created webhook.View
	r := e.want(e.do("POST", hooksPath(ns), key, map[string]any{"url": "https://hooks.example.org/in", "kinds": []string{"handle.create"}, "description": "ci"}), 201)
	r.json(t, &created)
	e.conform("Webhook", r.Body)
	if !secretRE.MatchString(created.Secret) {
		t.Fatalf("secret %q does not match %s", created.Secret, secretRE)
	}
	if created.State != "active" || created.Cursor == 0 || len(created.Kinds) != 1 {
		t.Fatalf("created %+v: want active, cursor at the namespace's last event, one kind", created)
	}
	if loc := r.Header.Get("Location"); loc != hooksPath(ns)+"/"+created.ID {
		t.Fatalf("Location %q", loc)
	}

	var list webhook.List
	r = e.want(e.do("GET", hooksPath(ns), key, nil), 200)
	r.json(t, &list)
	e.conform("WebhookList", r.Body)
	if len(list.Webhooks) != 1 || list.Webhooks[0].ID != created.ID {
		t.Fatalf("list %+v", list)
	}
	for _, path := range []string{hooksPath(ns), hooksPath(ns) + "/" + created.ID} {
		if b := e.want(e.do("GET", path, key, nil), 200).Body; strings.Contains(string(b), created.Secret) || strings.Contains(string(b), "whsec_") {
			t.Fatalf("GET %s shows the secret: %s", path, b)
		}
	}
	r = e.want(e.do("GET", hooksPath(ns)+"/"+created.ID+"/deliveries", key, nil), 200)
	e.conform("WebhookDeliveries", r.Body)

	// Every kind when kinds is absent; after sets the cursor.
	var all webhook.View
	e.want(e.do("POST", hooksPath(ns), key, map[string]any{"url": "http://hooks.example.org/2", "after": 0}), 201).json(t, &all)
	if len(all.Kinds) != 4 || all.Cursor != 0 {
		t.Fatalf("default kinds %v, cursor %d", all.Kinds, all.Cursor)
	}

	e.want(e.do("DELETE", hooksPath(ns)+"/"+created.ID, key, nil), 204)
	e.want(e.do("GET", hooksPath(ns)+"/"+created.ID, key, nil), 404)
	e.want(e.do("DELETE", hooksPath(ns)+"/"+created.ID, key, nil), 404)
	e.want(e.do("POST", hooksPath(ns)+"/"+all.ID+"/enable", key, nil), 200)

	var audit struct {
		Entries []AuditEntry `json:"entries"`
	}
	e.want(e.do("GET", "/ops/v1/audit?after=0&limit=1000", testOpKey, nil), 200).json(t, &audit)
	var actions []string
	for _, en := range audit.Entries {
		if strings.HasPrefix(en.Action, "webhook.") {
			actions = append(actions, en.Action+" "+en.Target)
		}
	}
	want := []string{"webhook.create " + testPrefix + "/" + ns + "/webhooks/" + created.ID, "webhook.create " + testPrefix + "/" + ns + "/webhooks/" + all.ID,
		"webhook.delete " + testPrefix + "/" + ns + "/webhooks/" + created.ID}
	if strings.Join(actions, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
	}
	// Not in the namespace's feed.
	var page webhook.EventPage
	e.want(e.do("GET", "/pid/v2/handles/"+testPrefix+"/"+ns+"/events", key, nil), 200).json(t, &page)
	for _, ev := range page.Events {
		if !strings.HasPrefix(ev.Action, "handle.") {
			t.Fatalf("feed holds %s", ev.Action)
		}
	}
}

// TestWebhookRegistrationRefused: each bad body gets 4xx naming the field;
// the namespace's limit is 409.
func TestWebhookRegistrationRefused(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(nil)
	key, ns := a.Key.Secret, a.SNAA.Namespace
	for _, c := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"no url", `{}`, 422, "url"},
		{"relative", `{"url":"/hook"}`, 422, "url"},
		{"ftp", `{"url":"ftp://example.org/x"}`, 422, "url"},
		{"userinfo", `{"url":"https://u:p@example.org/x"}`, 422, "url"},
		{"fragment", `{"url":"https://example.org/x#y"}`, 422, "url"},
		{"space", `{"url":"https://example.org/a b"}`, 422, "url"},
		{"long", `{"url":"https://example.org/` + strings.Repeat("a", 2100) + `"}`, 422, "url"},
		{"unknown kind", `{"url":"https://example.org/x","kinds":["handle.delete"]}`, 422, "kinds"},
		{"no kinds", `{"url":"https://example.org/x","kinds":[]}`, 422, "kinds"},
		{"description", `{"url":"https://example.org/x","description":"a\u0000b"}`, 422, "description"},
		{"unknown field", `{"url":"https://example.org/x","secret":"mine"}`, 400, ""},
		{"not json", `{"url":`, 400, ""},
		{"negative after", `{"url":"https://example.org/x","after":-1}`, 400, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.want(e.do("POST", hooksPath(ns), key, c.body), c.status)
			if p := r.problem(t); c.field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != c.field) {
				t.Fatalf("problem %+v: want field %s", p, c.field)
			}
		})
	}
	for i := 0; i < webhook.MaxPerNamespace; i++ {
		e.want(e.do("POST", hooksPath(ns), key, map[string]any{"url": "https://example.org/x"}), 201)
	}
	e.want(e.do("POST", hooksPath(ns), key, map[string]any{"url": "https://example.org/x"}), 409)
	e.want(e.do("PATCH", hooksPath(ns), key, nil), 405)
	e.want(e.do("PUT", hooksPath(ns)+"/0123456789abcdef", key, `{}`), 405)
	e.want(e.do("POST", hooksPath(ns)+"/0123456789abcdef/deliveries", key, nil), 405)
	e.want(e.do("GET", hooksPath(ns)+"/0123456789abcdef/nothing", key, nil), 404)
	e.want(e.do("GET", hooksPath(ns)+"/0123456789abcdef/deliveries", key, nil), 404)
	e.want(e.do("GET", hooksPath(ns), "", nil), 401)
	e.want(e.do("DELETE", hooksPath(ns)+"/0123456789abcdef", "", nil), 401)
	// "webhooks" is not a custom id.
	e.want(e.do("PUT", "/pid/v2/handles/"+testPrefix+"/"+ns+"/webhooks", key, validPayload(), "If-None-Match", "*"), 405)
}

// TestWebhookIsolation: SNAA B neither sees nor changes A's endpoints, nor
// registers one on A's namespace.
func TestWebhookIsolation(t *testing.T) {
	e := newEnv(t)
	a, b := e.snaa(nil), e.snaa(nil)
	var hook webhook.View
	e.want(e.do("POST", hooksPath(a.SNAA.Namespace), a.Key.Secret, map[string]any{"url": "https://example.org/a"}), 201).json(t, &hook)
	one := hooksPath(a.SNAA.Namespace) + "/" + hook.ID
	bk := b.Key.Secret
	e.want(e.do("GET", hooksPath(a.SNAA.Namespace), bk, nil), 403)
	e.want(e.do("POST", hooksPath(a.SNAA.Namespace), bk, map[string]any{"url": "https://example.org/b"}), 403)
	e.want(e.do("GET", one, bk, nil), 403)
	e.want(e.do("DELETE", one, bk, nil), 403)
	e.want(e.do("POST", one+"/enable", bk, nil), 403)
	e.want(e.do("GET", one+"/deliveries", bk, nil), 403)
	// Through B's own namespace, A's id is not found.
	mine := hooksPath(b.SNAA.Namespace) + "/" + hook.ID
	e.want(e.do("GET", mine, bk, nil), 404)
	e.want(e.do("DELETE", mine, bk, nil), 404)
	var list webhook.List
	e.want(e.do("GET", hooksPath(b.SNAA.Namespace), bk, nil), 200).json(t, &list)
	if len(list.Webhooks) != 0 {
		t.Fatalf("B lists %+v", list.Webhooks)
	}
	e.want(e.do("GET", one, a.Key.Secret, nil), 200)
}
