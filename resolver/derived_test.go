package resolver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// parsingSource is the store read without the records' derived parts, as
// the resolver reads a file written before them: every entry parses its
// RESOURCE value.
type parsingSource struct{ src cache.Source }

func (p parsingSource) Load(key string) (handlev.Record, bool, error) { return p.src.Load(key) }

// TestDerivedAnswersAsParsed: for every fixture record and route that reads
// the RESOURCE value (Link fields, negotiated redirects, linksets), the
// resolver answers the same from the derived part the store keeps as from
// parsing the value.
func TestDerivedAnswersAsParsed(t *testing.T) {
	f := newFixture(t, nil)
	private := sv(14, "RESOURCE", `{"resource_category":"DEVICE","representation_variants":[{"variant_url":"https://example.org/private.ttl","media_type":"text/turtle"}]}`)
	private.Perm = handlev.PermAdminRead | handlev.PermAdminWrite
	plain := `{"label":"Plain","resource_category":"DATA_OBJECT","representation_variants":[{"variant_url":"https://example.org/d.ttl","media_type":"text/turtle"},` +
		`{"variant_url":"https://example.org/d.jsonld","media_type":"Application/LD+JSON; profile=x"},{"variant_url":"javascript:alert(1)","media_type":"text/html"},{"variant_url":"https://example.org/d.json","media_type":"application/json"}]}`
	extra := []handlev.Record{
		{Handle: tExtra + "/derived", Values: []handlev.Value{sv(1, "URL", "https://example.org/landing"), sv(14, "RESOURCE", plain)}},
		{Handle: tExtra + "/private-first", Values: []handlev.Value{sv(1, "URL", "https://example.org/landing"), private, sv(15, "RESOURCE", plain)}},
		{Handle: tExtra + "/bad-resource", Values: []handlev.Value{sv(1, "URL", "https://example.org/landing"), sv(14, "RESOURCE", `{"label":`)}},
	}
	err := f.db.Update(func(tx *store.Tx) error {
		for _, r := range extra {
			key, _, err := f.namer.Key(r.Handle)
			if err != nil {
				return err
			}
			if err := tx.PutRecord(key, &store.Stored{Record: r, Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := func(src cache.Source) (*Server, *cache.Cache) {
		c, err := cache.New(cache.Config{Source: src, Alt: f.namer.AppendAltKey, Render: Render})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Cache: c, Namer: f.namer, PublicURL: tPublicURL})
		if err != nil {
			t.Fatal(err)
		}
		return s, c
	}
	derived, dc := srv(f.db)
	parsed, _ := srv(parsingSource{f.db})
	if _, ok := cache.Source(f.db).(cache.DerivedSource); !ok {
		t.Fatal("the store is not a cache.DerivedSource")
	}
	answer := func(s *Server, target, accept string) []byte {
		var req fasthttp.Request
		req.Header.SetRequestURI(target)
		req.Header.SetHost("resolver.test")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, memAddr, nil)
		s.Handler(&ctx)
		// The clock's headers may differ between the two answers.
		var out []byte
		for line := range bytes.Lines([]byte(ctx.Response.String())) {
			if !bytes.HasPrefix(line, []byte("Date: ")) && !bytes.HasPrefix(line, []byte("Expires: ")) {
				out = append(out, line...)
			}
		}
		return out
	}
	used := 0
	for _, r := range append(testRecords(), extra...) {
		if r.Handle == tExtra+"/weighted" {
			continue // a weighted random choice: two requests may differ
		}
		for _, target := range []string{"/" + r.Handle, "/api/linksets/" + r.Handle, "/api/linksets/" + r.Handle + "?format=linkset"} {
			for _, accept := range []string{"", "text/turtle", "application/ld+json, text/turtle;q=0.5", "application/linkset+json"} {
				got, want := answer(derived, target, accept), answer(parsed, target, accept)
				if !bytes.Equal(got, want) {
					t.Errorf("GET %s (Accept %q) from the derived part:\n%s\nparsing the record:\n%s", target, accept, got, want)
				}
			}
		}
		key, _, err := f.namer.Key(r.Handle)
		if err != nil {
			t.Fatal(err)
		}
		e, err := dc.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if e.Found && e.Derived != nil {
			for i := range e.Public.Values {
				if _, _, known := e.Derived.Resource(&e.Public.Values[i], nil); known {
					used++
				}
			}
		}
	}
	if used == 0 {
		t.Fatal("no fixture entry had a derived RESOURCE part to answer from")
	}
}

// TestUnadmittedEntryLinks: an entry the cache does not hold answers with
// the same Link fields as one it holds, without keeping a rendition of
// them that no later request would use.
func TestUnadmittedEntryLinks(t *testing.T) {
	f := newFixture(t, nil)
	// A budget below any entry's size: no entry stays.
	c, err := cache.New(cache.Config{Source: f.db, Alt: f.namer.AppendAltKey, Render: Render, Bytes: 1, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Cache: c, Namer: f.namer, PublicURL: tPublicURL})
	if err != nil {
		t.Fatal(err)
	}
	links := func(srv *Server, target string) string {
		var req fasthttp.Request
		req.Header.SetRequestURI(target)
		req.Header.SetHost("resolver.test")
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, memAddr, nil)
		srv.Handler(&ctx)
		var out []string
		for _, v := range ctx.Response.Header.PeekAll("Link") {
			out = append(out, string(v))
		}
		if len(out) == 0 {
			t.Fatalf("GET %s: no Link field", target)
		}
		return strings.Join(out, "\n")
	}
	for range 3 { // the doorkeeper sees the key again each time
		if got, want := links(s, "/"+tHandle), links(f.srv, "/"+tHandle); got != want {
			t.Fatalf("Link fields of an entry not in the cache:\n%s\nof a cached one:\n%s", got, want)
		}
	}
	key, _, err := f.namer.Key(tHandle)
	if err != nil {
		t.Fatal(err)
	}
	rendition := func(c *cache.Cache, srv *Server) (*rendition, bool) {
		e, err := c.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		v := e.View.(*view)
		return srv.rendered(v, v.ext()), e.Resident()
	}
	if r, resident := rendition(c, s); resident || r != nil {
		t.Errorf("entry outside the cache: resident %v, rendition %v; want false, nil", resident, r != nil)
	}
	if r, resident := rendition(f.cache, f.srv); !resident || r == nil {
		t.Errorf("cached entry: resident %v, rendition %v; want true, built", resident, r != nil)
	}
}
