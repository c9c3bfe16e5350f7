package admin

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"pidnode/handlev"
)

// syncBuffer is a bytes.Buffer safe for the server's concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// relatedIDs returns n related identifiers whose identifier is about size
// characters long.
func relatedIDs(n, size int) []any {
	out := make([]any, n)
	for i := range out {
		id := fmt.Sprintf("ex:%d-", i)
		out[i] = map[string]any{"relation_type": "CITES", "related_identifier": map[string]any{
			"type": "ExampleIdentifier", "identifier": id + strings.Repeat("a", size-len(id))}}
	}
	return out
}

func withMeta(k string, v any) map[string]any {
	p := validPayload()
	p["metadata"].(map[string]any)[k] = v
	return p
}

func withInfo(k string, v any) map[string]any {
	p := validPayload()
	p["metadata"].(map[string]any)["resource_info"].(map[string]any)[k] = v
	return p
}

// TestAbuseNo5xx drives create, update and bulk with hostile but well-formed
// payloads: each gets a 4xx naming what is wrong (or is written, when it is
// merely large), never a 5xx, and the server logs no ERROR line. Among them
// the payload that passed the schema but not the store (700 related
// identifiers of ~400 characters: a value over the store's limit per value).
func TestAbuseNo5xx(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	a := e.snaa(map[string]any{"namespace": "ABU", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/ABU/"
	e.want(e.do("PUT", coll+"target", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)

	limit := fmt.Sprint(handlev.MaxLength)
	manyFields := map[string]any{}
	for i := range 5000 {
		manyFields[fmt.Sprintf("f%d", i)] = i
	}
	variants := make([]any, 5000)
	for i := range variants {
		variants[i] = map[string]any{"variant_url": "https://e.org/", "media_type": "text/turtle"}
	}
	nested := any("x")
	for range 15 {
		nested = map[string]any{"a": nested}
	}
	cases := []struct {
		name   string
		body   any
		status int
		field  string // the field the first error names ("" = not checked)
		detail string // substring of the detail or an error message
	}{
		{"related identifiers over the value limit", withMeta("related_identifiers", relatedIDs(700, 400)), 422, "metadata.related_identifiers", limit},
		{"huge array", withInfo("representation_variants", variants), 422, "metadata.resource_info.representation_variants", "at most 100"},
		{"deeply nested metadata", withMeta("related_identifiers", nested), 400, "", "nests deeper"},
		{"many fields", map[string]any{"url": "https://e.org/", "metadata": manyFields}, 422, "", "is not a field here"},
		{"long url", map[string]any{"url": "https://e.org/" + strings.Repeat("a", 5000), "metadata": validPayload()["metadata"]}, 422, "url", "2048"},
		{"long curation_contact", withMeta("curation_contact", strings.Repeat("a", 100000)+"@e.org"), 422, "metadata.curation_contact", "254"},
		{"long status", withMeta("status", strings.Repeat("A", 100000)), 422, "metadata.status", ""},
		{"long schema_version", withMeta("schema_version", strings.Repeat("1", 100000)), 422, "metadata.schema_version", ""},
		{"long label", withInfo("label", strings.Repeat("é", 100000)), 422, "metadata.resource_info.label", "1000"},
		{"long description", withInfo("description", strings.Repeat("d", 200000)), 422, "metadata.resource_info.description", "10000"},
		{"long unknown key", withMeta(strings.Repeat("k", 200000), 1), 422, "", "is not a field here"},
		{"body over the request limit", withInfo("description", strings.Repeat("d", 2<<20)), 413, "", "exceeds the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check := func(route string, r *resp) {
				t.Helper()
				if r.Status != tc.status {
					t.Fatalf("%s: status %d, want %d; body %.400s", route, r.Status, tc.status, r.Body)
				}
				p := r.problem(t)
				msg := p.Detail
				for _, fe := range p.Errors {
					msg += " | " + fe.Field + ": " + fe.Message
				}
				if tc.field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != tc.field) {
					t.Errorf("%s: errors do not start with %s: %.400s", route, tc.field, msg)
				}
				if !strings.Contains(msg, tc.detail) {
					t.Errorf("%s: %q not in %.400s", route, tc.detail, msg)
				}
			}
			check("create", e.do("POST", coll, a.Key.Secret, tc.body))
			check("update", e.do("PUT", coll+"target", a.Key.Secret, tc.body))
			// In a bulk the item fails alone; the valid items are written.
			item, ok := tc.body.(map[string]any)
			if !ok || tc.status == 413 {
				return
			}
			items := []any{validPayload(), item, validPayload()}
			r := e.do("POST", coll+"bulk", a.Key.Secret, items)
			if tc.status == 400 {
				// A malformed body (too deep) is refused as a whole, like any other.
				if r.Status != 400 {
					t.Fatalf("bulk: status %d, want 400; body %.400s", r.Status, r.Body)
				}
				return
			}
			wantStatus(t, r, 200)
			var out struct{ Items []BulkResult }
			r.json(t, &out)
			if len(out.Items) != 3 || out.Items[0].Status != 201 || out.Items[1].Status != tc.status || out.Items[2].Status != 201 {
				t.Fatalf("bulk: %.600s", r.Body)
			}
			if tc.field != "" && (len(out.Items[1].Errors) == 0 || out.Items[1].Errors[0].Field != tc.field) {
				t.Errorf("bulk item: %+v", out.Items[1])
			}
		})
	}

	// The change log at its cap, then a large update that fits the store:
	// written, and the change log stays within its cap.
	t.Run("change log at its cap with a big update", func(t *testing.T) {
		items := make([]any, MaxBulkItems)
		for i := range items {
			st := "REGISTERED"
			if i%2 == 0 {
				st = "DEPRECATED"
			}
			items[i] = map[string]any{"id": "target", "metadata": map[string]any{"status": st}}
		}
		wantStatus(t, e.do("POST", coll+"bulk", a.Key.Secret, items), 200)
		wantStatus(t, e.do("PUT", coll+"target", a.Key.Secret, withMeta("related_identifiers", relatedIDs(500, 400))), 200)
		r := e.do("PUT", coll+"target", a.Key.Secret, withMeta("related_identifiers", relatedIDs(700, 400)))
		if r.Status != 422 {
			t.Fatalf("oversized update of a full record: status %d; %.300s", r.Status, r.Body)
		}
		st, ok, err := e.db.Get(mustKey(t, e, "21.12345/svc/ABU/TARGET"))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, v := range st.Record.Values {
			if v.Index == 16 && len(v.Data) > 65536 {
				t.Errorf("change log of %d bytes, over its cap", len(v.Data))
			}
		}
	})

	if s := logs.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("the server logged errors:\n%.2000s", s)
	}
}

func mustKey(t *testing.T, e *env, display string) string {
	t.Helper()
	k, _, err := e.namer.Key(display)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// wantStatus is env.want for a subtest: it fails t, not the env's test.
func wantStatus(t *testing.T, r *resp, status int) *resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %.600s", r.Status, status, r.Body)
	}
	return r
}
