package main

import (
	"bufio"
	"bytes"
	"net"
	"strings"
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

// The response reader must find where each response ends whatever the
// server's header spelling, so that the next response on the connection is
// read from its first byte.
func TestReadResponse(t *testing.T) {
	stream := "HTTP/1.1 302 Moved Temporarily\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 5\r\nLocation: https://example.org/\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 404 Not Found\r\nCONTENT-LENGTH:3\r\nConnection: close\r\n\r\nabc" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(stream))
	want := []struct {
		status int
		keep   bool
	}{{302, true}, {200, true}, {204, true}, {404, false}}
	for i, w := range want {
		status, keep, err := readResponse(br)
		if err != nil || status != w.status || keep != w.keep {
			t.Fatalf("response %d: %d, keep %v, %v; want %d, keep %v", i, status, keep, err, w.status, w.keep)
		}
	}
	if _, _, err := readResponse(br); err != errChunked {
		t.Fatalf("chunked response: err %v, want errChunked", err)
	}
}

// A server that closes after each response costs a new connection per
// request, but every request is still answered.
func TestRunReconnects(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetConnectionClose()
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown() })
	r := run(ln.Addr().String(), [][]byte{[]byte("/c")}, 200, 250*time.Millisecond, 2*time.Second, 2, 1)
	if r.Completed != 50 || r.Errors != 0 || r.Status[204] != 50 {
		t.Fatalf("run: %+v; want 50 × 204 and no errors", r)
	}
}

func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 302 Found\r\nContent-Length: 2\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody"))
	f.Add([]byte("HTTP/1.0 1x0 OK\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		status, _, err := readResponse(bufio.NewReader(bytes.NewReader(b)))
		if err == nil && (status < 100 || status > 999) {
			t.Fatalf("accepted status %d", status)
		}
	})
}
