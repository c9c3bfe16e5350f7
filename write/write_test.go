package write

import (
	"errors"
	"testing"

	"pidnode/handlev"
	"pidnode/internal/storetest"
	"pidnode/model"
	"pidnode/registry"
)

// invalidations records what a Service told the cache.
type invalidations []string

func (v *invalidations) Invalidate(key string) { *v = append(*v, key) }

func newService(t *testing.T) (*Service, *invalidations, Target) {
	t.Helper()
	db, namer := storetest.Open(t)
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index})
	if err != nil {
		t.Fatal(err)
	}
	inv := &invalidations{}
	s, err := New(Config{Registry: reg, Namer: namer, Model: mod, Invalidator: inv,
		ReservedID: func(id string) (string, bool) { return "is reserved", id == "bulk" }})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := handlev.NewNamespace(nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, inv, Target{Prefix: "21.12345", Namespace: ns}
}

func payload(label string) map[string]any {
	return map[string]any{
		"url": "https://landing.example.org/item/42",
		"metadata": map[string]any{
			"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
			"curation_contact": "pids@example.org",
			"resource_info": map[string]any{"label": label, "description": "A catalyst sample", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://landing.example.org/item/42.ttl",
					"media_type": "text/turtle", "encoding_format": "UTF-8"}}},
		},
	}
}

func actor(ns string, customIDs bool) *Actor {
	return &Actor{SNAA: registry.SNAA{ID: "snaa-1", Organisation: "Lab", Namespace: ns, Prefixes: []string{"21.12345"}, CustomIDs: customIDs},
		Key: registry.Key{ID: "key-1", Name: "ci"}}
}

// TestCreateErrors: each refusal of a create is a typed error a front can
// map, never a reply.
func TestCreateErrors(t *testing.T) {
	s, inv, tg := newService(t)
	a := actor(tg.Namespace, true)
	res, err := s.Create(a, tg, CreateRequest{Payload: payload("gen")})
	if err != nil || !res.Written || res.Content == nil || res.Stored.Version != 1 {
		t.Fatalf("generated create = %+v, %v; want a written version 1", res, err)
	}
	if len(*inv) != 1 || (*inv)[0] != res.Key {
		t.Errorf("invalidated %q, want [%q]", *inv, res.Key)
	}
	if _, err := s.Create(a, tg, CreateRequest{CustomID: "item-1", Payload: payload("one")}); err != nil {
		t.Fatalf("custom create: %v", err)
	}
	var ve *model.ValidationError
	cases := []struct {
		name string
		a    *Actor
		req  CreateRequest
		want error
	}{
		{"custom id taken", a, CreateRequest{CustomID: "item-1", Payload: payload("x")}, ErrExists},
		{"custom id taken, if absent", a, CreateRequest{CustomID: "item-1", IfAbsent: true, Payload: payload("x")}, ErrPrecondition},
		{"no custom ids", actor(tg.Namespace, false), CreateRequest{CustomID: "item-2", Payload: payload("x")}, ErrForbidden},
	}
	for _, c := range cases {
		_, err := s.Create(c.a, tg, c.req)
		var we *Error
		if !errors.Is(err, c.want) || !errors.As(err, &we) || we.Detail == "" {
			t.Errorf("%s: Create = %v, want %v with a detail", c.name, err, c.want)
		}
	}
	if _, err := s.Create(a, tg, CreateRequest{CustomID: "bulk", Payload: payload("x")}); !errors.As(err, &ve) || ve.Errors[0].Field != "id" {
		t.Errorf("reserved id: Create = %v, want a ValidationError on id", err)
	}
	if _, err := s.Create(a, tg, CreateRequest{Payload: map[string]any{"url": 5}}); !errors.As(err, &ve) {
		t.Errorf("bad payload: Create = %v, want a ValidationError", err)
	}
}

