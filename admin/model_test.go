package admin

import (
	"os"
	"testing"
)

// miniModel is model/testdata/mini.toml: a small TOML model with one string
// and one JSON field.
func miniModel(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../model/testdata/mini.toml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A different model changes what the API accepts and writes: the model is data.
func TestCustomModel(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Model = miniModel(t) })
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
