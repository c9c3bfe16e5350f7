package model

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestCheckJSONLoneSurrogates(t *testing.T) {
	for _, c := range []struct{ body, field string }{
		{`{"a":"\ud800"}`, "a"},
		{`{"a":{"b":["x","\udc00"]}}`, "a.b[1]"},
		{`[{"a":1},{"b":"\ud800\u0041"}]`, "[1].b"},
		{`"\ud800"`, "(body)"},
		{`{"a":{"k\ud800":1}}`, "a"},
		{`{"\ud800":1}`, "(body)"},
		{`{"a\"b":{"c\\":"\ud800"}}`, `a"b.c\`},
	} {
		err := CheckJSON([]byte(c.body))
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != c.field {
			t.Errorf("CheckJSON(%s) = %v, want one error on %s", c.body, err, c.field)
		}
	}
	if err := CheckJSON([]byte(`{"a":"\ud83d\ude00 \\ud800"}`)); err != nil {
		t.Errorf("a pair and an escaped backslash: %v", err)
	}
}

var pathStep = regexp.MustCompile(`^(\[(\d+)\]|\.?([^.\[]*))`)

// FuzzSurrogatePath: for valid JSON with a lone surrogate in a value, the
// path CheckJSON names leads, in the decoded document, to a string holding
// U+FFFD (what encoding/json made of it).
func FuzzSurrogatePath(f *testing.F) {
	f.Add([]byte(`{"a":{"b":["x","\udc00"]}}`))
	f.Add([]byte(`[{"a":1},{"b":"\ud800\u0041"}]`))
	f.Add([]byte(`{"a":"\ud83d\ude00","b":[[],{"c":"\udbff"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || checkShape(b) != nil {
			return // duplicate keys: the decoded document keeps only one of them
		}
		err := checkSurrogates(b)
		var ve *ValidationError
		if !errors.As(err, &ve) || strings.HasPrefix(ve.Errors[0].Message, "has a member name") {
			return
		}
		var doc any
		if json.Unmarshal(b, &doc) != nil || ambiguousKeys(doc) {
			return // keys that a path cannot spell are not the point here
		}
		path := ve.Errors[0].Field
		if path == "(body)" {
			path = ""
		}
		x := doc
		for path != "" {
			m := pathStep.FindStringSubmatch(path)
			if m == nil || m[0] == "" {
				t.Fatalf("%s: cannot follow path %q", b, ve.Errors[0].Field)
			}
			path = path[len(m[0]):]
			if m[2] != "" {
				i, _ := strconv.Atoi(m[2])
				a, ok := x.([]any)
				if !ok || i >= len(a) {
					t.Fatalf("%s: path %q: no item %d", b, ve.Errors[0].Field, i)
				}
				x = a[i]
			} else {
				o, ok := x.(map[string]any)
				if !ok {
					t.Fatalf("%s: path %q: not an object at %q", b, ve.Errors[0].Field, m[3])
				}
				if x, ok = o[m[3]]; !ok {
					t.Fatalf("%s: path %q: no member %q", b, ve.Errors[0].Field, m[3])
				}
			}
		}
		if s, ok := x.(string); !ok || !strings.ContainsRune(s, '\uFFFD') {
			t.Fatalf("%s: path %q leads to %#v", b, ve.Errors[0].Field, x)
		}
	})
}

// ambiguousKeys reports whether x has a member name a path cannot spell
// unambiguously (empty, or with '.', '[' or ']'), or one holding U+FFFD:
// distinct invalid UTF-8 names decode to the same name, so the decoded
// document may keep another member than the one the path names.
func ambiguousKeys(x any) bool {
	switch t := x.(type) {
	case []any:
		for _, e := range t {
			if ambiguousKeys(e) {
				return true
			}
		}
	case map[string]any:
		for k, v := range t {
			if k == "" || strings.ContainsAny(k, ".[]\uFFFD") || ambiguousKeys(v) {
				return true
			}
		}
	}
	return false
}
