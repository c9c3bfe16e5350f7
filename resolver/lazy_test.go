package resolver

import (
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestLazyViewsConcurrent: the parts of a view built on first use (the
// ?noredirect page, the tombstone, the reserved page, the API JSON, the
// extras, the linksets, the showurls page) are built
// by whichever concurrent first request gets there and every request gets the
// same bytes, also while the entry is invalidated and reloaded underneath
// (the race detector checks the publication).
func TestLazyViewsConcurrent(t *testing.T) {
	f := newFixture(t, nil)
	targets := []string{
		"/" + tHandle + "?noredirect",
		"/" + tTestPrefix + "/svc/" + tNS + "/OLD1",
		"/" + tTestPrefix + "/svc/" + tNS + "/NEW1",
		"/api/handles/" + tHandle,
		"/api/handles/" + tExtra + "/mixed",
		"/" + tHandle,
		"/api/linksets/" + tHandle,
		"/" + tExtra + "/loc?action=showurls",
		"/" + tExtra + "/loc",
		"/api/linksets/" + tExtra + "/links",
	}
	want := make([]string, len(targets))
	for i, target := range targets {
		r := f.get(t, target)
		want[i] = itoa(r.StatusCode()) + " " + string(r.Body())
	}
	keys := []string{f.key(t, tHandle), f.key(t, tTestPrefix+"/svc/"+tNS+"/OLD1"), f.key(t, tExtra+"/mixed"), f.key(t, tExtra+"/loc"), f.key(t, tExtra+"/links")}
	for round := range 20 {
		for _, k := range keys {
			f.cache.Invalidate(k) // fresh entries: the next requests build the parts again
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for j := range targets {
					i := (g + j) % len(targets)
					var req fasthttp.Request
					req.Header.SetRequestURI(targets[i])
					req.Header.SetHost("resolver.test")
					var ctx fasthttp.RequestCtx
					ctx.Init(&req, memAddr, nil)
					f.srv.Handler(&ctx)
					if got := itoa(ctx.Response.StatusCode()) + " " + string(ctx.Response.Body()); got != want[i] {
						t.Errorf("round %d GET %s:\n%.300s\nwant\n%.300s", round, targets[i], got, want[i])
					}
				}
			})
		}
		wg.Wait()
	}
	if !strings.Contains(want[1], "Gone") || !strings.HasPrefix(want[2], "404 ") || !strings.HasPrefix(want[3], "200 {") {
		t.Errorf("unexpected fixture answers: %.80q", want)
	}
}
