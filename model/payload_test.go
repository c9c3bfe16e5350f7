package model

import (
	"encoding/json"
	"testing"
)

// validPayload is a complete create payload of the default model.
func validPayload() map[string]any {
	return map[string]any{
		"url": "https://landing.example.org/item/42",
		"metadata": map[string]any{
			"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
			"curation_contact": "pids@example.org",
			"resource_info": map[string]any{
				"label": "Sample 42", "description": "A catalyst sample", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://landing.example.org/item/42.ttl",
					"media_type": "text/turtle", "encoding_format": "UTF-8", "size": 12345}},
			},
		},
	}
}

func withRelated(items ...any) map[string]any {
	p := validPayload()
	p["metadata"].(map[string]any)["related_identifiers"] = items
	return p
}

func related(typ, ident, resolving string) map[string]any {
	ri := map[string]any{"type": typ, "identifier": ident}
	if resolving != "" {
		ri["resolving_url"] = resolving
	}
	return map[string]any{"relation_type": "IS_OBSOLETED_BY", "related_identifier": ri}
}

// FuzzPayload drives the write-payload decoder (checkJSON, parsePayload and
// model validation) with arbitrary bytes: it must never panic, and whatever it
// accepts must be an object that re-encodes canonically.
func FuzzPayload(f *testing.F) {
	f.Add(mustJSONf(validPayload()))
	f.Add([]byte(`{"url":"https://e.org/","metadata":{"status":null}}`))
	f.Add([]byte(`{"a":{"a":{"a":[[[[1]]]]}}}`))
	f.Add([]byte(`{"url":"https://e.org/","url":"x"}`))
	f.Add([]byte("{\"url\":\"\xff\"}"))
	f.Add(mustJSONf(withRelated(related("DoiIdentifier", "10.1234/x", "https://doi.org/10.1234/x"))))
	m, err := LoadModel(DefaultModel)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePayload(b)
		if err != nil {
			return
		}
		meta := map[string]any{}
		for k, v := range p.Metadata {
			if v != nil {
				meta[k] = v
			}
		}
		fe := m.ValidateRecord(p.URL, meta, nil)
		if len(fe) > 0 {
			return
		}
		for _, fs := range m.Fields {
			if x, ok := meta[fs.Name]; ok && fs.Encoding == "json" {
				c := appendCanon(nil, x, fs.Schema)
				if !json.Valid(c) {
					t.Fatalf("canonical encoding of %s is not JSON: %s", fs.Name, c)
				}
			}
		}
		if msg := checkHTTPURL(*p.URL); msg != "" {
			t.Fatalf("accepted url %q: %s", *p.URL, msg)
		}
	})
}

func mustJSONf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