// TestIdempotency: the same key and request replay the first create; the
// same key with another body is refused.
func TestIdempotency(t *testing.T) {
	s, _, tg := newService(t)
	a := actor(tg.Namespace, false)
	req := CreateRequest{Payload: payload("a"), Idempotency: "k1", Scope: "/pid/v2", Request: "/p?", Body: []byte("a")}
	first, err := s.Create(a, tg, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Create(a, tg, req)
	if err != nil || !again.Replayed || again.Written || again.Key != first.Key {
		t.Fatalf("repeat = %+v, %v; want a replay of %s", again, err, first.Key)
	}
	req.Body = []byte("b")
	if _, err := s.Create(a, tg, req); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("other body: Create = %v, want ErrIdempotencyMismatch", err)
	}
	req.Scope = "/testpid/v2"
	if res, err := s.Create(a, tg, req); err != nil || res.Replayed {
		t.Errorf("other scope: Create = %+v, %v; want a new identifier", res, err)
	}
}

// TestUpdate: preconditions, absent identifiers and no-op updates.
func TestUpdate(t *testing.T) {
	s, _, tg := newService(t)
	a := actor(tg.Namespace, true)
	if _, err := s.Create(a, tg, CreateRequest{CustomID: "u1", Payload: payload("one")}); err != nil {
		t.Fatal(err)
	}
	change := map[string]any{"metadata": map[string]any{"status": "DEPRECATED"}}
	if _, err := s.Update(a, tg, UpdateRequest{ID: "u1", Payload: change, IfMatch: `"7"`}); !errors.Is(err, ErrPrecondition) {
		t.Errorf("stale If-Match: Update = %v, want ErrPrecondition", err)
	}
	if _, err := s.Update(a, tg, UpdateRequest{ID: "absent", Payload: change}); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent: Update = %v, want ErrNotFound", err)
	}
	res, err := s.Update(a, tg, UpdateRequest{ID: "u1", Payload: change, IfMatch: ETag(1)})
	if err != nil || !res.Written || res.Stored.Version != 2 {
		t.Fatalf("Update = %+v, %v; want version 2 written", res, err)
	}
	if res, err := s.Update(a, tg, UpdateRequest{ID: "u1", Payload: change}); err != nil || res.Written || res.Stored.Version != 2 {
		t.Errorf("same update again = %+v, %v; want nothing written", res, err)
	}
}

// TestBulk: items fail alone, with the errors of the single writes.
func TestBulk(t *testing.T) {
	s, _, tg := newService(t)
	a := actor(tg.Namespace, true)
	if _, err := s.Create(a, tg, CreateRequest{CustomID: "b1", Payload: payload("one")}); err != nil {
		t.Fatal(err)
	}
	upd := map[string]any{"id": "b1", "metadata": map[string]any{"status": "DEPRECATED"}}
	var items []model.BulkItem
	for _, v := range []any{payload("new"), "not an object", upd, nil, map[string]any{"id": "bulk", "url": "https://x.example.org/"}} {
		items = append(items, model.BulkItem{Value: v})
	}
	items[3] = model.BulkItem{Err: errors.New("bad line")}
	res, err := s.Bulk(a, tg, items)
	if err != nil {
		t.Fatal(err)
	}
	var ve *model.ValidationError
	switch {
	case len(res) != 5:
		t.Fatalf("%d results, want 5", len(res))
	case res[0].Err != nil || !res[0].Created:
		t.Errorf("item 0 = %+v, want created", res[0])
	case !errors.As(res[1].Err, &ve):
		t.Errorf("item 1 = %+v, want a ValidationError", res[1])
	case res[2].Err != nil || res[2].Created:
		t.Errorf("item 2 = %+v, want updated", res[2])
	case res[3].Err != items[3].Err:
		t.Errorf("item 3 = %+v, want its own error", res[3])
	case !errors.As(res[4].Err, &ve):
		t.Errorf("item 4 = %+v, want the reserved id refused", res[4])
	}
	if _, err := s.Bulk(a, tg, nil); !errors.As(err, &ve) {
		t.Errorf("empty bulk = %v, want a ValidationError", err)
	}
}
