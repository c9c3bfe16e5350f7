package admin

import (
	"fmt"
	"strings"
	"testing"
)

func TestBulk(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "BLK", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "BLB"})
	coll := "/pid/v2/handles/21.12345/BLK/"
	var existing Identifier
	e.want(e.do("PUT", coll+"exists", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201).json(t, &existing)

	bad := validPayload()
	bad["url"] = "javascript:alert(1)"
	custom := validPayload()
	custom["id"] = "new-custom"
	items := []any{
		validPayload(), // 201 generated
		map[string]any{"id": "EXISTS", "metadata": map[string]any{"status": "DEPRECATED"}}, // 200 update
		custom, // 201 custom
		bad,    // 422
		map[string]any{"id": "EXISTS", "colour": "red"}, // 422 unknown field
		"not an object", // 422
		map[string]any{"id": "missing", "url": "https://e.org/"},                     // 422: create needs metadata
		map[string]any{"id": "EXISTS", "metadata": map[string]any{"status": "GONE"}}, // 422 after merge
	}
	e.conform("BulkRequest", mustJSON(t, items[:3]))
	r := e.want(e.do("POST", coll+"bulk", a.Key.Secret, items), 200)
	e.conform("BulkResponse", r.Body)
	var out struct{ Items []BulkResult }
	r.json(t, &out)
	var got []string
	for _, it := range out.Items {
		got = append(got, fmt.Sprint(it.Status))
	}
	if strings.Join(got, " ") != "201 200 201 422 422 422 422 422" {
		t.Fatalf("statuses %v\n%s", got, r.Body)
	}
	if out.Items[2].Handle != "21.12345/svc/BLK/NEW-CUSTOM" || out.Items[1].Handle != existing.Handle {
		t.Errorf("handles %+v", out.Items)
	}
	if out.Items[3].Errors[0].Field != "url" || out.Items[4].Errors[0].Field != "colour" {
		t.Errorf("errors %+v %+v", out.Items[3], out.Items[4])
	}
	if n := e.recordCount(); n != 3 {
		t.Errorf("records = %d, want 3", n)
	}
	var got2 Identifier
	e.want(e.do("GET", coll+"exists", a.Key.Secret, nil), 200).json(t, &got2)
	if got2.Metadata["status"] != "DEPRECATED" || got2.Version != 2 {
		t.Errorf("updated item: %+v", got2)
	}
	// An SNAA without custom ids gets 403 for an unknown id; too many items is 422.
	r = e.want(e.do("POST", "/pid/v2/handles/21.12345/BLB/bulk", b.Key.Secret, []any{map[string]any{"id": "x", "url": "https://e.org/"}}), 200)
	r.json(t, &out)
	if out.Items[0].Status != 403 {
		t.Errorf("custom without permission: %+v", out.Items[0])
	}
	many := make([]any, MaxBulkItems+1)
	for i := range many {
		many[i] = map[string]any{}
	}
	e.want(e.do("POST", coll+"bulk", a.Key.Secret, many), 422)
	e.want(e.do("POST", coll+"bulk", a.Key.Secret, ""), 400)

	// JSON Lines: one item per line, same results as the array.
	lines := string(mustJSON(t, custom)) + "\n\n" + `{"id":"EXISTS","metadata":{"status":"REGISTERED"}}` + "\n" + `{"id":"EXISTS","colour":"red"}` + "\n"
	r = e.want(e.do("POST", coll+"bulk", a.Key.Secret, lines), 200)
	r.json(t, &out)
	if len(out.Items) != 3 || out.Items[0].Status != 200 || out.Items[1].Status != 200 || out.Items[2].Status != 422 {
		t.Errorf("JSON Lines bulk: %s", r.Body)
	}
	if p := e.want(e.do("POST", coll+"bulk", a.Key.Secret, "{}\n{not json\n"), 400).problem(t); !strings.Contains(p.Detail, "line 2") {
		t.Errorf("bad line: %+v", p)
	}
}
