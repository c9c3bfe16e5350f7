package admin

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"pidnode/handlev"
	"pidnode/model"
)

// writeCase is one identifier write as a client sends it; the same case goes
// through the single routes and through …/bulk.
type writeCase struct {
	name string
	key  string // "custom" (may choose ids), "plain" (may not) or "other" (writes into another's namespace)
	id   string // "" = generated id
	// update: id names an existing identifier (PUT …/{id} alone; the same item
	// in bulk is a merge update).
	update bool
	body   map[string]any
	status int
}

// outcome is what a client learns of one write: status and problem details.
type writeOutcome struct {
	Status int
	Type   string
	Title  string
	Detail string
	Errors []FieldError
}

// TestCreateAndBulkAgree sends every case once through the single-identifier
// routes and once as a bulk item, each in a fresh node set up the same way,
// and requires the same status and the same problem details.
func TestCreateAndBulkAgree(t *testing.T) {
	const ns = "VAL"
	gen := "0123-4567-" + string(handlev.CheckChar(ns+"01234567"))
	wrong := "0123-4567-" + string(nextCheck(handlev.CheckChar(ns+"01234567")))
	with := func(mod func(m map[string]any)) map[string]any {
		p := validPayload()
		mod(p)
		return p
	}
	meta := func(mod func(m map[string]any)) map[string]any {
		return with(func(p map[string]any) { mod(p["metadata"].(map[string]any)) })
	}
	long := strings.Repeat("x", 1001)
	cases := []writeCase{
		{name: "generated", key: "custom", body: validPayload(), status: 201},
		{name: "custom", key: "custom", id: "sample-1", body: validPayload(), status: 201},
		{name: "custom with a generated shape and its check character", key: "custom", id: gen, body: validPayload(), status: 201},
		{name: "check character wrong", key: "custom", id: wrong, body: validPayload(), status: 422},
		{name: "check character wrong and unknown field", key: "custom", id: wrong, body: with(func(p map[string]any) { p["colour"] = "red" }), status: 422},
		{name: "bad id character", key: "custom", id: "a b", body: validPayload(), status: 422},
		{name: "bad id start", key: "custom", id: "-x", body: validPayload(), status: 422},
		{name: "bad id too long", key: "custom", id: strings.Repeat("a", 37), body: validPayload(), status: 422},
		{name: "bad id empty segment", key: "custom", id: "a//b", body: validPayload(), status: 422},
		{name: "reserved id", key: "custom", id: "x/history", body: validPayload(), status: 422},
		{name: "reserved id bulk", key: "custom", id: "BULK", body: validPayload(), status: 422},
		{name: "reserved and malformed id", key: "custom", id: "-x/stats", body: validPayload(), status: 422},
		{name: "custom id not allowed", key: "plain", id: "sample-2", body: validPayload(), status: 403},
		{name: "custom id not allowed and bad", key: "plain", id: "a b", body: with(func(p map[string]any) { p["colour"] = 1 }), status: 403},
		{name: "unknown top-level field", key: "custom", body: with(func(p map[string]any) { p["colour"] = "red" }), status: 422},
		{name: "unknown top-level field custom", key: "custom", id: "sample-3", body: with(func(p map[string]any) { p["colour"] = "red" }), status: 422},
		{name: "unknown metadata field", key: "custom", body: meta(func(m map[string]any) { m["colour"] = "red" }), status: 422},
		{name: "metadata not an object", key: "custom", body: with(func(p map[string]any) { p["metadata"] = "x" }), status: 422},
		{name: "required field missing", key: "custom", body: meta(func(m map[string]any) { delete(m, "status") }), status: 422},
		{name: "enum violated", key: "custom", body: meta(func(m map[string]any) { m["status"] = "GONE" }), status: 422},
		{name: "nested schema violated", key: "custom", id: "sample-4", body: meta(func(m map[string]any) {
			m["resource_info"].(map[string]any)["resource_category"] = 7
		}), status: 422},
		{name: "url missing", key: "custom", body: with(func(p map[string]any) { delete(p, "url") }), status: 422},
		{name: "url javascript", key: "custom", body: with(func(p map[string]any) { p["url"] = "javascript:alert(1)" }), status: 422},
		{name: "url not a string", key: "custom", id: "sample-5", body: with(func(p map[string]any) { p["url"] = 5 }), status: 422},
		{name: "url with a newline", key: "custom", body: with(func(p map[string]any) { p["url"] = "https://e.org/\r\nSet-Cookie: x" }), status: 422},
		{name: "url null", key: "custom", body: with(func(p map[string]any) { p["url"] = nil }), status: 422},
		{name: "url oversize", key: "custom", body: with(func(p map[string]any) { p["url"] = "https://e.org/" + strings.Repeat("a", model.MaxURLBytes) }), status: 422},
		{name: "label oversize", key: "custom", body: meta(func(m map[string]any) { m["resource_info"].(map[string]any)["label"] = long }), status: 422},
		{name: "several faults at once", key: "custom", body: with(func(p map[string]any) {
			p["url"] = "ftp://e.org/"
			p["metadata"].(map[string]any)["status"] = "GONE"
			p["metadata"].(map[string]any)["colour"] = "red"
		}), status: 422},
		{name: "status to OBSOLETED", key: "custom", id: "EXISTS", update: true, body: map[string]any{"metadata": map[string]any{"status": "OBSOLETED"}}, status: 200},
		{name: "status to DEPRECATED", key: "custom", id: "EXISTS", update: true, body: map[string]any{"metadata": map[string]any{"status": "DEPRECATED"}}, status: 200},
		{name: "status to an unknown state", key: "custom", id: "EXISTS", update: true, body: map[string]any{"metadata": map[string]any{"status": "GONE"}}, status: 422},
		{name: "status removed", key: "custom", id: "EXISTS", update: true, body: map[string]any{"metadata": map[string]any{"status": nil}}, status: 422},
		{name: "update unknown field", key: "custom", id: "EXISTS", update: true, body: map[string]any{"colour": "red"}, status: 422},
		{name: "update bad url", key: "custom", id: "EXISTS", update: true, body: map[string]any{"url": "https://"}, status: 422},
		{name: "update oversize", key: "custom", id: "EXISTS", update: true, body: map[string]any{"metadata": map[string]any{"resource_info": map[string]any{"label": long}}}, status: 422},
		{name: "namespace not owned", key: "other", body: validPayload(), status: 403},
		{name: "namespace not owned custom", key: "other", id: "sample-6", body: validPayload(), status: 403},
	}
	single, bulk := newAgreeEnv(t, ns), newAgreeEnv(t, ns)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := single.viaSingle(t, c), bulk.viaBulk(t, c)
			if a.Status != c.status {
				t.Errorf("single route: status %d, want %d (%+v)", a.Status, c.status, a)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("single and bulk disagree:\nsingle %+v\nbulk   %+v", a, b)
			}
		})
	}
}

