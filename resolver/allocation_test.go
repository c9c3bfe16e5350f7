//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation counts
// are only meaningful without it.

package resolver

import (
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// hotPaths are the cache-hit requests that must allocate nothing (docs/architecture.md
// practice 6), with the status and a piece of the response each must give.
var hotPaths = []struct {
	name, target string
	status       int
	want         string
}{
	{"redirect", "/" + tHandle, 302, "Location: https://landing.example.org/item/42"},
	{"redirect short form lower case", "/" + strings.ToLower(tPrefix+"/"+tNS+"/"+tID), 302, "Location: https://landing.example.org/item/42"},
	{"noredirect", "/" + tHandle + "?noredirect", 200, "Handle Values for: " + tHandle},
	{"tombstone", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, "IS_OBSOLETED_BY"},
	{"api", "/api/handles/" + tHandle, 200, `{"responseCode":1,"handle":"` + tHandle + `","values":[`},
}

// TestAllocationServeConn serves whole HTTP requests through Server.ServeConn's
// fasthttp machinery on an in-memory connection and requires zero allocations
// per request on the cache-hit paths.
func TestAllocationServeConn(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range hotPaths {
		t.Run(tc.name, func(t *testing.T) {
			req := "GET " + tc.target + " HTTP/1.1\r\nHost: resolver.test\r\nUser-Agent: alloc-test\r\n\r\n"
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
	for _, tc := range hotPaths {
		t.Run(tc.name, func(t *testing.T) {
			var req fasthttp.Request
			req.Header.SetRequestURI(tc.target)
			req.Header.SetHost("resolver.test")
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

// checkTotalAllocs catches amortised allocations that AllocsPerRun's integer
// average hides (a buffer that grows every few requests): 10000 requests may
// allocate at most 20 times in total. The count is process-wide, so it
// includes background work (the cached Expires date re-formatted when the
// second changes, fasthttp's and the runtime's housekeeping); an amortised
// per-request allocation shows up in the hundreds. It runs on one P: sync.Pool keeps an item in a
// per-P slot, so on a loaded machine a goroutine that migrates between Ps
// misses its pools and allocates; that is the runtime's cost, not the
// handler's.
func checkTotalAllocs(t *testing.T, target string, fn func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10000 {
		fn()
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > 20 {
		t.Errorf("GET %s: %d allocations in 10000 requests, want at most 20", target, n)
	}
}
