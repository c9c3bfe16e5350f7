package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestHostilePayloads(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBodyBytes = 64 << 10 })
	a := e.snaa(map[string]any{"namespace": "HOS"})
	coll := "/pid/v2/handles/21.12345/HOS/"
	valid := string(mustJSON(t, validPayload()))
	withURL := func(u string) string {
		p := validPayload()
		p["url"] = u
		return string(mustJSON(t, p))
	}
	cases := []struct {
		name   string
		body   string
		ctype  string
		status int
		detail string // substring of detail or of an error message
	}{
		{"deep nesting", `{"url":"https://e.org/","metadata":{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`, "", 400, "nests deeper"},
		{"deep objects", strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat("}", 20), "", 400, "nests deeper"},
		{"huge string", `{"url":"https://e.org/` + strings.Repeat("a", 70<<10) + `"}`, "", 413, "exceeds the limit"},
		{"huge label within limit", strings.Replace(valid, `"Sample 42"`, `"`+strings.Repeat("é", 5000)+`"`, 1), "", 422, "at most 1000 characters"},
		{"wrong top-level type", `["url"]`, "", 422, "must be a JSON object"},
		{"string body", `"hello"`, "", 422, "must be a JSON object"},
		{"metadata wrong type", `{"url":"https://e.org/","metadata":[1,2]}`, "", 422, "must be a group of fields"},
		{"duplicate top-level key", `{"url":"https://a.org/","url":"https://b.org/","metadata":{}}`, "", 400, `duplicate key "url"`},
		{"duplicate nested key", strings.Replace(valid, `"status":"REGISTERED"`, `"status":"REGISTERED","status":"OBSOLETED"`, 1), "", 400, `duplicate key "status"`},
		{"invalid UTF-8", strings.Replace(valid, "Sample 42", "Sample \xff\xfe", 1), "", 400, "not valid UTF-8"},
		{"javascript URL", withURL("javascript:alert(document.cookie)"), "", 422, "not a javascript: URL"},
		{"data URL", withURL("data:text/html,<script>alert(1)</script>"), "", 422, "not a data: URL"},
		{"CRLF in URL", withURL("https://e.org/\r\nSet-Cookie: a=b"), "", 422, "control characters"},
		{"LF in URL", withURL("https://e.org/a\nb"), "", 422, "control characters"},
		{"space in URL", withURL("https://e.org/a b"), "", 422, "control characters"},
		{"NUL in URL", withURL("https://e.org/\u0000"), "", 422, "control characters"},
		// Accepted once, then resolved to a values page without a Location:
		// the admin API and the resolver now share one URL rule.
		{"bidi override in host", withURL("https://\u202eevil.org/"), "", 422, "its host has a bidirectional control or invisible character"},
		{"zero-width joiner in host", withURL("https://e\u200dvil.org/"), "", 422, "its host has a bidirectional control or invisible character"},
		{"IPv6 zone id", withURL("https://[fe80::1%25eth0]/"), "", 422, "its host has an IPv6 zone identifier"},
		{"empty port", withURL("https://a.org:/"), "", 422, "its port is empty"},
		{"port out of range", withURL("https://a.org:99999/"), "", 422, "its port is out of range 1-65535"},
		{"truncated JSON", valid[:len(valid)-5], "", 400, "not valid JSON"},
		{"trailing garbage", valid + `{}`, "", 400, "more than one JSON value"},
		{"empty body", ``, "", 400, "empty"},
		{"oversized body", `{"url":"https://e.org/","metadata":{"resource_info":{"label":"` + strings.Repeat("x", 65<<10) + `"}}}`, "", 413, "exceeds the limit"},
		{"form content type", valid, "application/x-www-form-urlencoded", 415, "not accepted"},
		{"text content type", valid, "text/plain", 415, "not accepted"},
		{"huge number", strings.Replace(valid, "12345", strings.Repeat("9", 400), 1), "", 422, "whole number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("PUT", e.ts.URL+coll, strings.NewReader(tc.body))
			ct := tc.ctype
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+a.Key.Secret)
			res, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var buf bytes.Buffer
			buf.ReadFrom(res.Body)
			r := &resp{Status: res.StatusCode, Header: res.Header, Body: buf.Bytes()}
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d; %s", r.Status, tc.status, truncate(string(r.Body), 300))
			}
			p := r.problem(t)
			all := p.Detail
			for _, fe := range p.Errors {
				all += " | " + fe.Message
			}
			if !strings.Contains(all, tc.detail) {
				t.Errorf("problem %q does not say %q", truncate(all, 300), tc.detail)
			}
		})
	}
	if n := e.recordCount(); n != 0 {
		t.Errorf("records = %d, want 0", n)
	}
	// A Location header never carries what a hostile URL held: the only 201 is for a clean URL.
	r := e.want(e.do("PUT", coll, a.Key.Secret, validPayload()), 201)
	if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, coll) || strings.ContainsAny(loc, "\r\n") {
		t.Errorf("Location %q", loc)
	}
}

func TestOperatorPayloads(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		body   string
		status int
		detail string
	}{
		{"unknown field", `{"organisation":"x","colour":"red"}`, 400, `unknown field "colour"`},
		{"wrong type", `{"organisation":42}`, 400, "must be of type string"},
		{"duplicate key", `{"organisation":"a","organisation":"b"}`, 400, "duplicate key"},
		{"missing fields", `{}`, 422, "field(s) are invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/ops/v1/applications", testOpKey, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if p := r.problem(t); !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q, want %q", p.Detail, tc.detail)
			}
		})
	}
	r := e.want(e.do("POST", "/ops/v1/applications", testOpKey, `{}`), 422)
	var p Problem
	json.Unmarshal(r.Body, &p)
	if len(p.Errors) != 7 {
		t.Errorf("errors %+v, want 7 (every missing field)", p.Errors)
	}
}

func mustJSONf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// truncate cuts s to at most n bytes for a test message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
