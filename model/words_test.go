package model

import (
	"strings"
	"testing"
)

// TestMessagesInWords: every value of the default model that fails a
// pattern is explained by the schema's description and example, never by
// the pattern, and every schema with a pattern has both; a value of the
// wrong kind is named in words, not by its JSON type.
func TestMessagesInWords(t *testing.T) {
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, s *Schema)
	walk = func(path string, s *Schema) {
		if s.Pattern != "" {
			if s.Description == "" || s.Example == "" {
				t.Errorf("%s: a pattern without a description and an example", path)
			}
			var v Collector
			v.push(pathSeg{name: path})
			v.validate(s, "  not it  ")
			for _, fe := range v.Errors() {
				if strings.Contains(fe.Message, s.Pattern) || strings.ContainsAny(fe.Message, "^$\\[") || !strings.Contains(fe.Message, "For example: "+s.Example) {
					t.Errorf("%s: %q", path, fe.Message)
				}
			}
			if len(v.Errors()) == 0 {
				t.Errorf("%s: %q matches %s", path, "  not it  ", s.Pattern)
			}
		}
		for _, k := range s.Properties.Names {
			walk(path+"."+k, s.Properties.Map[k])
		}
		if s.Items != nil {
			walk(path+"[0]", s.Items)
		}
		if s.Discriminator != nil {
			for k, c := range s.Discriminator.Cases {
				walk(path+"("+k+")", c)
			}
		}
	}
	for _, f := range m.Fields {
		walk("metadata."+f.Name, f.Schema)
	}
	for _, x := range []any{[]any{1}, map[string]any{}, true, nil} {
		var v Collector
		v.push(pathSeg{name: "label"})
		v.validate(&Schema{Type: "string"}, x)
		for _, fe := range v.Errors() {
			for _, jsonWord := range []string{"string", "array", "object", "boolean", "null"} {
				if strings.Contains(fe.Message, jsonWord) {
					t.Errorf("the message of %v says %q: %q", x, jsonWord, fe.Message)
				}
			}
		}
	}
}
