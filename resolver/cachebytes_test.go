package resolver

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// sizedRecords are n records of very different sizes: one value, the
// pid4cat layout, and the layout with a change log of up to 64 KiB; some are
// tombstoned or reserved, so that every page a view builds on first use is
// built.
func sizedRecords(n int) []handlev.Record {
	statuses := []string{"REGISTERED", "OBSOLETED", "SUBMITTED", "DEPRECATED"}
	logs := []int{0, 200, 3 << 10, 16 << 10, 64 << 10}
	recs := make([]handlev.Record, n)
	for i := range recs {
		h := fmt.Sprintf("%s/R%06d", tExtra, i)
		url := fmt.Sprintf("https://landing.example.org/item/%d?x=<%d>", i, i)
		switch i % 3 {
		case 0:
			recs[i] = handlev.Record{Handle: h, Values: []handlev.Value{sv(1, "URL", url)}}
		default:
			var extra []handlev.Value
			if l := logs[i%len(logs)]; l > 0 {
				extra = append(extra, sv(20, "CHANGES", string(bytes.Repeat([]byte("2026-11-23 edited; "), l/19+1))[:l]))
			}
			recs[i] = pid4cat(h, url, statuses[i%len(statuses)], extra...)
		}
		// Some records carry locations, links and headers, so that the
		// extras and the showurls page are more than their empty forms.
		if i%7 == 0 {
			recs[i].Values = append(recs[i].Values, sv(30, handlev.TypeLoc, fmt.Sprintf(
				`<locations><location href="https://a.example.org/%d" weight="1" country="de"/><location href="https://b.example.org/%d" media-type="text/turtle" role="metadata"/></locations>`, i, i)))
		}
		if i%5 == 0 {
			recs[i].Values = append(recs[i].Values,
				sv(31, handlev.TypeLinks, fmt.Sprintf(`<https://example.org/author/%d>; rel="author", <https://example.org/x/%d.jsonld>; rel="alternate"; type="application/ld+json"`, i, i)),
				sv(32, handlev.TypeHeaders, "X-Robots-Tag: noindex\nSet-Cookie: a=1"))
		}
	}
	return recs
}

func sizedStore(t testing.TB, namer *handlev.Namer, recs []handlev.Record) *store.DB {
	t.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *store.Tx) error {
		for i := range recs {
			key, _, err := namer.Key(recs[i].Handle)
			if err != nil {
				return err
			}
			if err := tx.PutRecord(key, &store.Stored{Record: recs[i], Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// buildAll gets key and builds every part of its view a request can ask for:
// the redirect (at load), the ?noredirect page, the status page, the JSON,
// the wire encoding, the extras, their rendition for srv and the showurls
// page.
func buildAll(t *testing.T, c *cache.Cache, srv *Server, key string) {
	t.Helper()
	e, err := c.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := e.View.(*view)
	if !ok {
		t.Fatalf("%s: no view", key)
	}
	v.valuesPage()
	v.statusPage()
	v.json()
	e.WireBytes()
	srv.rendered(v, v.ext())
	v.linksets(v.ext())
	v.urlsPage()
}

// budgetServer is a resolver over c, for the parts of a view that are
// rendered for a server.
func budgetServer(t *testing.T, c *cache.Cache, namer *handlev.Namer) *Server {
	t.Helper()
	srv, err := New(Config{Cache: c, Namer: namer, PublicURL: tPublicURL})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestCacheBudgetWithViews fills a cache whose budget holds a fraction of the
// records, builds every view part through Render and the view's own builders,
// and checks after every step that the charged total stays within the budget.
func TestCacheBudgetWithViews(t *testing.T) {
	namer := newNamer(t)
	recs := sizedRecords(600)
	db := sizedStore(t, namer, recs)
	const budget = 3 << 20
	c, err := cache.New(cache.Config{Source: db, Alt: namer.AppendAltKey, Render: Render, Bytes: budget, Shards: 8, Entries: cache.NoEntryCap})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(recs))
	for i := range recs {
		keys[i], _, _ = namer.Key(recs[i].Handle)
	}
	srv := budgetServer(t, c, namer)
	for round := range 2 {
		for i, k := range keys {
			buildAll(t, c, srv, k)
			if u := c.Usage(); u.Bytes > budget {
				t.Fatalf("round %d, record %d: charged %d B over the budget %d B", round, i, u.Bytes, budget)
			}
		}
	}
	u := c.Usage()
	t.Logf("%+v", u)
	if u.EvictedBytes == 0 || u.Entries == 0 {
		t.Errorf("Usage = %+v: want a full cache that evicted by bytes", u)
	}
}

// TestCacheChargeMatchesHeapWithViews checks that what a cache of fully built
// views is charged is within 10 % of the heap it grew by.
func TestCacheChargeMatchesHeapWithViews(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a cache of tens of megabytes")
	}
	namer := newNamer(t)
	recs := sizedRecords(3000)
	db := sizedStore(t, namer, recs)
	keys := make([]string, len(recs))
	for i := range recs {
		keys[i], _, _ = namer.Key(recs[i].Handle)
	}
	recs = nil
	c, err := cache.New(cache.Config{Source: db, Alt: namer.AppendAltKey, Render: Render, Bytes: 1 << 40, Entries: cache.NoEntryCap})
	if err != nil {
		t.Fatal(err)
	}
	srv := budgetServer(t, c, namer)
	// Warm the store's and the renderers' own one-time memory first.
	buildAll(t, c, srv, keys[0])
	c.InvalidateAll()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for _, k := range keys {
		buildAll(t, c, srv, k)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	grown := int64(m1.HeapInuse) - int64(m0.HeapInuse)
	u := c.Usage()
	ratio := float64(u.Bytes) / float64(grown)
	t.Logf("%d entries: charged %d B, heap grew %d B: ratio %.3f", u.Entries, u.Bytes, grown, ratio)
	if ratio < 0.9 || ratio > 1.1 {
		t.Errorf("charged %d B, heap grew %d B: ratio %.3f outside [0.9, 1.1]", u.Bytes, grown, ratio)
	}
	runtime.KeepAlive(c)
}
