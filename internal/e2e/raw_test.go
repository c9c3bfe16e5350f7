package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawReply is everything a server sent back on one raw TCP connection.
type rawReply struct {
	Statuses []int
	Headers  []http.Header
	Bodies   [][]byte
	Closed   bool  // the server closed the connection (rather than our read timing out)
	Err      error // the error that ended reading (EOF, timeout, reset)
}

func (r rawReply) String() string {
	return fmt.Sprintf("statuses %v, closed %v (%v)", r.Statuses, r.Closed, r.Err)
}

// rawExchange writes req on a fresh connection and reads every response until
// the server closes the connection or nothing arrives for wait.
func rawExchange(t testing.TB, addr string, req []byte, wait time.Duration) rawReply {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(req); err != nil {
		// The server may refuse early and close while we are still writing
		// (oversized requests); what it answered is still readable.
		t.Logf("write: %v", err)
	}
	var out rawReply
	br := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(wait))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			out.Err = err
			var ne net.Error
			out.Closed = !(errors.As(err, &ne) && ne.Timeout())
			return out
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		out.Statuses = append(out.Statuses, resp.StatusCode)
		out.Headers = append(out.Headers, resp.Header)
		out.Bodies = append(out.Bodies, body)
		if err != nil {
			out.Err = err
			out.Closed = true
			return out
		}
	}
}

// noCRLFInHeaders fails if any header of h carries a CR, LF or NUL (header
// splitting) or if a header the request tried to inject is present.
func noCRLFInHeaders(t *testing.T, h http.Header, injected ...string) {
	t.Helper()
	for k, vs := range h {
		for _, v := range vs {
			if strings.ContainsAny(k+v, "\r\n\x00") {
				t.Errorf("header %s: %q carries CR/LF/NUL", k, v)
			}
		}
	}
	for _, k := range injected {
		if v, ok := h[http.CanonicalHeaderKey(k)]; ok {
			t.Errorf("injected header %s: %q reached the response", k, v)
		}
	}
}

func bigHeader(n int) []byte {
	return bytes.Repeat([]byte("a"), n)
}
