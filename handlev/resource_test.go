package handlev

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReadResource: the members read, the ones skipped, and what is not
// one JSON object.
func TestReadResource(t *testing.T) {
	tests := []struct {
		name, in         string
		ok               bool
		label, desc, cat string
		urls             []string
	}{
		{"pid4cat", `{"label":"L","description":"D <b>","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://a.example/x.ttl","media_type":"text/turtle","encoding_format":"UTF-8","size":12}]}`,
			true, "L", "D <b>", "SAMPLE", []string{"https://a.example/x.ttl"}},
		{"escapes", `{"label":"\u00e9\ud83d\ude00\ud800","resource_category":"S\u0041MPLE"}`, true, "é😀\uFFFD", "", "SAMPLE", nil},
		{"other types", `{"label":5,"description":null,"representation_variants":[1,{"variant_url":5},null,{"variant_url":"u"}]}`, true, "", "", "", []string{"", "u"}},
		{"last key counts", `{"label":"a","label":"b","resource_category":"X","resource_category":[]}`, true, "b", "", "", nil},
		{"keys exact", `{"Label":"a","LABEL":"b"}`, true, "", "", "", nil},
		{"escaped key", `{"l\u0061bel":"a"}`, true, "a", "", "", nil},
		{"not an object", `["label"]`, false, "", "", "", nil},
		{"trailing", `{"label":"a"} x`, false, "", "", "", nil},
		{"bad member", `{"label":"a","x":01}`, false, "", "", "", nil},
		{"too deep", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false, "", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, ok := ReadResource([]byte(tt.in), nil)
			if ok != tt.ok || string(r.Label) != tt.label || string(r.Description) != tt.desc || string(r.Category) != tt.cat || len(r.Variants) != len(tt.urls) {
				t.Fatalf("ReadResource(%s) = %q %q %q %d variants, %v; want %q %q %q %d, %v", tt.in, r.Label, r.Description, r.Category, len(r.Variants), ok, tt.label, tt.desc, tt.cat, len(tt.urls), tt.ok)
			}
			for i, u := range tt.urls {
				if string(r.Variants[i].URL) != u {
					t.Errorf("ReadResource(%s) variant %d URL = %q, want %q", tt.in, i, r.Variants[i].URL, u)
				}
			}
		})
	}
}

// TestReadResourceArena: strings with escapes go to the arena after what it
// holds, which stays as it was; plain strings alias the data.
func TestReadResourceArena(t *testing.T) {
	data := []byte(`{"label":"plain","description":"esc\naped and long enough for words","resource_category":"c\u0041t"}`)
	arena := append(make([]byte, 0, 4), "keep"...)
	r, arena, ok := ReadResource(data, arena)
	if !ok || string(arena[:4]) != "keep" {
		t.Fatalf("ReadResource: ok %v, arena %q", ok, arena)
	}
	if &r.Label[0] != &data[len(`{"label":"`)] {
		t.Errorf("plain label does not alias the data")
	}
	if string(r.Description) != "esc\naped and long enough for words" || string(r.Category) != "cAt" {
		t.Errorf("ReadResource = %q %q", r.Description, r.Category)
	}
	if string(arena) != "keep"+string(r.Description)+string(r.Category) {
		t.Errorf("arena = %q", arena)
	}
}

// FuzzReadResource: ReadResource accepts exactly the JSON objects
// encoding/json accepts (nested no deeper than it walks), and reads the same
// label, description, category and variants as encoding/json does with
// exact keys.
func FuzzReadResource(f *testing.F) {
	for _, s := range []string{
		`{"label":"x","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://a.example/","media_type":"text/turtle","size":1}]}`,
		`{"resource_category":"S\u0041\ud83d\ude00\ud800","representation_variants":[1,{"variant_url":5},null,{"media_type":"a/b"}],"x":[true,false,null,-1.5e+3,{"a":[]}]}`,
		`{"representation_variants":{}, "resource_category":null}`,
		`{"a":1}x`, `[1]`, `{"a":01}`, `{"a":"\x01"}`, `{"a":1,}`, ` {"b":"\u12"} `, `{"a":"\/\b\f\n\r\t\\\""}`,
		`{"label":"a\u00e9","description":"\xff","label":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _, ok := ReadResource(b, nil)
		var obj map[string]json.RawMessage
		valid := json.Valid(b) && json.Unmarshal(b, &obj) == nil && obj != nil
		if ok != valid && (ok || strings.Count(string(b), "[")+strings.Count(string(b), "{") < 64) {
			t.Fatalf("ReadResource(%q) ok = %v, encoding/json says %v", b, ok, valid)
		}
		if !ok {
			return
		}
		str := func(raw json.RawMessage) []byte {
			var s string
			if raw != nil && json.Unmarshal(raw, &s) == nil {
				return []byte(s)
			}
			return nil
		}
		want := Resource{Label: str(obj["label"]), Description: str(obj["description"]), Category: str(obj["resource_category"])}
		var items []json.RawMessage
		if raw, has := obj["representation_variants"]; has && json.Unmarshal(raw, &items) == nil {
			for _, it := range items {
				var m map[string]json.RawMessage
				if json.Unmarshal(it, &m) != nil || m == nil {
					continue
				}
				want.Variants = append(want.Variants, Variant{URL: str(m["variant_url"]), MediaType: str(m["media_type"])})
			}
		}
		if string(r.Label) != string(want.Label) || string(r.Description) != string(want.Description) ||
			string(r.Category) != string(want.Category) || len(r.Variants) != len(want.Variants) {
			t.Fatalf("ReadResource(%q) = %q %q %q %d variants, encoding/json %q %q %q %d", b, r.Label, r.Description, r.Category, len(r.Variants), want.Label, want.Description, want.Category, len(want.Variants))
		}
		for i := range r.Variants {
			if string(r.Variants[i].URL) != string(want.Variants[i].URL) || string(r.Variants[i].MediaType) != string(want.Variants[i].MediaType) {
				t.Fatalf("ReadResource(%q) variant %d = %q, encoding/json %q", b, i, r.Variants[i], want.Variants[i])
			}
		}
	})
}
