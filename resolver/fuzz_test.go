package resolver

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// FuzzHandler feeds arbitrary paths, queries and Accept headers through the
// handler. It must never panic, never answer 5xx, never send a Location that
// is not an absolute http(s) URL free of spaces and control characters, nor a
// Link field with a control character, and every HTML page must stay
// well-formed (so every echoed string was escaped).
func FuzzHandler(f *testing.F) {
	fx := newFixture(f, nil)
	seeds := []struct{ method, path, query string }{
		{"GET", "/" + tExtra + "/loc", "locatt=country:us&locatt=view"},
		{"GET", "/" + tExtra + "/loc", "action=showurls"},
		{"GET", "/" + tExtra + "/loc", "action=metadata&urlappend=%23x"},
		{"GET", "/" + tExtra + "/badloc", "action=showurls"},
		{"GET", "/" + tExtra + "/links", ""},
		{"GET", "/" + tExtra + "/weighted", ""},
		{"GET", "/api/linksets/" + tHandle, ""},
		{"HEAD", "/api/linksets/" + tExtra + "/links", ""},
		{"GET", "/api/linksets/" + tExtra + "/%3Cx%3E", ""},
		{"GET", "/" + tHandle, ""},
		{"GET", "/" + tHandle, "noredirect"},
		{"GET", "/" + strings.ToLower(tPrefix+"/"+tNS+"/"+tID), "urlappend=/x%3Fy"},
		{"GET", "/" + tPrefix + "/svc/" + tNS + "/" + tBadID, ""},
		{"GET", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", ""},
		{"GET", "/" + tTestPrefix + "/svc/" + tNS + "/NEW1", "action=showvalues"},
		{"GET", "/" + tExtra + "/order", "index=6;type=URL.&urlappend=%40evil.example"},
		{"GET", "/" + tExtra + "/js", "type=URL"},
		{"GET", "/" + tExtra + "/split", ""},
		{"GET", "/" + tExtra + "/idn", "urlappend=%E2%82%AC"},
		{"GET", "/" + tExtra + "/alias", ""},
		{"GET", "/" + tExtra + "/mixed", "noredirect&type=HS_VLIST"},
		{"GET", "/api/handles/" + tHandle, "pretty&callback=a-b.c"},
		{"GET", "/api/handles/" + tExtra + "/order", "type=URL.&index=x"},
		{"GET", "/api/handles/", ""},
		{"GET", "/api/nope", ""},
		{"POST", "/api/handles/" + tExtra + "/order", "index=2"},
		{"GET", "/lookup", "h=hdl%3A10.1000%2Forder"},
		{"GET", "/%00", ""},
		{"GET", "/" + tPrefix + "/%C0%AF", ""},
		{"GET", "/hdl:", ""},
		{"GET", "/", ""},
	}
	accepts := []string{"", "text/turtle", "application/linkset", "text/html;q=0.1, application/*;q=0.5"}
	for i, s := range seeds {
		f.Add(s.method, s.path, s.query, accepts[i%len(accepts)])
	}
	f.Fuzz(func(t *testing.T, method, path, query, accept string) {
		if method != "GET" && method != "HEAD" && method != "POST" && method != "OPTIONS" {
			method = "GET"
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		raw := method + " " + target + " HTTP/1.1\r\nHost: resolver.test\r\nContent-Length: 0\r\n"
		if accept != "" {
			raw += "Accept: " + accept + "\r\n"
		}
		raw += "\r\n"
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Skip() // fasthttp refuses it before any handler runs
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, memAddr, nil)
		fx.srv.Handler(&ctx)
		status := ctx.Response.StatusCode()
		if status >= 500 {
			t.Fatalf("%s %q: status %d", method, target, status)
		}
		if loc := ctx.Response.Header.Peek("Location"); loc != nil {
			if !bytes.HasPrefix(loc, []byte("http://")) && !bytes.HasPrefix(loc, []byte("https://")) {
				t.Fatalf("%s %q: Location %q is not absolute http(s)", method, target, loc)
			}
			for _, c := range loc {
				if c <= ' ' || c == 0x7f || c >= 0x80 {
					t.Fatalf("%s %q: Location %q has byte %#x", method, target, loc, c)
				}
			}
		}
		for _, l := range ctx.Response.Header.PeekAll("Link") {
			for _, c := range l {
				if c < ' ' || c == 0x7f || c >= 0x80 {
					t.Fatalf("%s %q: Link %q has byte %#x", method, target, l, c)
				}
			}
		}
		if bytes.HasPrefix(ctx.Response.Header.ContentType(), []byte("text/html")) {
			if err := wellFormed(ctx.Response.Body()); err != nil {
				t.Fatalf("%s %q: page not well-formed: %v\n%s", method, target, err, ctx.Response.Body())
			}
		}
	})
}

func wellFormed(page []byte) error {
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
