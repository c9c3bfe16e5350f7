package admin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestBulkJSONLinesMediaTypes: the bulk route takes JSON Lines under its own
// media types (not only as application/json), reads such a body as lines even
// when a line starts with '[', and /openapi.json says so.
func TestBulkJSONLinesMediaTypes(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "JSL"})
	bulk := "/pid/v2/handles/21.12345/JSL/bulk"
	lines := string(mustJSON(t, validPayload())) + "\n\n" + string(mustJSON(t, validPayload())) + "\n"
	for _, ct := range []string{"application/jsonl", "application/x-ndjson", "application/x-ndjson; charset=utf-8"} {
		r := e.want(e.do("POST", bulk, a.Key.Secret, lines, "Content-Type", ct), 200)
		var out struct{ Items []BulkResult }
		r.json(t, &out)
		if len(out.Items) != 2 || out.Items[0].Status != 201 || out.Items[1].Status != 201 {
			t.Errorf("Content-Type %s: %s", ct, r.Body)
		}
	}
	// Declared as lines, a line holding an array is one (invalid) item.
	r := e.want(e.do("POST", bulk, a.Key.Secret, "[1]\n"+string(mustJSON(t, validPayload())), "Content-Type", "application/jsonl"), 200)
	var out struct{ Items []BulkResult }
	r.json(t, &out)
	if len(out.Items) != 2 || out.Items[0].Status != 422 || out.Items[1].Status != 201 {
		t.Errorf("array line under application/jsonl: %s", r.Body)
	}
	// Other types stay refused, and the single routes take JSON only.
	e.want(e.do("POST", bulk, a.Key.Secret, lines, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)
	e.want(e.do("POST", "/pid/v2/handles/21.12345/JSL/", a.Key.Secret, string(mustJSON(t, validPayload())), "Content-Type", "application/jsonl"), http.StatusUnsupportedMediaType)

	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	e.want(e.do("GET", "/openapi.json", "", nil), 200).json(t, &doc)
	found := 0
	for p, item := range doc.Paths {
		if !strings.HasSuffix(p, "/bulk") {
			continue
		}
		found++
		for _, mt := range []string{"application/json", "application/jsonl", "application/x-ndjson"} {
			if _, ok := item["post"].RequestBody.Content[mt]; !ok {
				t.Errorf("/openapi.json: POST %s does not accept %s", p, mt)
			}
		}
	}
	if found == 0 {
		t.Error("/openapi.json documents no bulk route")
	}
}
