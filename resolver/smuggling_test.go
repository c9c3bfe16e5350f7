package resolver

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestChunkedRequestsRefused: a request with Transfer-Encoding (alone or beside
// a Content-Length, the smuggling shape of RFC 9112 §6.3) gets 400 and the
// connection closes, so a request hidden after the body is never answered.
func TestChunkedRequestsRefused(t *testing.T) {
	f := newFixture(t, nil)
	smuggled := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	cases := []struct{ name, req string }{
		{"CL and TE", "POST /api/handles/" + tExtra + "/order HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
		{"TE alone", "POST /api/handles/" + tExtra + "/order HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := f.ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write([]byte(tc.req)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			var resp fasthttp.Response
			if err := resp.Read(br); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != fasthttp.StatusBadRequest || !resp.ConnectionClose() {
				t.Errorf("status %d, Connection: close %v; want 400 and close", resp.StatusCode(), resp.ConnectionClose())
			}
			if rest, _ := io.ReadAll(br); strings.Contains(string(rest), "HTTP/1.1") {
				t.Errorf("a second response followed: the smuggled request was served:\n%s", rest)
			}
		})
	}
	// A plain POST with Content-Length still works.
	resp := f.raw(t, "POST /api/handles/"+tExtra+"/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 6\r\n\r\npretty")
	if resp.StatusCode() != fasthttp.StatusOK {
		t.Errorf("POST with Content-Length: status %d, want 200", resp.StatusCode())
	}
}
