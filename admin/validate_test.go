package admin

import (
	"slices"
	"strings"
	"testing"
)

// edit returns validPayload() changed by fn.
func edit(fn func(p, m, ri map[string]any)) map[string]any {
	p := validPayload()
	m := p["metadata"].(map[string]any)
	fn(p, m, m["resource_info"].(map[string]any))
	return p
}

func related(typ, ident, resolving string) map[string]any {
	ri := map[string]any{"type": typ, "identifier": ident}
	if resolving != "" {
		ri["resolving_url"] = resolving
	}
	return map[string]any{"relation_type": "IS_OBSOLETED_BY", "related_identifier": ri}
}

func withRelated(items ...any) map[string]any {
	return edit(func(p, m, ri map[string]any) { m["related_identifiers"] = items })
}

func variant(k string, v any) map[string]any {
	return edit(func(p, m, ri map[string]any) {
		rv := ri["representation_variants"].([]any)[0].(map[string]any)
		if v == nil {
			delete(rv, k)
		} else {
			rv[k] = v
		}
	})
}

func TestValidationTable(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "VAL"})
	coll := "/pid/v2/handles/21.12345/VAL/"
	const rv0 = "metadata.resource_info.representation_variants[0]."
	const rel0 = "metadata.related_identifiers[0]."
	cases := []struct {
		name   string
		body   any
		fields []string // every field the 422 must name, in order
	}{
		{"missing url", edit(func(p, m, ri map[string]any) { delete(p, "url") }), []string{"url"}},
		{"ftp url", edit(func(p, m, ri map[string]any) { p["url"] = "ftp://example.org/x" }), []string{"url"}},
		{"relative url", edit(func(p, m, ri map[string]any) { p["url"] = "/item/42" }), []string{"url"}},
		{"url without host", edit(func(p, m, ri map[string]any) { p["url"] = "https:///x" }), []string{"url"}},
		{"url too long", edit(func(p, m, ri map[string]any) { p["url"] = "https://e.org/" + strings.Repeat("a", 2048) }), []string{"url"}},
		{"url wrong type", edit(func(p, m, ri map[string]any) { p["url"] = 42 }), []string{"url"}},
		{"missing metadata", edit(func(p, m, ri map[string]any) { delete(p, "metadata") }), []string{
			"metadata.curation_contact", "metadata.metadata_license", "metadata.resource_info", "metadata.schema_version", "metadata.status"}},
		{"bad email", edit(func(p, m, ri map[string]any) { m["curation_contact"] = "not an email" }), []string{"metadata.curation_contact"}},
		{"bad status", edit(func(p, m, ri map[string]any) { m["status"] = "registered" }), []string{"metadata.status"}},
		{"bad schema_version", edit(func(p, m, ri map[string]any) { m["schema_version"] = "1.0.1" }), []string{"metadata.schema_version"}},
		{"bad license", edit(func(p, m, ri map[string]any) { m["metadata_license"] = "CC-BY-4.0" }), []string{"metadata.metadata_license"}},
		{"status wrong type", edit(func(p, m, ri map[string]any) { m["status"] = true }), []string{"metadata.status"}},
		{"resource_info wrong type", edit(func(p, m, ri map[string]any) { m["resource_info"] = "x" }), []string{"metadata.resource_info"}},
		{"resource_category missing", edit(func(p, m, ri map[string]any) { delete(ri, "resource_category") }), []string{"metadata.resource_info.resource_category"}},
		{"resource_category bad", edit(func(p, m, ri map[string]any) { ri["resource_category"] = "THING" }), []string{"metadata.resource_info.resource_category"}},
		{"label wrong type", edit(func(p, m, ri map[string]any) { ri["label"] = []any{"x"} }), []string{"metadata.resource_info.label"}},
		{"resource_info unknown field", edit(func(p, m, ri map[string]any) { ri["colour"] = "red" }), []string{"metadata.resource_info.colour"}},
		{"variants missing", edit(func(p, m, ri map[string]any) { delete(ri, "representation_variants") }), []string{"metadata.resource_info.representation_variants"}},
		{"variants empty", edit(func(p, m, ri map[string]any) { ri["representation_variants"] = []any{} }), []string{"metadata.resource_info.representation_variants"}},
		{"variant media_type", variant("media_type", "turtle"), []string{rv0 + "media_type"}},
		{"variant size negative", variant("size", -1), []string{rv0 + "size"}},
		{"variant size fraction", variant("size", 1.5), []string{rv0 + "size"}},
		{"variant size string", variant("size", "12"), []string{rv0 + "size"}},
		{"variant url javascript", variant("variant_url", "javascript:alert(1)"), []string{rv0 + "variant_url"}},
		{"variant unknown field", variant("colour", "red"), []string{rv0 + "colour"}},
		{"related not a list", edit(func(p, m, ri map[string]any) { m["related_identifiers"] = map[string]any{} }), []string{"metadata.related_identifiers"}},
		{"related relation_type", withRelated(map[string]any{"relation_type": "IS_FRIEND_OF", "related_identifier": related("ExampleIdentifier", "ex:1", "")["related_identifier"]}), []string{rel0 + "relation_type"}},
		{"related missing identifier object", withRelated(map[string]any{"relation_type": "CITES"}), []string{rel0 + "related_identifier"}},
		{"related type unknown", withRelated(related("IsbnIdentifier", "978", "")), []string{rel0 + "related_identifier.type"}},
		{"doi identifier and url", withRelated(related("DoiIdentifier", "11.1234/x", "https://dx.doi.org/10.1234/x")), []string{rel0 + "related_identifier.identifier", rel0 + "related_identifier.resolving_url"}},
		{"handle resolving_url", withRelated(related("HandleIdentifier", "21.T11978/ABC", "https://example.org/21.T11978/ABC")), []string{rel0 + "related_identifier.resolving_url"}},
		{"handle identifier", withRelated(related("HandleIdentifier", "abc/def", "https://hdl.handle.net/abc/def")), []string{rel0 + "related_identifier.identifier"}},
		{"purl resolving_url", withRelated(related("PurlIdentifier", "x", "https://example.org/x")), []string{rel0 + "related_identifier.resolving_url"}},
		{"ark identifier", withRelated(related("ArkIdentifier", "ark:/123/x", "")), []string{rel0 + "related_identifier.identifier"}},
		{"urn identifier", withRelated(related("UrnIdentifier", "urx:isbn:1", "")), []string{rel0 + "related_identifier.identifier"}},
		{"gtin identifier", withRelated(related("GtinIdentifier", "123456789012", "")), []string{rel0 + "related_identifier.identifier"}},
		{"example identifier", withRelated(related("ExampleIdentifier", "x:1", "")), []string{rel0 + "related_identifier.identifier"}},
		{"datetime_log", withRelated(func() map[string]any {
			r := related("ExampleIdentifier", "ex:1", "")
			r["datetime_log"] = "yesterday"
			return r
		}()), []string{rel0 + "datetime_log"}},
		{"unknown metadata field", edit(func(p, m, ri map[string]any) { m["colour"] = "red" }), []string{"metadata.colour"}},
		{"unknown top-level field", edit(func(p, m, ri map[string]any) { p["handle"] = "x" }), []string{"handle"}},
		{"null required field", edit(func(p, m, ri map[string]any) { m["status"] = nil }), []string{"metadata.status"}},
		{"every error at once", edit(func(p, m, ri map[string]any) {
			p["url"] = "javascript:alert(1)"
			m["status"] = "GONE"
			m["curation_contact"] = "x"
			ri["resource_category"] = "X"
			ri["representation_variants"].([]any)[0].(map[string]any)["media_type"] = "bad"
			m["related_identifiers"] = []any{related("DoiIdentifier", "10.1/x", "")}
		}), []string{"metadata.curation_contact", rel0 + "related_identifier.identifier",
			rv0 + "media_type", "metadata.resource_info.resource_category", "metadata.status", "url"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("PUT", coll, a.Key.Secret, tc.body)
			if r.Status != 422 {
				t.Fatalf("status %d, want 422; %s", r.Status, r.Body)
			}
			e.conform("Problem", r.Body)
			p := r.problem(t)
			var got []string
			for _, fe := range p.Errors {
				got = append(got, fe.Field)
				if fe.Message == "" {
					t.Errorf("field %s has no message", fe.Field)
				}
			}
			want := slices.Clone(tc.fields)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("error fields %q, want %q\n%s", got, want, r.Body)
			}
		})
	}
	// Valid related identifiers of every type pass.
	ok := withRelated(
		related("PurlIdentifier", "x", "https://w3id.org/x"),
		related("DoiIdentifier", "10.1234/x", "https://doi.org/10.1234/x"),
		related("HandleIdentifier", "21.T11978/ABC", "https://hdl.handle.net/21.T11978/ABC"),
		related("ArkIdentifier", "ark:/12345/x", ""),
		related("UrnIdentifier", "urn:isbn:0451450523", ""),
		related("GtinIdentifier", "4006381333931", ""),
		related("ExampleIdentifier", "ex:1", ""),
	)
	e.conform("HandleCreate", mustJSON(t, ok))
	r := e.want(e.do("PUT", coll, a.Key.Secret, ok), 201)
	e.conform("Identifier", r.Body)
	if e.recordCount() != 1 {
		t.Errorf("records = %d, want 1 (no invalid payload may write)", e.recordCount())
	}
}