// nextCheck returns a check character other than c.
func nextCheck(c byte) byte {
	if c == 'Z' {
		return '0'
	}
	if c == '9' {
		return 'A'
	}
	return c + 1
}

type agreeEnv struct {
	*env
	keys map[string]string // key kind → secret
	ids  []string          // SNAA ids, which differ between nodes
	ns   map[string]string // key kind → namespace written into
}

func newAgreeEnv(t *testing.T, ns string) *agreeEnv {
	t.Helper()
	e := newEnv(t)
	custom := e.snaa(map[string]any{"namespace": ns, "custom_ids": true})
	plain := e.snaa(map[string]any{"namespace": "PLN"})
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/"+ns+"/EXISTS", custom.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	return &agreeEnv{env: e, ids: []string{custom.SNAA.ID, plain.SNAA.ID},
		keys: map[string]string{"custom": custom.Key.Secret, "plain": plain.Key.Secret, "other": plain.Key.Secret},
		ns:   map[string]string{"custom": ns, "plain": "PLN", "other": ns},
	}
}

func (e *agreeEnv) viaSingle(t *testing.T, c writeCase) writeOutcome {
	t.Helper()
	coll := "/pid/v2/handles/21.12345/" + e.ns[c.key] + "/"
	var r *resp
	switch {
	case c.update:
		r = e.do("PUT", coll+c.id, e.keys[c.key], c.body)
	case c.id == "":
		r = e.do("POST", coll, e.keys[c.key], c.body)
	case c.key == "other":
		r = e.do("PUT", coll+url.PathEscape(c.id), e.keys[c.key], c.body, "If-None-Match", "*")
	default:
		r = e.do("PUT", "/pid/v2?customid="+url.QueryEscape(c.id), e.keys[c.key], c.body)
	}
	return e.outcomeOf(t, r)
}

func (e *agreeEnv) viaBulk(t *testing.T, c writeCase) writeOutcome {
	t.Helper()
	item := map[string]any{}
	for k, v := range c.body {
		item[k] = v
	}
	if c.id != "" {
		item["id"] = c.id
	}
	r := e.do("POST", "/pid/v2/handles/21.12345/"+e.ns[c.key]+"/bulk", e.keys[c.key], []any{item})
	if r.Status != 200 {
		return e.outcomeOf(t, r)
	}
	var out struct{ Items []BulkResult }
	r.json(t, &out)
	if len(out.Items) != 1 {
		t.Fatalf("bulk of one item answered %s", r.Body)
	}
	it := out.Items[0]
	if it.Status < 400 {
		return writeOutcome{Status: it.Status}
	}
	return writeOutcome{Status: it.Status, Type: it.Type, Title: it.Title, Detail: e.anon(it.Detail), Errors: it.Errors}
}

func (e *agreeEnv) outcomeOf(t *testing.T, r *resp) writeOutcome {
	t.Helper()
	if r.Status < 400 {
		return writeOutcome{Status: r.Status}
	}
	p := r.problem(t)
	return writeOutcome{Status: p.Status, Type: p.Type, Title: p.Title, Detail: e.anon(p.Detail), Errors: p.Errors}
}

// anon replaces the node's SNAA ids in a detail message with a placeholder.
func (e *agreeEnv) anon(s string) string {
	for _, id := range e.ids {
		s = strings.ReplaceAll(s, id, "<snaa>")
	}
	return s
}
