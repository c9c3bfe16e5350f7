package resolver

import (
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// benchHandler measures Server.Handler on a reused RequestCtx (cache hit).
// headers are "Name: value" request headers.
func benchHandler(b *testing.B, method, target string, status int, headers ...string) {
	f := newFixture(b, nil)
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.Header.SetRequestURI(target)
	req.Header.SetHost("resolver.test")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, memAddr, nil)
	f.srv.Handler(&ctx)
	if ctx.Response.StatusCode() != status {
		b.Fatalf("%s %s: status %d, want %d", method, target, ctx.Response.StatusCode(), status)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ctx.Response.Reset()
		f.srv.Handler(&ctx)
	}
}

func BenchmarkRedirect(b *testing.B) { benchHandler(b, "GET", "/"+tHandle, 302) }
func BenchmarkRedirectAlt(b *testing.B) {
	benchHandler(b, "GET", "/"+strings.ToLower(tPrefix+"/"+tNS+"/"+tID), 302)
}
func BenchmarkRedirectURLAppend(b *testing.B) {
	benchHandler(b, "GET", "/"+tHandle+"?urlappend=%2Fsub%3Fq%3D1", 302)
}
func BenchmarkRedirectTyped(b *testing.B) {
	benchHandler(b, "GET", "/"+tExtra+"/order?type=URL.mirror", 302)
}
func BenchmarkRedirectNegotiated(b *testing.B) {
	benchHandler(b, "GET", "/"+tHandle, 303, "Accept: text/turtle, */*;q=0.1")
}
func BenchmarkRedirectBrowser(b *testing.B) {
	benchHandler(b, "GET", "/"+tHandle, 302, "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
}
func BenchmarkRedirectLocation(b *testing.B) { benchHandler(b, "GET", "/"+tExtra+"/weighted", 302) }
func BenchmarkRedirectLinksHeaders(b *testing.B) {
	benchHandler(b, "GET", "/"+tExtra+"/links", 302)
}
func BenchmarkLinkset(b *testing.B)    { benchHandler(b, "GET", "/api/linksets/"+tHandle, 200) }
func BenchmarkNoRedirect(b *testing.B) { benchHandler(b, "GET", "/"+tHandle+"?noredirect", 200) }
func BenchmarkTombstone(b *testing.B) {
	benchHandler(b, "GET", "/"+tTestPrefix+"/svc/"+tNS+"/OLD1", 410)
}
func BenchmarkNotFound(b *testing.B) { benchHandler(b, "GET", "/"+tPrefix+"/svc/K7Q/NOPE", 404) }
func BenchmarkAPI(b *testing.B)      { benchHandler(b, "GET", "/api/handles/"+tHandle, 200) }
func BenchmarkAPIFiltered(b *testing.B) {
	benchHandler(b, "GET", "/api/handles/"+tHandle+"?type=URL&index=100", 200)
}
func BenchmarkAPIPretty(b *testing.B) { benchHandler(b, "GET", "/api/handles/"+tHandle+"?pretty", 200) }
func BenchmarkAPIJSONP(b *testing.B) {
	benchHandler(b, "GET", "/api/handles/"+tHandle+"?callback=cb", 200)
}
func BenchmarkAPINotFound(b *testing.B) {
	benchHandler(b, "GET", "/api/handles/"+tPrefix+"/svc/K7Q/NOPE", 404)
}

// BenchmarkRedirectParallel: the redirect hit path on every core.
func BenchmarkRedirectParallel(b *testing.B) {
	f := newFixture(b, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var req fasthttp.Request
		req.Header.SetRequestURI("/" + tHandle)
		req.Header.SetHost("resolver.test")
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, memAddr, nil)
		for pb.Next() {
			ctx.Response.Reset()
			f.srv.Handler(&ctx)
		}
	})
}

// benchServeConn: a whole HTTP/1.1 request parsed and answered by fasthttp
// on an in-memory connection (headers written, body copied to the
// connection's buffer): the server's user-space cost of one request, without
// the kernel's.
func benchServeConn(b *testing.B, target string, status int, headers ...string) {
	f := newFixture(b, nil)
	req := "GET " + target + " HTTP/1.1\r\nHost: resolver.test\r\nUser-Agent: bench\r\n"
	for _, h := range headers {
		req += h + "\r\n"
	}
	req += "\r\n"
	c := &memConn{}
	c.r.Grow(4096)
	c.w.Grow(1 << 16)
	c.r.WriteString(req)
	if err := f.srv.srv.ServeConn(c); err != nil {
		b.Fatal(err)
	}
	if want := "HTTP/1.1 " + strconv.Itoa(status) + " "; !strings.HasPrefix(c.w.String(), want) {
		b.Fatalf("GET %s: response %.40q, want %q", target, c.w.String(), want)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.r.WriteString(req)
		c.w.Reset()
		if err := f.srv.srv.ServeConn(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.w.Len()), "resp-bytes")
}

func BenchmarkServeConnRedirect(b *testing.B)   { benchServeConn(b, "/"+tHandle, 302) }
func BenchmarkServeConnNoRedirect(b *testing.B) { benchServeConn(b, "/"+tHandle+"?noredirect", 200) }
func BenchmarkServeConnAPI(b *testing.B)        { benchServeConn(b, "/api/handles/"+tHandle, 200) }
func BenchmarkServeConnNegotiated(b *testing.B) {
	benchServeConn(b, "/"+tHandle, 303, "Accept: text/turtle, */*;q=0.1")
}
func BenchmarkServeConnLinkset(b *testing.B) { benchServeConn(b, "/api/linksets/"+tHandle, 200) }

// BenchmarkLoopbackRedirects serves over a real TCP listener on 127.0.0.1 and
// drives it with a fasthttp.Client over many keep-alive connections; it
// reports redirects per second (redirects/s). The client runs in the same
// process and shares the CPUs, so the figure is a lower bound for the server.
//
//	go test ./resolver -run '^$' -bench LoopbackRedirects -benchtime 5s
func BenchmarkLoopbackRedirects(b *testing.B) {
	f := newFixture(b, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go f.srv.Serve(ln) //nolint:errcheck // stopped by Shutdown below
	defer f.srv.Shutdown(b.Context())
	const conns = 128
	c := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: conns, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/" + tHandle
	var bad atomic.Int64
	b.SetParallelism(conns / max(1, runtimeGOMAXPROCS()))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(url)
		for pb.Next() {
			if err := c.Do(req, resp); err != nil || resp.StatusCode() != 302 {
				bad.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if n := bad.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "redirects/s")
}

func runtimeGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }
