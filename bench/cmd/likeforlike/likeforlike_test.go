package main

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
)

// serve answers every request on a real loopback listener with raw(host):
// the response bytes as a server would write them.
func serve(t *testing.T, raw func(addr string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addr := ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				var req []byte
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					req = append(req, buf[:n]...)
					for {
						i := bytes.Index(req, []byte("\r\n\r\n"))
						if i < 0 {
							break
						}
						req = req[i+4:]
						if _, err := c.Write([]byte(raw(addr))); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return addr
}

const body = "<p><a href=\"https://landing.example.org/1\">https://landing.example.org/1</a></p>\n"

// redirect is a pidnode-shaped 302; extra header lines are added, drop names
// one to leave out.
func redirect(server, extra, drop string) func(addr string) string {
	return func(addr string) string {
		lines := []string{
			"Server: " + server,
			"Date: Tue, 24 Nov 2026 02:47:00 GMT",
			"Content-Type: text/html; charset=utf-8",
			fmt.Sprintf("Content-Length: %d", len(body)),
			"Location: https://landing.example.org/1",
			"Expires: Wed, 25 Nov 2026 02:47:00 GMT",
			"Link: <https://hdl.handle.net/21.T1/x>; rel=\"cite-as\"",
			"Link: <http://" + addr + "/api/handles/21.T1/x>; rel=\"describedby\"",
			"Vary: Accept",
		}
		var b strings.Builder
		b.WriteString("HTTP/1.1 302 Found\r\n")
		for _, l := range lines {
			if drop != "" && strings.HasPrefix(l, drop+":") {
				continue
			}
			b.WriteString(l + "\r\n")
		}
		if extra != "" {
			b.WriteString(extra + "\r\n")
		}
		b.WriteString("\r\n" + body)
		return b.String()
	}
}

func TestCompare(t *testing.T) {
	pid := serve(t, redirect("pidnode", "", ""))
	tests := []struct {
		name   string
		other  func(string) string
		ok     bool
		reason string
	}{
		{"same bytes, own base URL and Server", redirect("nginx", "", ""), true, "same body"},
		{"extra header", redirect("nginx", "Cache-Control: max-age=86400", ""), false, "header sets differ: +cache-control"},
		{"missing header", redirect("nginx", "", "Vary"), false, "header sets differ: −vary"},
		{"other Link value", redirect("nginx", "Link: <https://example.org/>; rel=\"type\"", "Vary"), false, "header sets differ: +link −vary"},
		{"other value", redirect("nginx", "Vary: Accept-Encoding", "Vary"), false, "vary values differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := serve(t, tt.other)
			r, err := fetchOne(pid, "/21.T1/x", "")
			if err != nil {
				t.Fatal(err)
			}
			o, err := fetchOne(other, "/21.T1/x", "")
			if err != nil {
				t.Fatal(err)
			}
			ok, note := compare(r, pid, o, other, 0.05)
			if ok != tt.ok || !strings.Contains(note, tt.reason) {
				t.Errorf("compare = %v, %q; want %v, containing %q", ok, note, tt.ok, tt.reason)
			}
		})
	}
}

func TestCompareSize(t *testing.T) {
	pid := serve(t, redirect("pidnode", "", ""))
	// Same names and values, 100 bytes longer Server: only the size differs.
	other := serve(t, redirect(strings.Repeat("n", 100), "", ""))
	r, err := fetchOne(pid, "/21.T1/x", "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := fetchOne(other, "/21.T1/x", "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, note := compare(r, pid, o, other, 0.05); ok || !strings.Contains(note, "sizes differ") {
		t.Errorf("compare = %v, %q; want sizes differ", ok, note)
	}
	if ok, note := compare(r, pid, o, other, 0.5); !ok {
		t.Errorf("with 50 %% tolerance: compare = %v, %q", ok, note)
	}
}

// TestRenderShape: the Link line built from the handle and the base URL
// becomes an add_header line, the body a template of the Location; nginx
// strings are quoted.
func TestRenderShape(t *testing.T) {
	pid := serve(t, redirect("pidnode", "", ""))
	r, err := fetchOne(pid, "/21.T1/x", "")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := analyse([]answer{{"/21.T1/x", r}}, "http://"+pid)
	if err != nil {
		t.Fatal(err)
	}
	if sh.status != 302 || sh.expiresTTL != 86400 || sh.links != 2 || !sh.bodyOK {
		t.Fatalf("shape %+v", sh)
	}
	var conf bytes.Buffer
	if err := writeNginx(&conf, sh, []answer{{"/21.T1/x", r}}, "http://"+pid, "127.0.0.1:9", "zipf.paths"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`add_header Link "<https://hdl.handle.net${uri}>; rel=\"cite-as\"" always;`,
		`add_header Link "<http://127.0.0.1:9/api/handles${uri}>; rel=\"describedby\"" always;`,
		`add_header Vary "Accept" always;`,
		`default_type "text/html; charset=utf-8";`,
		`error_page 302 @lfl_body;`,
		`return 200 "<p><a href=\"${target}\">${target}</a></p>\n";`,
	} {
		if !strings.Contains(conf.String(), want) {
			t.Errorf("nginx include lacks %s:\n%s", want, conf.String())
		}
	}
}
