//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation counts
// are only meaningful without it.

package resolver

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// hotPaths are the cache-hit requests that must allocate nothing (docs/architecture.md
// practice 6), with the status and a piece of the response each must give.
var hotPaths = []struct {
	name, target string
	status       int
	want         string
	accept       string // Accept header, none if empty
}{
	{"redirect", "/" + tHandle, 302, `Link: <https://hdl.handle.net/` + tHandle + `>; rel="cite-as"`, ""},
	{"redirect short form lower case", "/" + strings.ToLower(tPrefix+"/"+tNS+"/"+tID), 302, "Location: https://landing.example.org/item/42", ""},
	{"noredirect", "/" + tHandle + "?noredirect", 200, "Handle Values for: " + tHandle, ""},
	{"tombstone", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, "IS_OBSOLETED_BY", ""},
	{"api", "/api/handles/" + tHandle, 200, `{"responseCode":1,"handle":"` + tHandle + `","values":[`, ""},
	{"negotiated redirect", "/" + tHandle, 303, "Location: https://example.org/resource", "text/turtle, */*;q=0.1"},
	{"browser redirect", "/" + tHandle, 302, "Vary: Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
	{"location redirect", "/" + tExtra + "/loc", 302, "Location: https://eu.example.org/item", ""},
	{"location by locatt", "/" + tExtra + "/loc?locatt=country:us", 302, "Location: https://us.example.org/item", ""},
	{"weighted location", "/" + tExtra + "/weighted", 302, "Location: https://w", ""},
	{"redirect with links and headers", "/" + tExtra + "/links", 302, `rel="author"`, ""},
	{"linkset", "/api/linksets/" + tHandle, 200, `{"linkset":[{"anchor":"`, ""},
	{"linkset text", "/api/linksets/" + tHandle, 200, `; rel="cite-as"; anchor="`, "application/linkset"},
	{"showurls", "/" + tExtra + "/loc?action=showurls", 200, "Locations for: " + tExtra + "/loc", ""},
}

// TestAllocationServeConn serves whole HTTP requests through Server.ServeConn's
// fasthttp machinery on an in-memory connection and requires zero allocations
// per request on the cache-hit paths.
func TestAllocationServeConn(t *testing.T) {
	f := newFixture(t, nil)
	f.settle(t)
	for _, tc := range hotPaths {
		t.Run(tc.name, func(t *testing.T) {
			req := "GET " + tc.target + " HTTP/1.1\r\nHost: resolver.test\r\nUser-Agent: alloc-test\r\n"
			if tc.accept != "" {
				req += "Accept: " + tc.accept + "\r\n"
			}
			req += "\r\n"
			c := &memConn{}
			c.r.Grow(4096)
			c.w.Grow(1 << 16)
			serve := func() {
				c.r.WriteString(req)
				c.w.Reset()
				if err := f.srv.srv.ServeConn(c); err != nil {
					t.Fatal(err)
				}
			}
			serve() // load the record into the cache
			resp := c.w.String()
			if !strings.HasPrefix(resp, "HTTP/1.1 "+itoa(tc.status)) || !strings.Contains(resp, tc.want) {
				t.Fatalf("GET %s:\n%.600s\nwant status %d and %q", tc.target, resp, tc.status, tc.want)
			}
			if n := testing.AllocsPerRun(1000, serve); n != 0 {
				t.Errorf("GET %s: %v allocations per request, want 0", tc.target, n)
			}
			checkTotalAllocs(t, tc.target, serve)
		})
	}
}

// TestAllocationHandler calls Server.Handler directly on a reused RequestCtx.
func TestAllocationHandler(t *testing.T) {
	checkHandlerAllocs(t, newFixture(t, nil))
}

// checkHandlerAllocs asserts that every hot path of f's server, called through
// Server.Handler on a reused RequestCtx, allocates nothing once warm.
func checkHandlerAllocs(t *testing.T, f *fixture) {
	t.Helper()
	f.settle(t)
	for _, tc := range hotPaths {
		t.Run(tc.name, func(t *testing.T) {
			var req fasthttp.Request
			req.Header.SetRequestURI(tc.target)
			req.Header.SetHost("resolver.test")
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, memAddr, nil)
			run := func() {
				ctx.Response.Reset()
				f.srv.Handler(&ctx)
			}
			run()
			if ctx.Response.StatusCode() != tc.status {
				t.Fatalf("GET %s: status %d, want %d", tc.target, ctx.Response.StatusCode(), tc.status)
			}
			if n := testing.AllocsPerRun(1000, run); n != 0 {
				t.Errorf("GET %s: %v allocations per request, want 0", tc.target, n)
			}
			checkTotalAllocs(t, tc.target, run)
		})
	}
}

// settle waits until the fixture's store has written its freelist
// checkpoint (store.DB.FreelistSyncs), which it does once it has been idle
// for a second after the fixture's writes: that commit allocates, and must
// not fall into a count of the handler's allocations.
func (f *fixture) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.db.FreelistSyncs() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the store wrote no freelist checkpoint within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkTotalAllocs catches amortised allocations that AllocsPerRun's integer
// average hides (a buffer that grows every few requests): 10000 requests may
// allocate at most 20 times in total. The count is process-wide, so it
// includes background work (the cached Expires date re-formatted when the
// second changes, fasthttp's and the runtime's housekeeping); an amortised
// per-request allocation shows up in the hundreds. It runs on one P: sync.Pool keeps an item in a
// per-P slot, so on a loaded machine a goroutine that migrates between Ps
// misses its pools and allocates; that is the runtime's cost, not the
// handler's. The message gives the collections that ran during the count.
func checkTotalAllocs(t *testing.T, target string, fn func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// A collection the set-up started must not end inside the count: at
	// each one sync.Pool drops items, and refilling them is not the
	// handler's allocation.
	runtime.GC()
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10000 {
		fn()
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > 20 {
		t.Errorf("GET %s: %d allocations in 10000 requests, want at most 20 (%d GC)", target, n, after.NumGC-before.NumGC)
	}
}
