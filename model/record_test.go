package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"pidnode/handlev"
)

// TestAppendChangeEntry: a change-log entry is what a json.Encoder without
// HTML escaping writes for it, whatever its strings hold.
func TestAppendChangeEntry(t *testing.T) {
	strs := []string{"", "x", "<b>&</b>", `"\`, "\x00\n\x7f", "é😀", "\u2028", "bad \xff"}
	for i, a := range strs {
		for _, b := range strs {
			e := ChangeEntry{DatetimeLog: a, HasAgent: Agent{Name: b, EmailAddress: a + b, Role: "OWNER"},
				ChangedField: b, Description: strs[i%3] + b}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&e); err != nil {
				t.Fatal(err)
			}
			if got := appendChangeEntry(nil, &e); !bytes.Equal(got, bytes.TrimSpace(want.Bytes())) {
				t.Fatalf("appendChangeEntry(%+v) = %s, want %s", e, got, want.Bytes())
			}
		}
	}
}

// TestCreatedContent: the content of a new record taken from its payload is
// what Extract reads back from the values Build made of it (but the change
// log), and is Extract's for values that would not come back the same.
func TestCreatedContent(t *testing.T) {
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 11, 9, 43, 14, 0, time.UTC)
	build := func(u string, meta map[string]any) []handlev.Value {
		vals, _ := m.Build(BuildInput{Display: "21.12345/svc/ABC/X", AdminHandle: "21.12345/svc/ABC/ADMIN", URL: u,
			Metadata: meta, Agent: Agent{Name: "O"}, Now: now, Create: true})
		return vals
	}
	for _, body := range []string{
		string(mustJSONf(validPayload())),
		string(mustJSONf(withRelated(related("DoiIdentifier", "10.1234/x", "https://doi.org/10.1234/x")))),
		`{"url":"https://e.org/\u00e9","metadata":{"status":"REGISTERED","resource_info":{"label":"<\u2028\"\\>","x":[1,-0,1.5e3,{"y":null,"z":[]}],"representation_variants":[{"size":12345678901234567890}]},"related_identifiers":[]}}`,
	} {
		obj, err := DecodeObject([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		w, err := CheckPayload(obj)
		if err != nil {
			t.Fatal(err)
		}
		vals := build(*w.Payload.URL, w.Meta)
		want := m.Extract(vals)
		want.Changes = nil
		if got := m.CreatedContent(*w.Payload.URL, w.Meta, vals); !reflect.DeepEqual(got, want) {
			t.Errorf("CreatedContent of %s =\n%#v\nExtract:\n%#v", body, got, want)
		}
	}
	// Values DecodeAny does not make fall back to Extract.
	for _, meta := range []map[string]any{
		{"status": "REGISTERED", "resource_info": map[string]any{"size": 1.5}},
		{"resource_info": map[string]any{"label": "bad \xff"}},
		{"resource_info": map[string]any{"bad \xff": "x"}},
		{"related_identifiers": []any{json.Number("01")}},
	} {
		vals := build("https://e.org/", meta)
		if got, want := m.CreatedContent("https://e.org/", meta, vals), m.Extract(vals); !reflect.DeepEqual(got, want) {
			t.Errorf("CreatedContent of %#v =\n%#v\nExtract:\n%#v", meta, got, want)
		}
	}
}

// TestCreatedContentOmits: members of meta that are no field of the model,
// or null, are not in the content, as they are not in the record.
func TestCreatedContentOmits(t *testing.T) {
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"status": "REGISTERED", "nofield": "x", "schema_version": nil}
	vals, _ := m.Build(BuildInput{Display: "21.12345/svc/ABC/X", AdminHandle: "21.12345/svc/ABC/ADMIN", URL: "https://e.org/",
		Metadata: meta, Now: time.Unix(0, 0), Create: true})
	want := m.Extract(vals)
	want.Changes = nil
	if got := m.CreatedContent("https://e.org/", meta, vals); !reflect.DeepEqual(got, want) {
		t.Errorf("CreatedContent = %#v, Extract %#v", got, want)
	}
}

// TestCollectorAdd: a Collector's own callers name the field themselves.
func TestCollectorAdd(t *testing.T) {
	var c Collector
	c.Add("technical_contact.email", "must be %s", "an e-mail address")
	if e := c.Errors(); len(e) != 1 || e[0].Field != "technical_contact.email" || e[0].Message != "must be an e-mail address" {
		t.Errorf("Errors() = %+v", e)
	}
}

// TestCreatedContentNoMetadata: a record without metadata shows an empty
// object, as Extract reads it.
func TestCreatedContentNoMetadata(t *testing.T) {
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := m.Build(BuildInput{Display: "21.12345/svc/ABC/X", AdminHandle: "21.12345/svc/ABC/ADMIN", URL: "https://e.org/", Now: time.Unix(0, 0), Create: true})
	if got := m.CreatedContent("https://e.org/", nil, vals); got.Metadata == nil || len(got.Metadata) != 0 {
		t.Errorf("CreatedContent(nil metadata).Metadata = %#v", got.Metadata)
	}
}
