package model

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// miniModel is a small TOML model with one string and one JSON field.
func miniModel(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/mini.toml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadModel(t *testing.T) {
	if _, err := LoadModel(DefaultModel); err != nil {
		t.Fatalf("default model: %v", err)
	}
	m, err := LoadModel(miniModel(t))
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
