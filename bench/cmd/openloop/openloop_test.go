package main

import (
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func serve(t *testing.T, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		time.Sleep(delay)
		ctx.Redirect("https://example.org/", fasthttp.StatusFound)
	}}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown() })
	return ln.Addr().String()
}

func TestRunSendsAtTheRate(t *testing.T) {
	addr := serve(t, 0)
	paths := [][]byte{[]byte("/a"), []byte("/b")}
	r := run(addr, paths, 500, 400*time.Millisecond, 2*time.Second, 4, 1)
	if r.Completed != 200 || r.Missed != 0 || r.Errors != 0 {
		t.Fatalf("run: completed %d, missed %d, errors %d; want 200, 0, 0", r.Completed, r.Missed, r.Errors)
	}
	if r.Status[302] != 200 {
		t.Fatalf("run: status counts %v, want 200 × 302", r.Status)
	}
}

// A server slower than the offered rate must show up as latency measured from
// the intended send time (queueing), not as a lower send rate.
func TestRunCountsQueueingDelay(t *testing.T) {
	addr := serve(t, 20*time.Millisecond)
	// 1 connection, 20 ms per request = 50/s capacity; offer 100/s for 300 ms.
	r := run(addr, [][]byte{[]byte("/x")}, 100, 300*time.Millisecond, 3*time.Second, 1, 1)
	if r.Completed != 30 {
		t.Fatalf("completed %d, want 30", r.Completed)
	}
	if p99 := r.Percentiles["p99"].(float64); p99 < 200 {
		t.Fatalf("p99 = %.1f ms; with a 2× overloaded server the last requests wait ≥ 250 ms", p99)
	}
}

func TestRunOnce(t *testing.T) {
	addr := serve(t, 0)
	paths := make([][]byte, 50)
	for i := range paths {
		paths[i] = []byte("/p")
	}
	r := runOnce(addr, paths, 8)
	if r.Status[302] != 50 || r.Errors != 0 {
		t.Fatalf("runOnce: %+v, want 50 × 302", r)
	}
}
