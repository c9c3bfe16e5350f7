package admin

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// The list's search, through the API: words of the id, label, URL and
// description (prefix per word, AND of words), sort orders, numbered pages
// with totals, the status filter, and exports as CSV and JSON Lines of
// every match; an update that changes a label takes its old words away.
func TestListSearchPagesAndExports(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "LIST", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/LIST/"
	put := func(id, label, desc, u, status string) {
		t.Helper()
		p := validPayload()
		p["url"] = u
		m := p["metadata"].(map[string]any)
		m["status"] = status
		ri := m["resource_info"].(map[string]any)
		ri["label"], ri["description"] = label, desc
		e.want(e.do("PUT", coll+id, a.Key.Secret, p, "If-None-Match", "*"), 201)
		time.Sleep(10 * time.Millisecond) // distinct created times
	}
	put("ZN-1", "Zinc oxide powder", "A white powder", "https://lab.example.org/zinc", "REGISTERED")
	put("CU-2", "Copper wire", "Thin wire of copper", "https://lab.example.org/copper", "SUBMITTED")
	put("AL-3", "Alumina", "=zinc-free powder", "https://data.example.net/al", "REGISTERED")

	type page struct {
		Items []Identifier
		Total int
		Page  int
		Pages int
	}
	ids := func(p page) []string {
		var out []string
		for _, it := range p.Items {
			out = append(out, it.ID)
		}
		return out
	}
	cases := []struct {
		name, query string
		want        []string
		total       int
	}{
		{"words AND", "q=zinc+OXIDE", []string{"ZN-1"}, 1},
		{"word prefix", "q=pow", []string{"AL-3", "ZN-1"}, 2},
		{"by label", "q=pow&sort=label", []string{"AL-3", "ZN-1"}, 2},
		{"url word", "q=net", []string{"AL-3"}, 1},
		{"id word", "q=cu", []string{"CU-2"}, 1},
		{"status", "page=1&status=registered&sort=-label", []string{"ZN-1", "AL-3"}, 2},
		{"created", "sort=created", []string{"ZN-1", "CU-2", "AL-3"}, 3},
		{"changed, newest first", "sort=-changed", []string{"AL-3", "CU-2", "ZN-1"}, 3},
		{"page 2 of 2", "sort=id&page=2&limit=2", []string{"ZN-1"}, 3},
		{"past the last", "page=9", nil, 3},
		{"nothing", "q=gold", nil, 0},
	}
	for _, c := range cases {
		var p page
		e.want(e.do("GET", coll+"?"+c.query, a.Key.Secret, nil), 200).json(t, &p)
		if got := ids(p); !slices.Equal(got, c.want) || p.Total != c.total {
			t.Errorf("%s: GET ?%s = %q, total %d; want %q, total %d", c.name, c.query, got, p.Total, c.want, c.total)
		}
	}
	var p page
	e.want(e.do("GET", coll+"?sort=id&page=2&limit=2", a.Key.Secret, nil), 200).json(t, &p)
	if p.Page != 2 || p.Pages != 2 {
		t.Errorf("page 2 of 3 items by 2: page %d of %d", p.Page, p.Pages)
	}

	// The label changes: its old words find nothing, its new ones find it.
	e.want(e.do("PUT", coll+"ZN-1", a.Key.Secret, map[string]any{"metadata": map[string]any{"resource_info": map[string]any{
		"label": "Iron filings", "description": "grey", "resource_category": "SAMPLE",
		"representation_variants": []any{map[string]any{"variant_url": "https://lab.example.org/zinc.ttl"}}}}}), 200)
	for q, want := range map[string][]string{"oxide": nil, "iron+fil": {"ZN-1"}} {
		var p page
		e.want(e.do("GET", coll+"?q="+q, a.Key.Secret, nil), 200).json(t, &p)
		if got := ids(p); !slices.Equal(got, want) {
			t.Errorf("after the label change, q=%s = %q, want %q", q, got, want)
		}
	}

	// Exports hold every match, not one page.
	r := e.want(e.do("GET", coll+"?format=csv&q=pow&limit=1", a.Key.Secret, nil), 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("CSV export Content-Type %q", ct)
	}
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV export: %v\n%s", err, r.Body)
	}
	if len(rows) != 2 || strings.Join(rows[0], ",") != "handle,id,label,status,url,created,updated" || rows[1][1] != "AL-3" || rows[1][2] != "Alumina" {
		t.Errorf("CSV export of q=pow:\n%s", r.Body)
	}
	r = e.want(e.do("GET", coll+"?sort=label", a.Key.Secret, nil, "Accept", "application/x-ndjson"), 200)
	var labels []string
	for _, line := range bytes.Split(bytes.TrimSpace(r.Body), []byte("\n")) {
		var s struct{ Label, Status, URL string }
		if err := json.Unmarshal(line, &s); err != nil {
			t.Fatalf("JSON Lines export line %q: %v", line, err)
		}
		labels = append(labels, s.Label)
	}
	if want := []string{"Alumina", "Copper wire", "Iron filings"}; !slices.Equal(labels, want) {
		t.Errorf("JSON Lines export by label = %q, want %q", labels, want)
	}

	for _, bad := range []string{"sort=size", "page=0", "format=xml", "q=a&url=" + url.QueryEscape("https://lab.example.org/*"), "page=1&limit=5000"} {
		e.want(e.do("GET", coll+"?"+bad, a.Key.Secret, nil), 400).problem(t)
	}
}
