package resolver

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// tcpFixture is newFixture's server also serving a real listener on
// 127.0.0.1; it returns the listener's address.
func tcpFixture(t *testing.T, mod func(*Config)) string {
	t.Helper()
	f := newFixture(t, mod)
	ln := newTCPListener(t)
	go f.srv.Serve(ln) //nolint:errcheck // returns when the listener closes
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

const healthz = "GET /healthz HTTP/1.1\r\nHost: resolver.test\r\n\r\n"

// keepAlive dials addr and completes one request on the connection, leaving it
// open (keep-alive) and so holding one of the server's connection slots.
func keepAlive(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	if code := exchange(t, c, br, healthz); code != 200 {
		t.Fatalf("keep-alive request: %d", code)
	}
	return c, br
}

func exchange(t *testing.T, c net.Conn, br *bufio.Reader, req string) int {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return resp.StatusCode()
}

// TestMaxConns: with MaxConns 2 and two keep-alive connections open, a third
// connection is answered 503 and closed without being served; once one of the
// two closes, a new connection is served again.
func TestMaxConns(t *testing.T) {
	addr := tcpFixture(t, func(c *Config) { c.MaxConns = 2; c.IdleTimeout = time.Hour; c.ReadTimeout = time.Hour })
	c1, _ := keepAlive(t, addr)
	keepAlive(t, addr)

	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	c3.SetDeadline(time.Now().Add(10 * time.Second))
	// The server writes its 503 and closes as soon as it accepts, without
	// reading: sending nothing keeps the close a clean FIN (unread request
	// bytes would turn it into a reset).
	all, err := io.ReadAll(c3)
	if err != nil {
		t.Fatalf("third connection: %v after %q", err, all)
	}
	if !strings.HasPrefix(string(all), "HTTP/1.1 503 ") || !strings.Contains(string(all), "Concurrency limit") {
		t.Fatalf("third connection got %q, want a 503 for the connection limit", all)
	}

	c1.Close()
	// The slot frees when the server notices c1's close: retry, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, healthz)
		var resp fasthttp.Response
		err = resp.Read(bufio.NewReader(c))
		c.Close()
		if err == nil && resp.StatusCode() == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection served within 10s of freeing a slot: %v %d", err, resp.StatusCode())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIdleTimeout: a keep-alive connection left idle is closed by the server
// once IdleTimeout has passed (ReadTimeout is an hour, so it is IdleTimeout
// that closes it); with a long IdleTimeout the same connection, idle for
// several times the short one, still carries a second request.
func TestIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	short := tcpFixture(t, func(c *Config) { c.IdleTimeout = idle; c.ReadTimeout = time.Hour })
	// Taken before the request: the server's idle clock starts after it, so
	// the close cannot come sooner than idle after this, however loaded the
	// machine.
	start := time.Now()
	c, br := keepAlive(t, short)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if n, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v %v, want EOF (closed by the server)", n, err)
	}
	if el := time.Since(start); el < idle {
		t.Errorf("closed %v after the response, before IdleTimeout %v", el, idle)
	}

	long := tcpFixture(t, func(c *Config) { c.IdleTimeout = time.Hour; c.ReadTimeout = time.Hour })
	c, br = keepAlive(t, long)
	time.Sleep(5 * idle)
	if code := exchange(t, c, br, healthz); code != 200 {
		t.Errorf("second request after %v idle: %d", 5*idle, code)
	}
}
