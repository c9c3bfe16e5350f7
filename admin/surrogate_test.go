package admin

import (
	"strings"
	"testing"
)

// TestLoneSurrogates: a JSON string with an escaped lone UTF-16 surrogate is
// refused with 422 naming the field (encoding/json would store U+FFFD), on
// every route that takes JSON; a complete surrogate pair is its character.
func TestLoneSurrogates(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "SUR", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/SUR/"
	e.want(e.do("PUT", coll+"target", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	valid := string(mustJSON(t, validPayload()))
	label := "metadata.resource_info.label"
	cases := []struct {
		name, body, field string
	}{
		{"lone high", strings.Replace(valid, "Sample 42", `Sample \ud800`, 1), label},
		{"lone low", strings.Replace(valid, "Sample 42", `\udc00 42`, 1), label},
		{"high then a non-surrogate escape", strings.Replace(valid, "Sample 42", `\ud800\u0041`, 1), label},
		{"high then a high", strings.Replace(valid, "Sample 42", `\ud800\ud800\udc00`, 1), label},
		{"in the url", strings.Replace(valid, `"url":"https://landing.example.org/item/42"`, `"url":"https://landing.example.org/item/\uDBFF"`, 1), "url"},
		{"in an array item", strings.Replace(valid, "text/turtle", `text/\udfff`, 1), "metadata.resource_info.representation_variants[0].media_type"},
		{"in a member name", strings.Replace(valid, `"label"`, `"lab\ud800"`, 1), "metadata.resource_info"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, rt := range []struct{ method, path string }{{"POST", coll}, {"PUT", coll + "target"}} {
				p := wantStatus(t, e.do(rt.method, rt.path, a.Key.Secret, tc.body), 422).problem(t)
				if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || !strings.Contains(p.Errors[0].Message, "lone UTF-16 surrogate") {
					t.Errorf("%s %s: %+v, want one error on %s", rt.method, rt.path, p.Errors, tc.field)
				}
			}
			// A bulk array is one JSON text: refused as a whole, the item named.
			p := wantStatus(t, e.do("POST", coll+"bulk", a.Key.Secret, "["+valid+","+tc.body+"]"), 422).problem(t)
			if len(p.Errors) != 1 || p.Errors[0].Field != "[1]."+tc.field {
				t.Errorf("bulk array: %+v, want one error on [1].%s", p.Errors, tc.field)
			}
			// JSON Lines: the line is one failed item, the others are written.
			r := wantStatus(t, e.do("POST", coll+"bulk", a.Key.Secret, valid+"\n"+tc.body+"\n"+valid+"\n", "Content-Type", "application/jsonl"), 200)
			var out struct{ Items []BulkResult }
			r.json(t, &out)
			if len(out.Items) != 3 || out.Items[0].Status != 201 || out.Items[1].Status != 422 || out.Items[2].Status != 201 ||
				len(out.Items[1].Errors) != 1 || out.Items[1].Errors[0].Field != tc.field {
				t.Errorf("bulk lines: %s", r.Body)
			}
		})
	}
	// A complete pair is the character it encodes.
	var id Identifier
	wantStatus(t, e.do("POST", coll, a.Key.Secret, strings.Replace(valid, "Sample 42", `Sample \ud83d\ude00`, 1)), 201).json(t, &id)
	if got := id.Metadata["resource_info"].(map[string]any)["label"]; got != "Sample \U0001F600" {
		t.Errorf("label = %q", got)
	}
	// Operator routes decode JSON the same way.
	app := strings.Replace(string(mustJSON(t, testApplication)), "Leibniz", `Leibniz \ud800`, 1)
	p := wantStatus(t, e.do("POST", "/ops/v1/applications", testOpKey, app), 422).problem(t)
	if len(p.Errors) != 1 || p.Errors[0].Field != "organisation" {
		t.Errorf("operator route: %+v", p.Errors)
	}
}
