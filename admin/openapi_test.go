package admin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The OpenAPI 3.1 document schema (https://spec.openapis.org/oas/3.1/schema/2022-10-07)
// is kept in testdata so the test needs no network.
const oasSchemaFile = "testdata/oas31-schema.json"

func TestOpenAPIValidates(t *testing.T) {
	e := newEnv(t)
	r := e.want(e.do("GET", "/openapi.json", "", nil), 200)
	raw, err := os.ReadFile(oasSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://spec.openapis.org/oas/3.1/schema/2022-10-07", sdoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("https://spec.openapis.org/oas/3.1/schema/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("/openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	// Every component schema compiles as JSON Schema 2020-12.
	comps := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	for name := range comps {
		if _, err := e.schema(name); err != nil {
			t.Errorf("component schema %s: %v", name, err)
		}
	}
}

func TestOpenAPICoversEveryRoute(t *testing.T) {
	e := newEnv(t)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	e.want(e.do("GET", "/openapi.json", "", nil), 200).json(t, &doc)
	registered := map[string]bool{}
	for _, rt := range e.srv.routes {
		registered[rt.Method+" "+rt.Pattern] = true
		if _, ok := doc.Paths[rt.Pattern][strings.ToLower(rt.Method)]; !ok {
			t.Errorf("route %s %s is registered but missing from /openapi.json", rt.Method, rt.Pattern)
		}
	}
	for p, item := range doc.Paths {
		for m := range item {
			if !registered[strings.ToUpper(m)+" "+p] {
				t.Errorf("/openapi.json documents %s %s, which is not registered", strings.ToUpper(m), p)
			}
		}
	}
}

var schemaCache sync.Map // *Server → *jsonschema.Compiler

// schema compiles the component schema name of the server's /openapi.json.
func (e *env) schema(name string) (*jsonschema.Schema, error) {
	const loc = "https://pidnode.invalid/openapi.json"
	ci, ok := schemaCache.Load(e.srv)
	if !ok {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.srv.openapi))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(loc, doc); err != nil {
			return nil, err
		}
		ci, _ = schemaCache.LoadOrStore(e.srv, c)
	}
	return ci.(*jsonschema.Compiler).Compile(loc + "#/components/schemas/" + name)
}

// conform fails the test unless body validates against the component schema name.
func (e *env) conform(name string, body []byte) {
	e.t.Helper()
	sch, err := e.schema(name)
	if err != nil {
		e.t.Fatalf("schema %s: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		e.t.Fatalf("%s: %v", body, err)
	}
	if err := sch.Validate(v); err != nil {
		e.t.Fatalf("body does not match schema %s: %v\n%s", name, err, body)
	}
}

// TestOpenAPIGolden: /openapi.json's bytes are testdata/openapi.json
// (docs/architecture.md practice 10), rewritten with -update. make check
// lints that file with Redocly's recommended rules (tools/openapi), so the
// linted description is the one the admin listener serves.
func TestOpenAPIGolden(t *testing.T) {
	e := newEnv(t)
	var ind bytes.Buffer
	if err := json.Indent(&ind, e.want(e.do("GET", "/openapi.json", "", nil), 200).Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	// Indented, so that a change reads as a diff of the lines it touches.
	got := ind.Bytes()
	path := filepath.Join("testdata", "openapi.json")
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./admin -run TestOpenAPIGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("/openapi.json differs from %s: review the change and run go test ./admin -run TestOpenAPIGolden -update", path)
	}
}
