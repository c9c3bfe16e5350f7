package admin

import (
	"errors"
	"strings"
	"testing"
)

const tomlModel = `
name = "mini"
version = "v0.1.0"

[url]
index = 1
type = "URL"
changed_field = "LANDING_PAGE"

[changes]
index = 16
type = "CHANGES"

[admin]
index = 100
admin_index = 300

[[fields]]
name = "status"
required = true
index = 11
type = "STATUS"
[fields.schema]
type = "string"
enum = ["SUBMITTED", "REGISTERED", "OBSOLETED", "DEPRECATED"]

[[fields]]
name = "keywords"
index = 17
type = "KEYWORDS"
encoding = "json"
changed_field = "KEYWORDS"
[fields.schema]
type = "array"
maxItems = 3
[fields.schema.items]
type = "string"
pattern = "^[a-z]+$"
`

func TestLoadModel(t *testing.T) {
	if _, err := LoadModel(DefaultModel); err != nil {
		t.Fatalf("default model: %v", err)
	}
	m, err := LoadModel([]byte(tomlModel))
	if err != nil {
		t.Fatalf("TOML model: %v", err)
	}
	if m.Name != "mini" || len(m.Fields) != 2 || m.Field("keywords").Schema.Items.Pattern != "^[a-z]+$" {
		t.Errorf("TOML model decoded as %+v", m)
	}
	bad := []struct{ name, model, want string }{
		{"not JSON", `{"name":`, "invalid metadata model"},
		{"unknown key", `{"name":"x","colour":1}`, "unknown field"},
		{"no url", `{"name":"x","changes":{"index":16,"type":"C"},"admin":{"index":100,"admin_index":300}}`, "at url"},
		{"bad regex", strings.Replace(string(DefaultModel), `"^v\\d+\\.\\d+\\.\\d+$"`, `"^v(\\d+$"`, 1), "pattern"},
		{"unknown format", strings.Replace(string(DefaultModel), `"format": "date-time"`, `"format": "uuid"`, 1), "unknown format"},
		{"duplicate index", strings.Replace(string(DefaultModel), `"index": 15`, `"index": 14`, 1), "already used"},
		{"unknown type", strings.Replace(string(DefaultModel), `"type": "integer"`, `"type": "int"`, 1), "unknown type"},
		{"required not a property", strings.Replace(string(DefaultModel), `"required": ["resource_category", "representation_variants"]`, `"required": ["category"]`, 1), "is not a property"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadModel([]byte(tc.model))
			if err == nil || !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadModel = %v, want ErrModel mentioning %q", err, tc.want)
			}
		})
	}
}

// A different model changes what the API accepts and writes: the model is data.
func TestCustomModel(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Model = []byte(tomlModel) })
	a := e.snaa(map[string]any{"namespace": "MIN"})
	coll := "/pid/v2/handles/21.12345/MIN/"
	r := e.do("PUT", coll, a.Key.Secret, map[string]any{"url": "https://e.org/", "metadata": map[string]any{"status": "REGISTERED", "keywords": []any{"a", "B", "c", "d"}}})
	p := e.want(r, 422).problem(t)
	if len(p.Errors) != 2 || p.Errors[0].Field != "metadata.keywords" {
		t.Errorf("errors %+v", p.Errors)
	}
	var id Identifier
	e.want(e.do("PUT", coll, a.Key.Secret, map[string]any{"url": "https://e.org/", "metadata": map[string]any{"status": "REGISTERED", "keywords": []any{"catalysis"}}}), 201).json(t, &id)
	k, _, _ := e.namer.Key(id.Handle)
	rec, _, _ := e.db.Load(k)
	if got := string(valueAt(rec, 17)); got != `["catalysis"]` {
		t.Errorf("KEYWORDS value = %q", got)
	}
	// The OpenAPI document describes this model.
	e.conform("HandleCreate", []byte(`{"url":"https://e.org/","metadata":{"status":"REGISTERED","keywords":["x"]}}`))
}
