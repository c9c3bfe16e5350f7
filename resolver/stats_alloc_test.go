//go:build !race

package resolver

import (
	"testing"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
)

// TestAllocationCountedAndLimited: the hot paths stay allocation-free with
// resolution counting and the per-address rate limit on.
func TestAllocationCountedAndLimited(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Counter = cache.NewCounter(0); c.RateLimit = 1e12 })
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
				t.Errorf("GET %s with counting and rate limit: %v allocations per request, want 0", tc.target, n)
			}
		})
	}
}
