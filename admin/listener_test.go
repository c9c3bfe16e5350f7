package admin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveListener serves h through a Listener on 127.0.0.1:0 and returns it
// with its address; it is shut down at the end of the test.
func serveListener(t *testing.T, cfg ListenerConfig) (*Listener, string) {
	t.Helper()
	l, err := NewListener(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("Serve after Shutdown = %v, want nil", err)
		}
	})
	return l, ln.Addr().String()
}

// echoPath answers every request with its path, after reading its body.
var echoPath = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	io.WriteString(w, r.URL.Path)
})

// exchange writes raw on a new connection and reads responses until the
// server closes it (or 2 s pass): their bodies and whether each said
// Connection: close ("close" or "").
func exchange(t *testing.T, addr, raw string) (bodies, conn []string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return bodies, conn
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		bodies = append(bodies, string(b))
		// ReadResponse moves Connection: close into resp.Close.
		if resp.Close {
			conn = append(conn, "close")
		} else {
			conn = append(conn, "")
		}
	}
}

// TestListenerClosesAfterChunkedBody: a request whose body came chunked
// (with or without a Content-Length beside Transfer-Encoding) is answered
// with Connection: close and nothing after it on that connection is served,
// so a request smuggled behind the body never is; a request with a plain
// Content-Length body keeps the connection for the next one.
func TestListenerClosesAfterChunkedBody(t *testing.T) {
	_, addr := serveListener(t, ListenerConfig{Handler: echoPath})
	const next = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name       string
		req        string
		wantBodies []string
		wantConn   string
	}{
		{"chunked", "POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n" + next,
			[]string{"/first"}, "close"},
		{"Content-Length beside Transfer-Encoding", "POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]string{"/first"}, "close"},
		{"Content-Length only", "POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd" + next + "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			[]string{"/first", "/smuggled", "/last"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies, conn := exchange(t, addr, tc.req)
			if strings.Join(bodies, " ") != strings.Join(tc.wantBodies, " ") {
				t.Errorf("responses %q, want %q", bodies, tc.wantBodies)
			}
			if len(conn) > 0 && conn[0] != tc.wantConn {
				t.Errorf("first response Connection: %q, want %q", conn[0], tc.wantConn)
			}
		})
	}
}

// TestListenerDrain: after Drain every response closes its connection, while
// the listener still accepts new ones; before it, connections are kept.
func TestListenerDrain(t *testing.T) {
	l, addr := serveListener(t, ListenerConfig{Handler: echoPath})
	two := "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	if bodies, conn := exchange(t, addr, two); len(bodies) != 2 || conn[0] != "" {
		t.Fatalf("before Drain: responses %q, Connection %q; want both answered on one connection", bodies, conn)
	}
	l.Drain()
	for i := range 2 { // a second new connection: still accepted, still closed
		if bodies, conn := exchange(t, addr, two); len(bodies) != 1 || conn[0] != "close" {
			t.Errorf("after Drain, connection %d: responses %q, Connection %q; want one, with Connection: close", i, bodies, conn)
		}
	}
}

// TestListenerShutdown: Shutdown waits for the request in flight, which is
// answered, and Serve then returns nil.
func TestListenerShutdown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	l, err := NewListener(ListenerConfig{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "finished")
	})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(ln) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- l.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-shut; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	if b := <-got; b != "finished" {
		t.Errorf("in-flight request got %q, want its answer", b)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Shutdown = %v, want nil", err)
	}
}

// TestListenerHeaderLimit: a request whose headers exceed MaxHeaderBytes (and
// net/http's 4 KiB of slack) gets 431 without reaching the handler.
func TestListenerHeaderLimit(t *testing.T) {
	reached := false
	_, addr := serveListener(t, ListenerConfig{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", DefaultMaxHeaderBytes+8192)+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || reached {
		t.Errorf("status %d (handler reached: %v), want 431", resp.StatusCode, reached)
	}
}

// TestNewListenerConfig: zero fields take the documented defaults, set ones
// are kept, and a missing handler or a negative limit is refused.
func TestNewListenerConfig(t *testing.T) {
	l, err := NewListener(ListenerConfig{Handler: echoPath})
	if err != nil {
		t.Fatal(err)
	}
	hs := l.hs
	if hs.ReadHeaderTimeout != DefaultReadHeaderTimeout || hs.ReadTimeout != DefaultReadTimeout || hs.WriteTimeout != DefaultWriteTimeout ||
		hs.IdleTimeout != DefaultIdleTimeout || hs.MaxHeaderBytes != DefaultMaxHeaderBytes || hs.ErrorLog == nil {
		t.Errorf("defaults: %v %v %v %v %d %v", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes, hs.ErrorLog)
	}
	l, err = NewListener(ListenerConfig{Handler: echoPath, ReadHeaderTimeout: 1, ReadTimeout: 2, WriteTimeout: 3, IdleTimeout: 4, MaxHeaderBytes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if hs := l.hs; hs.ReadHeaderTimeout != 1 || hs.ReadTimeout != 2 || hs.WriteTimeout != 3 || hs.IdleTimeout != 4 || hs.MaxHeaderBytes != 5 {
		t.Errorf("set values not kept: %v %v %v %v %d", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
	for name, cfg := range map[string]ListenerConfig{
		"no handler":              {},
		"negative ReadTimeout":    {Handler: echoPath, ReadTimeout: -1},
		"negative MaxHeaderBytes": {Handler: echoPath, MaxHeaderBytes: -1},
	} {
		if _, err := NewListener(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: NewListener error = %v, want ErrConfig", name, err)
		}
	}
}
