package resolver

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
)

func TestResolutionCounting(t *testing.T) {
	counter := cache.NewCounter(0)
	f := newFixture(t, func(c *Config) { c.Counter = counter })
	for _, target := range []string{
		"/" + tHandle, "/" + strings.ToLower(tPrefix+"/"+tNS+"/"+tID), // both forms count for the one record
		"/" + tHandle + "?noredirect", "/api/handles/" + tHandle,
		"/" + tPrefix + "/svc/K7Q/NOPE", "/api/handles/" + tPrefix + "/svc/K7Q/NOPE", // not found: not counted
		"/healthz",
	} {
		f.get(t, target)
	}
	got := map[string]uint64{}
	counter.Drain(func(k string, n uint64) { got[k] += n })
	want := f.key(t, tHandle)
	if len(got) != 1 || got[want] != 4 {
		t.Errorf("counted %v, want {%s: 4}", got, want)
	}
	res := map[string]uint64{}
	f.srv.EachResolution(func(kind, result string, n uint64) { res[kind+"/"+result] = n })
	for k, n := range map[string]uint64{"redirect/found": 2, "noredirect/found": 1, "api/found": 1, "redirect/not_found": 1, "api/not_found": 1, "redirect/limited": 0} {
		if res[k] != n {
			t.Errorf("resolutions %s = %d, want %d", k, res[k], n)
		}
	}
}

func TestRateLimitPerAddress(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.RateLimit = 1; c.RateBurst = 3 })
	statuses := ""
	for range 5 {
		r := f.get(t, "/"+tHandle)
		statuses += itoa(r.StatusCode()) + " "
		if r.StatusCode() == 429 {
			if ra := string(r.Header.Peek("Retry-After")); ra != "1" {
				t.Errorf("Retry-After %q, want 1", ra)
			}
		}
	}
	if statuses != "302 302 302 429 429 " {
		t.Errorf("statuses %s, want three redirects (the burst) then 429", statuses)
	}
	if r := f.get(t, "/healthz"); r.StatusCode() != 200 {
		t.Errorf("/healthz limited: %d", r.StatusCode())
	}
	if n := f.srv.stats.rateLimited.Load(); n != 2 {
		t.Errorf("rate limited = %d, want 2", n)
	}
	if _, err := New(Config{Cache: f.cache, Namer: f.namer, RateLimit: -1}); err == nil {
		t.Error("negative RateLimit accepted")
	}
}

// TestClientLimiter: a client at its rate is never limited while another
// floods; the flood passes rate×time+burst; IPv6 /64s share a bucket.
func TestClientLimiter(t *testing.T) {
	const rate, burst = 10, 5
	l := newClientLimiter(rate, burst, 0)
	polite, flood := net.ParseIP("192.0.2.1"), net.ParseIP("192.0.2.2")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	passed := 0
	const ticks = 600 // 60 s at 10/s
	for i := range ticks {
		now := start + int64(i)*int64(time.Second)/rate
		if ok, _ := l.allow(polite, now); !ok {
			t.Fatalf("tick %d: client at its rate limited", i)
		}
		for range 3 {
			if ok, wait := l.allow(flood, now); ok {
				passed++
			} else if wait < 1 {
				t.Fatalf("wait %d", wait)
			}
		}
	}
	if want := ticks + burst; passed < want-1 || passed > want+1 {
		t.Errorf("flood passed %d, want about %d", passed, want)
	}
	a, b := net.ParseIP("2001:db8:1:2::1"), net.ParseIP("2001:db8:1:2:ffff::9")
	if keyOf(a) != keyOf(b) || keyOf(a) == keyOf(net.ParseIP("2001:db8:1:3::1")) {
		t.Error("IPv6 addresses are not grouped by /64")
	}
}

func TestClientLimiterBounded(t *testing.T) {
	l := newClientLimiter(1, 1, 256)
	now := time.Now().UnixNano()
	for i := range 100000 {
		ip := net.IPv4(10, byte(i>>16), byte(i>>8), byte(i))
		l.allow(ip, now)
	}
	if n := l.len(); n > 256 {
		t.Errorf("%d addresses held, bound 256", n)
	}
}

// benchCounted is the redirect hit path with the resolution counter (and,
// for the second figure, the per-address limiter) on.
func benchCounted(b *testing.B, mod func(*Config)) {
	f := newFixture(b, mod)
	var req fasthttp.Request
	req.Header.SetRequestURI("/" + tHandle)
	req.Header.SetHost("resolver.test")
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, memAddr, nil)
	f.srv.Handler(&ctx)
	if ctx.Response.StatusCode() != 302 {
		b.Fatalf("status %d", ctx.Response.StatusCode())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ctx.Response.Reset()
		f.srv.Handler(&ctx)
	}
}

// BenchmarkRedirectCounted against BenchmarkRedirect is the cost of
// resolution statistics on the hot path (the budget: under 5%).
func BenchmarkRedirectCounted(b *testing.B) {
	benchCounted(b, func(c *Config) { c.Counter = cache.NewCounter(0) })
}

// BenchmarkRedirectCountedLimited adds the per-address rate limit (with a
// rate no request reaches).
func BenchmarkRedirectCountedLimited(b *testing.B) {
	benchCounted(b, func(c *Config) { c.Counter = cache.NewCounter(0); c.RateLimit = 1e12 })
}

// BenchmarkRedirectCountingCost serves the redirect hit path alternately, in
// batches of 1000, from a server without statistics and one with a Counter
// (and one with the per-address limit as well), so that load changes on the
// machine hit all alike; it reports each one's ns per request and the cost
// of counting in percent (the budget: under 5%).
func BenchmarkRedirectCountingCost(b *testing.B) {
	type variant struct {
		name string
		mod  func(*Config)
		ctx  fasthttp.RequestCtx
		srv  *Server
		ns   time.Duration
	}
	vs := []*variant{
		{name: "plain"},
		{name: "counted", mod: func(c *Config) { c.Counter = cache.NewCounter(0) }},
		{name: "counted+limited", mod: func(c *Config) { c.Counter = cache.NewCounter(0); c.RateLimit = 1e12 }},
		{name: "plain again"}, // the noise floor: same as plain, served last
	}
	for _, v := range vs {
		f := newFixture(b, v.mod)
		v.srv = f.srv
		var req fasthttp.Request
		req.Header.SetRequestURI("/" + tHandle)
		req.Header.SetHost("resolver.test")
		v.ctx.Init(&req, memAddr, nil)
		v.srv.Handler(&v.ctx)
		if v.ctx.Response.StatusCode() != 302 {
			b.Fatalf("%s: status %d", v.name, v.ctx.Response.StatusCode())
		}
	}
	const batch = 1000
	// Thread CPU time, not wall time: on a shared machine the time this
	// thread waits for a core would otherwise swamp a few percent.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for ; n < b.N; n += batch {
		for _, v := range vs {
			start := threadCPU()
			for range batch {
				v.ctx.Response.Reset()
				v.srv.Handler(&v.ctx)
			}
			v.ns += threadCPU() - start
		}
	}
	per := func(v *variant) float64 { return float64(v.ns.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(vs[0]), "ns/plain")
	b.ReportMetric(per(vs[1]), "ns/counted")
	b.ReportMetric(per(vs[2]), "ns/counted+limited")
	b.ReportMetric(100*(per(vs[1])-per(vs[0]))/per(vs[0]), "%cost-counted")
	b.ReportMetric(100*(per(vs[2])-per(vs[0]))/per(vs[0]), "%cost-counted+limited")
	b.ReportMetric(100*(per(vs[3])-per(vs[0]))/per(vs[0]), "%noise-plain-again")
}
