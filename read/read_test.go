package read

import (
	"errors"
	"testing"

	"pidnode/handlev"
	"pidnode/internal/storetest"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/write"
)

type noCache struct{}

func (noCache) Invalidate(string) {}

// newReader returns a Reader over a fresh database with n identifiers
// item-0 … written through the write service in namespace NS.
func newReader(t *testing.T, n int) (*Reader, string) {
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
	ws, err := write.New(write.Config{Registry: reg, Namer: namer, Model: mod, Invalidator: noCache{}})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := handlev.NewNamespace(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &write.Actor{SNAA: registry.SNAA{ID: "s1", Namespace: ns, Prefixes: []string{"21.12345"}, CustomIDs: true}, Key: registry.Key{ID: "k1", Name: "ci"}}
	for i := range n {
		p := map[string]any{"url": "https://landing.example.org/item/" + string(rune('a'+i)), "metadata": map[string]any{
			"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0", "curation_contact": "pids@example.org",
			"resource_info": map[string]any{"label": "x", "description": "y", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://landing.example.org/item.ttl",
					"media_type": "text/turtle", "encoding_format": "UTF-8"}}}}}
		if _, err := ws.Create(a, write.Target{Prefix: "21.12345", Namespace: ns}, write.CreateRequest{CustomID: "item-" + string(rune('0'+i)), Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(Config{DB: db, Registry: reg, Namer: namer, Model: mod, PublicURL: "https://hdl.example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	return r, ns
}

// TestReads: Get, List and History find what was written, page by cursor,
// and refuse with typed errors.
func TestReads(t *testing.T) {
	r, ns := newReader(t, 3)
	ident, err := r.Get("21.12345", ns, "item-1")
	if err != nil || ident.ID != "ITEM-1" || ident.Namespace != ns || ident.URL != "https://landing.example.org/item/b" ||
		ident.Links.API != "https://hdl.example.org/api/handles/"+ident.Handle {
		t.Fatalf("Get = %+v, %v", ident, err)
	}
	if _, err := r.Get("21.12345", ns, "item-9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(absent) = %v, want ErrNotFound", err)
	}
	page, next, err := r.List("21.12345", ns, ListQuery{Limit: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("List page 1 = %d items, next %q, %v", len(page), next, err)
	}
	rest, next2, err := r.List("21.12345", ns, ListQuery{Limit: 2, Cursor: next})
	if err != nil || len(rest) != 1 || next2 != "" || rest[0].ID == page[0].ID || rest[0].ID == page[1].ID {
		t.Fatalf("List page 2 = %+v, next %q, %v", rest, next2, err)
	}
	if items, _, err := r.List("21.12345", ns, ListQuery{Limit: 10, Status: "withdrawn"}); err != nil || len(items) != 0 {
		t.Errorf("List(status WITHDRAWN) = %d items, %v; want none", len(items), err)
	}
	if items, _, err := r.List("21.12345", ns, ListQuery{Limit: 10, URL: "https://landing.example.org/item/c"}); err != nil || len(items) != 1 || items[0].ID != "ITEM-2" {
		t.Errorf("List(url) = %+v, %v; want item-2", items, err)
	}
	if _, _, err := r.List("21.12345", ns, ListQuery{Limit: 2, Cursor: "AAAA"}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("List(foreign cursor) = %v, want ErrBadCursor", err)
	}
	h, err := r.History("21.12345", ns, "item-0")
	if err != nil || len(h.Changes) != 1 || h.Changes[0].KeyID != "k1" || h.ChangeLog == nil || h.Version != 1 {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if _, err := r.History("21.12345", ns, "item-9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("History(absent) = %v, want ErrNotFound", err)
	}
}
