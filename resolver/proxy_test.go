package resolver

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
	"pidnode/resolver/page"
	"pidnode/store"
)

// TestRedirect checks the redirect choice and Location encoding
// (docs/handle-protocol.md §2).
func TestRedirect(t *testing.T) {
	f := newFixture(t, nil)
	lowerShort := strings.ToLower(tPrefix + "/" + tNS + "/" + tID)
	tests := []struct {
		name     string
		target   string
		status   int
		location string
	}{
		{"full form", "/" + tHandle, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"short form, lower case, no dashes", "/" + strings.ReplaceAll(lowerShort, "-", ""), 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"hdl scheme", "/hdl:" + tHandle, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"info:hdl scheme", "/info:hdl/" + tHandle, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"urn:hdl scheme", "/urn:hdl:" + strings.Replace(tHandle, "/", ":", 1), 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"first URL wins over earlier subtype", "/" + tExtra + "/order", 302, "https://primary.example.org/x"},
		{"URL.* when no URL", "/" + tExtra + "/sub", 302, "http://alt.example.org/"},
		{"index restricts", "/" + tExtra + "/order?index=6", 302, "https://second.example.org/x"},
		{"type restricts", "/" + tExtra + "/order?type=URL.mirror", 302, "https://mirror.example.org/x"},
		{"type trailing dot", "/" + tExtra + "/order?type=URL.", 302, "https://primary.example.org/x"},
		{"index to non-URL shows values", "/" + tExtra + "/sub?index=1", 200, ""},
		{"urlappend", "/" + tExtra + "/order?urlappend=/sub%3Fq%3D1", 302, "https://primary.example.org/x/sub?q=1"},
		{"urlappend with semicolon split", "/" + tExtra + "/order?urlappend=%3Fa%3D1;index=6", 302, "https://second.example.org/x?a=1"},
		{"urlappend encoded", "/" + tExtra + "/order?urlappend=%3Fq%3Da%20b%22%0D%0AX:y", 302, "https://primary.example.org/x?q=a%20b%22%0D%0AX:y"},
		{"urlappend cannot change host", "/" + tExtra + "/sub?urlappend=.evil.example", 302, "http://alt.example.org/.evil.example"},
		{"urlappend cannot add host", "/" + tExtra + "/none2?urlappend=x", 404, ""},
		{"fragment becomes urlappend", "/" + tExtra + "/order#frag", 302, "https://primary.example.org/x#frag"},
		{"javascript URL never redirected", "/" + tExtra + "/js", 200, ""},
		{"javascript URL skipped by type", "/" + tExtra + "/js?type=URL.b", 302, "https://b.example.org/"},
		{"header splitting encoded", "/" + tExtra + "/split", 302, "https://example.org/a%20b%0D%0ASet-Cookie:%20x=1"},
		{"IDN host", "/" + tExtra + "/idn", 302, "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%A4"},
		{"no URL shows values", "/" + tExtra + "/none", 200, ""},
		{"empty record shows values", "/" + tExtra + "/empty", 200, ""},
		{"unicode handle", "/" + tExtra + "/%C3%BCN%C3%AF", 302, "https://example.org/unicode"},
		{"plus is literal", "/" + tExtra + "/a+b%20c", 302, "https://example.org/plus"},
		{"alias", "/" + tExtra + "/alias", 301, tPublicURL + "/10.1000/order"},
		{"alias to other prefix goes to proxy", "/" + tExtra + "/away", 301, "https://hdl.handle.net/20.500/elsewhere"},
		{"alias loop shows values", "/" + tExtra + "/loop1", 200, ""},
		{"noredirect", "/" + tHandle + "?noredirect", 200, ""},
		{"noredirect=false redirects", "/" + tHandle + "?noredirect=false", 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"action=showvalues", "/" + tHandle + "?action=showvalues", 200, ""},
		{"tombstone obsoleted", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, ""},
		{"tombstone deprecated", "/" + tTestPrefix + "/" + tNS + "/DEP1", 410, ""},
		{"tombstone noredirect", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1?noredirect", 200, ""},
		{"reserved", "/" + tTestPrefix + "/svc/" + tNS + "/NEW1", 404, ""},
		{"reserved noredirect", "/" + tTestPrefix + "/svc/" + tNS + "/NEW1?noredirect", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.get(t, tc.target)
			if got := resp.StatusCode(); got != tc.status {
				t.Errorf("GET %s: status %d, want %d\n%s", tc.target, got, tc.status, resp.Body())
			}
			loc := string(resp.Header.Peek("Location"))
			if loc != tc.location {
				t.Errorf("GET %s: Location %q, want %q", tc.target, loc, tc.location)
			}
			if ct := string(resp.Header.ContentType()); ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", tc.target, ct)
			}
			if tc.status == 302 && !strings.Contains(string(resp.Body()), `<a href="`+htmlEscape(tc.location)+`">`) {
				t.Errorf("GET %s: body lacks the escaped link:\n%s", tc.target, resp.Body())
			}
		})
	}
}

func htmlEscape(s string) string { return string(page.AppendHTML(nil, s)) }

// linkFields returns the values of every Link header field of resp, in order.
func linkFields(resp *fasthttp.Response) []string {
	var out []string
	for _, v := range resp.Header.PeekAll("Link") {
		out = append(out, string(v))
	}
	return out
}

func TestRedirectHeaders(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.get(t, "/"+strings.ToLower(tHandle))
	wantLinks := []string{
		`<https://hdl.handle.net/` + tHandle + `>; rel="cite-as"`,
		`<` + tPublicURL + `/api/handles/` + tHandle + `>; rel="describedby"; type="application/json"`,
		`<https://schema.org/Thing>; rel="type", <https://schema.org/AboutPage>; rel="type"`,
		`<https://example.org/resource>; rel="item"; type="text/turtle"`,
		`<` + tPublicURL + `/api/linksets/` + tHandle + `>; rel="linkset"; type="application/linkset+json"`,
	}
	if got := linkFields(resp); !slices.Equal(got, wantLinks) {
		t.Errorf("Link fields = %q\nwant %q", got, wantLinks)
	}
	date, err1 := http.ParseTime(string(resp.Header.Peek("Date")))
	exp, err2 := http.ParseTime(string(resp.Header.Peek("Expires")))
	if err1 != nil || err2 != nil {
		t.Fatalf("Date %q / Expires %q: %v %v", resp.Header.Peek("Date"), resp.Header.Peek("Expires"), err1, err2)
	}
	if d := exp.Sub(date); d < 86398*time.Second || d > 86402*time.Second {
		t.Errorf("Expires - Date = %v, want ~24h (TTL 86400)", d)
	}

	// Absolute TTL 600 s ahead.
	resp = f.get(t, "/"+tExtra+"/abs")
	exp, _ = http.ParseTime(string(resp.Header.Peek("Expires")))
	if d := time.Until(exp); d < 590*time.Second || d > 610*time.Second {
		t.Errorf("absolute TTL: Expires in %v, want ~600s", d)
	}

	// HTTP/1.0 also gets 302.
	resp = f.raw(t, "GET /"+tHandle+" HTTP/1.0\r\n\r\n")
	if resp.StatusCode() != 302 {
		t.Errorf("HTTP/1.0: status %d, want 302", resp.StatusCode())
	}

	// HEAD: same headers, no body.
	resp = f.raw(t, "HEAD /"+tHandle+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode() != 302 || len(resp.Header.Peek("Location")) == 0 || len(resp.Body()) != 0 {
		t.Errorf("HEAD: %d Location %q body %q", resp.StatusCode(), resp.Header.Peek("Location"), resp.Body())
	}

	// Without PublicURL the base comes from a sanitised Host header.
	g := newFixture(t, func(c *Config) { c.PublicURL = ""; c.ProxyURL = "https://doi.example/" })
	resp = g.raw(t, "GET /"+tHandle+" HTTP/1.1\r\nHost: res.example:8000\r\n\r\n")
	got := linkFields(resp)
	if len(got) != 5 || got[0] != `<https://doi.example/`+tHandle+`>; rel="cite-as"` ||
		got[1] != `<http://res.example:8000/api/handles/`+tHandle+`>; rel="describedby"; type="application/json"` ||
		got[4] != `<http://res.example:8000/api/linksets/`+tHandle+`>; rel="linkset"; type="application/linkset+json"` {
		t.Errorf("Link without PublicURL = %q", got)
	}
	resp = g.raw(t, "GET /"+tExtra+"/alias HTTP/1.1\r\nHost: evil\"<host>\r\n\r\n")
	if got := string(resp.Header.Peek("Location")); got != "http://localhost/10.1000/order" {
		t.Errorf("alias with a bad Host: Location %q", got)
	}
}

// TestPages checks the non-redirect pages' status and key text.
func TestPages(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name   string
		target string
		status int
		want   []string
	}{
		{"not found", "/" + tPrefix + "/svc/K7Q/NOPE", 404, []string{"Not Found: the handle you requested -- 21.12345/svc/K7Q/NOPE -- cannot be found."}},
		{"not found escapes", "/" + tPrefix + "/%3Cscript%3Ealert(1)%3C%2Fscript%3E", 404, []string{"-- 21.12345/&lt;script&gt;alert(1)&lt;/script&gt; --"}},
		{"malformed generated id", "/" + tPrefix + "/svc/" + tNS + "/" + tBadID, 404, []string{"is malformed", tBadID}},
		{"malformed short form", "/" + tPrefix + "/" + tNS + "/" + strings.ToLower(tBadID), 404, []string{"is malformed"}},
		{"custom id not found is plain 404", "/" + tPrefix + "/svc/" + tNS + "/my-thing", 404, []string{"cannot be found"}},
		{"unknown prefix", "/99.999/abc", 404, []string{"Prefix 99.999 not found"}},
		{"no slash", "/hello%20world", 404, []string{"hello world</strong> is not an identifier", "PREFIX/SUFFIX"}},
		{"reserved", "/" + tTestPrefix + "/svc/" + tNS + "/NEW1", 404, []string{"reserved, not yet public"}},
		{"tombstone", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, []string{
			"OBSOLETED", "Sample &lt;42&gt; &amp; co", `A catalyst sample "A"`,
			"https://landing.example.org/old", "IS_OBSOLETED_BY",
			`<a href="https://hdl.handle.net/` + tHandle + `">` + tHandle + `</a>`,
			"ex:&lt;b&gt;x&lt;/b&gt;", `<a href="mailto:pids@example.org">pids@example.org</a>`}},
		{"tombstone date", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, []string{"<dt>Withdrawn on</dt><dd>2025-03-11 09:43:14Z</dd>"}},
		{"deprecated", "/" + tTestPrefix + "/svc/" + tNS + "/DEP1", 410, []string{"DEPRECATED", "deprecated", "<dt>Deprecated on</dt><dd>2025-03-11 09:43:14Z</dd>"}},
		{"values page", "/" + tHandle + "?noredirect", 200, []string{
			"Handle Values for: " + tHandle, "<th>Index</th><th>Type</th><th>Timestamp</th><th>Data</th>",
			"2025-03-11 09:43:14Z", `<a href="https://landing.example.org/item/42?a=1&amp;b=%3C2%3E">https://landing.example.org/item/42?a=1&amp;b=&lt;2&gt;</a>`,
			"handle=" + tAdminHS + "; index=300; [add_handle,"}},
		{"values page binary and vlist", "/" + tExtra + "/mixed?noredirect", 200, []string{"0001FEFF", "handle=10.1000/a; index=1\nhandle=10.1000/b; index=2"}},
		{"values page javascript as text", "/" + tExtra + "/js?noredirect", 200, []string{`<td class="d" dir="ltr">javascript:alert(document.cookie)</td>`, `<a href="https://b.example.org/">`}},
		{"values page header splitting as text", "/" + tExtra + "/split?noredirect", 200, []string{`href="https://example.org/a%20b%0D%0ASet-Cookie:%20x=1"`}},
		{"values page filtered", "/" + tExtra + "/order?noredirect&type=URL.mirror", 200, []string{"mirror.example.org"}},
		{"bad escape", "/" + tPrefix + "/%zz", 400, []string{"is malformed"}},
		{"NUL", "/" + tPrefix + "/a%00", 400, []string{"control character"}},
		{"bad index", "/" + tHandle + "?index=abc", 400, []string{"Invalid parameter: index=abc"}},
		{"home", "/", 200, []string{`action="/lookup"`, "21.12345", "21.T12345"}},
		{"lookup bad", "/lookup?h=", 400, []string{"Please enter an identifier."}},
		{"lookup without a slash", "/lookup?h=hello+world", 400, []string{"An identifier is a prefix and a suffix joined by a slash, PREFIX/SUFFIX", `value="hello world"`}},
		{"lookup of a bare prefix", "/lookup?h=21.12345", 400, []string{"PREFIX/SUFFIX"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.get(t, tc.target)
			if got := resp.StatusCode(); got != tc.status {
				t.Errorf("GET %s: status %d, want %d", tc.target, got, tc.status)
			}
			body := string(resp.Body())
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s: body lacks %q:\n%s", tc.target, w, body)
				}
			}
			if strings.Contains(body, "<script") || strings.Contains(body, `href="javascript`) {
				t.Errorf("GET %s: body carries unescaped script:\n%s", tc.target, body)
			}
			checkWellFormed(t, resp.Body())
		})
	}
	// The values page of the mixed record hides the non-public value.
	if body := string(f.get(t, "/"+tExtra+"/mixed?noredirect").Body()); strings.Contains(body, "not for anonymous eyes") {
		t.Error("values page shows a value without public read")
	}
}

func TestMiscEndpoints(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name, req string
		status    int
		body      string
		location  string
	}{
		{"healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200, "ok\n", ""},
		{"robots", "GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n", 200, "User-agent: *\nAllow: /api/linksets/\nDisallow: /api/\nDisallow: /lookup\n", ""},
		{"favicon", "GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n", 204, "", ""},
		{"lookup", "GET /lookup?h=" + tHandle + " HTTP/1.1\r\nHost: x\r\n\r\n", 302, "", tPublicURL + "/" + tHandle},
		{"lookup escapes", "GET /lookup?h=10.1000%2Fa%2Bb+c%3F%23 HTTP/1.1\r\nHost: x\r\n\r\n", 302, "", tPublicURL + "/10.1000/a+b%20c%3F%23"},
		{"lookup pasted URL", "GET /lookup?h=https%3A%2F%2Fhdl.handle.net%2F10.1000%2Forder%3Fnoredirect HTTP/1.1\r\nHost: x\r\n\r\n", 302, "", tPublicURL + "/10.1000/order"},
		{"lookup dot segment", "GET /lookup?h=10.1000/../x HTTP/1.1\r\nHost: x\r\n\r\n", 400, "", ""},
		{"POST to a handle", "POST /" + tHandle + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405, "", ""},
		{"absolute-form target", "GET http://resolver.test/" + tHandle + " HTTP/1.1\r\nHost: resolver.test\r\n\r\n", 302, "", "https://landing.example.org/item/42?a=1&b=%3C2%3E"},
		{"HTTP/1.0 no Host", "GET /" + tExtra + "/order HTTP/1.0\r\n\r\n", 302, "", "https://primary.example.org/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.raw(t, tc.req)
			if resp.StatusCode() != tc.status {
				t.Errorf("%s: status %d, want %d\n%s", firstLine(tc.req), resp.StatusCode(), tc.status, resp.Body())
			}
			if tc.body != "" && string(resp.Body()) != tc.body {
				t.Errorf("%s: body %q, want %q", firstLine(tc.req), resp.Body(), tc.body)
			}
			if got := string(resp.Header.Peek("Location")); got != tc.location {
				t.Errorf("%s: Location %q, want %q", firstLine(tc.req), got, tc.location)
			}
		})
	}
}

// TestStyleSheet: every page links the one style sheet by its content's name,
// the sheet is served from that name to be kept for good, and the pages'
// Content-Security-Policy allows styles from the resolver's own origin only,
// none inline.
func TestStyleSheet(t *testing.T) {
	f := newFixture(t, nil)
	if !regexp.MustCompile(`^/style-[0-9a-f]{12}\.css$`).MatchString(page.StylePath) {
		t.Fatalf("page.StylePath %q is not named by its content", page.StylePath)
	}
	resp := f.get(t, page.StylePath)
	if resp.StatusCode() != 200 || string(resp.Body()) != string(page.Style) {
		t.Fatalf("GET %s: %d, body %d bytes, want 200 and the %d-byte sheet", page.StylePath, resp.StatusCode(), len(resp.Body()), len(page.Style))
	}
	for h, want := range map[string]string{"Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"} {
		if got := string(resp.Header.Peek(h)); got != want {
			t.Errorf("GET %s: %s %q, want %q", page.StylePath, h, got, want)
		}
	}
	if resp := f.raw(t, "POST "+page.StylePath+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"); resp.StatusCode() != 405 {
		t.Errorf("POST %s: %d, want 405", page.StylePath, resp.StatusCode())
	}
	if resp := f.get(t, "/style-000000000000.css"); resp.StatusCode() == 200 {
		t.Errorf("a sheet name that is not the current one answered 200")
	}
	link := `<link rel="stylesheet" href="` + page.StylePath + `" />`
	for _, target := range []string{"/", "/" + tHandle + "?noredirect", "/" + tPrefix + "/svc/K7Q/NOPE", "/" + tHandle + "?action=showurls"} {
		resp := f.get(t, target)
		body := string(resp.Body())
		if !strings.Contains(body, link) || strings.Contains(body, "<style") {
			t.Errorf("GET %s: the page does not link the sheet, or carries a style of its own:\n%s", target, body)
		}
		if csp := string(resp.Header.Peek("Content-Security-Policy")); !strings.Contains(csp, "style-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: Content-Security-Policy %q, want style-src 'self' and nothing inline", target, csp)
		}
	}
}

// TestHostileInputs: nothing crashes, nothing is 5xx, limits answer 431/413.
func TestHostileInputs(t *testing.T) {
	f := newFixture(t, nil)
	long := strings.Repeat("a", 10<<10)
	tests := []struct {
		name   string
		req    string
		status int
	}{
		{"10 kB handle over the header limit", "GET /" + tPrefix + "/" + long + " HTTP/1.1\r\nHost: x\r\n\r\n", 431},
		{"header flood", "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Flood: "+strings.Repeat("y", 100)+"\r\n", 200) + "\r\n", 431},
		{"body too large", "POST /api/handles/" + tHandle + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("a", 100000), 413},
		{"dot dot", "GET /" + tPrefix + "/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"encoded dot dot", "GET /" + tPrefix + "/%2E%2E/x HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"trailing percent", "GET /" + tPrefix + "/abc% HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"invalid UTF-8", "GET /" + tPrefix + "/%C3%28 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"overlong UTF-8", "GET /" + tPrefix + "/%C0%AF HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"raw UTF-8 in path", "GET /" + tExtra + "/\xc3\xbcn\xc3\xaf HTTP/1.1\r\nHost: x\r\n\r\n", 302},
		{"raw invalid byte", "GET /" + tPrefix + "/\xff HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"NUL encoded", "GET /%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"only scheme", "GET /hdl: HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"huge index", "GET /" + tHandle + "?index=99999999999 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"many filters", "GET /api/handles/" + tHandle + "?" + strings.Repeat("type=a&", 300) + " HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"asterisk", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.raw(t, tc.req)
			if resp.StatusCode() != tc.status {
				t.Errorf("%.80q: status %d, want %d\n%.300s", firstLine(tc.req), resp.StatusCode(), tc.status, resp.Body())
			}
		})
	}
	// A 10 kB handle within a larger header limit is refused by the handle limit.
	g := newFixture(t, func(c *Config) { c.MaxHeaderBytes = 64 << 10 })
	resp := g.raw(t, "GET /"+tPrefix+"/"+long+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode() != 400 || !strings.Contains(string(resp.Body()), "too long") {
		t.Errorf("10 kB handle: %d %.200s, want 400 too long", resp.StatusCode(), resp.Body())
	}
	resp = g.raw(t, "GET /api/handles/"+tPrefix+"/"+long+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode() != 400 || string(resp.Body()) != `{"responseCode":102,"message":"Invalid handle: the identifier is too long"}` {
		t.Errorf("10 kB handle API: %d %.200s", resp.StatusCode(), resp.Body())
	}
}

func TestNewConfig(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"no cache", Config{Namer: f.namer}, ErrNoCache},
		{"no namer", Config{Cache: f.cache}, ErrNoNamer},
		{"relative public URL", Config{Cache: f.cache, Namer: f.namer, PublicURL: "/x"}, ErrBadBaseURL},
		{"javascript proxy URL", Config{Cache: f.cache, Namer: f.namer, ProxyURL: "javascript:x"}, ErrBadBaseURL},
		{"query in public URL", Config{Cache: f.cache, Namer: f.namer, PublicURL: "https://a.example/?x"}, ErrBadBaseURL},
		{"negative timeout", Config{Cache: f.cache, Namer: f.namer, ReadTimeout: -1}, ErrBadLimit},
		{"ok", Config{Cache: f.cache, Namer: f.namer, PublicURL: "https://a.example/base/"}, nil},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if !errorsIs(err, tc.want) {
			t.Errorf("%s: New() error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func errorsIs(err, target error) bool {
	if target == nil {
		return err == nil
	}
	for err != nil {
		if err == target {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestShutdown: Serve returns nil after Shutdown.
func TestShutdown(t *testing.T) {
	f := newFixture(t, nil)
	ln := newTCPListener(t)
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ln) }()
	c := &fasthttp.Client{}
	code, _, err := c.Get(nil, "http://"+ln.Addr().String()+"/healthz")
	if err != nil || code != 200 {
		t.Fatalf("healthz over TCP: %d %v", code, err)
	}
	if err := f.srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve after Shutdown: %v", err)
	}
}

// TestReadYourWrites: once a write is committed and the cache invalidated (what
// admin does), the next resolution shows the change (docs/product.md §5).
func TestReadYourWrites(t *testing.T) {
	f := newFixture(t, nil)
	target := "/" + tExtra + "/order"
	if loc := string(f.get(t, target).Header.Peek("Location")); loc != "https://primary.example.org/x" {
		t.Fatalf("before: Location %q", loc)
	}
	rec := record(t, tExtra+"/order")
	rec.Values[1].Data = []byte("https://changed.example.org/")
	key := f.key(t, rec.Handle)
	err := f.db.Update(func(tx *store.Tx) error { return tx.PutRecord(key, &store.Stored{Record: rec, Version: 2}) })
	if err != nil {
		t.Fatal(err)
	}
	f.cache.Invalidate(key)
	if loc := string(f.get(t, target).Header.Peek("Location")); loc != "https://changed.example.org/" {
		t.Errorf("after the write: Location %q, want the new URL", loc)
	}
	if body := string(f.get(t, "/api/handles"+target).Body()); !strings.Contains(body, "changed.example.org") {
		t.Errorf("after the write: API body %s", body)
	}
}

// TestConcurrentResolution hammers one record from many goroutines while it is
// invalidated, for the race detector.
func TestConcurrentResolution(t *testing.T) {
	f := newFixture(t, nil)
	key := f.key(t, tHandle)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			f.cache.Invalidate(key)
		}
	}()
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			for range 50 {
				c, err := f.ln.Dial()
				if err != nil {
					errs <- err.Error()
					return
				}
				resp, err := roundTrip(c, "GET /"+tHandle+" HTTP/1.1\r\nHost: x\r\n\r\n")
				c.Close()
				if err != nil {
					errs <- err.Error()
					return
				}
				if resp.StatusCode() != 302 {
					errs <- "status " + itoa(resp.StatusCode())
					return
				}
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	<-done
}

// TestLoadFailure: when the store cannot be read (here: closed), the resolver
// answers 500 (page) and RC 2 (JSON), and logs; cached records still resolve.
func TestLoadFailure(t *testing.T) {
	f := newFixture(t, nil)
	if resp := f.get(t, "/"+tHandle); resp.StatusCode() != 302 {
		t.Fatalf("warm-up: %d", resp.StatusCode())
	}
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	if resp := f.get(t, "/"+tHandle); resp.StatusCode() != 302 {
		t.Errorf("cached record after the store closed: %d, want 302", resp.StatusCode())
	}
	if resp := f.get(t, "/"+tExtra+"/order"); resp.StatusCode() != 500 {
		t.Errorf("uncached record, store closed: %d, want 500", resp.StatusCode())
	}
	resp := f.get(t, "/api/handles/"+tExtra+"/sub")
	if resp.StatusCode() != 500 || string(resp.Body()) != `{"responseCode":2,"message":"Internal error"}` {
		t.Errorf("API, store closed: %d %s", resp.StatusCode(), resp.Body())
	}
}

// TestWithoutRender: a cache built without Render still serves correctly (the
// view is rendered per request).
func TestWithoutRender(t *testing.T) {
	f := newFixture(t, nil)
	c, err := cache.New(cache.Config{Source: f.db, Alt: f.namer.AppendAltKey})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Cache: c, Namer: f.namer, PublicURL: tPublicURL})
	if err != nil {
		t.Fatal(err)
	}
	var req fasthttp.Request
	req.Header.SetRequestURI("/" + tHandle)
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, nil, nil)
	s.Handler(&ctx)
	if ctx.Response.StatusCode() != 302 || string(ctx.Response.Header.Peek("Location")) != "https://landing.example.org/item/42?a=1&b=%3C2%3E" {
		t.Errorf("without Render: %d %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Location"))
	}
	if Render(&cache.Entry{Key: "X", Found: false}) != nil {
		t.Error("Render of a not-found entry is not nil")
	}
}

// TestFormActionCSP: a page that carries the lookup form lets the form's
// redirect chain end at a landing page on any http(s) site (Chromium checks
// form-action on every redirect after a submission); every other page keeps
// form-action 'self'. Every page keeps the rest of the policy.
func TestFormActionCSP(t *testing.T) {
	f := newFixture(t, nil)
	const strict = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	const form = "default-src 'none'; style-src 'self'; form-action 'self' http: https:; base-uri 'none'; frame-ancestors 'none'"
	for _, tc := range []struct {
		target   string
		status   int
		withForm bool
	}{
		{"/", 200, true},
		{"/lookup?h=", 400, true},
		{"/lookup?h=hello+world", 400, true},
		{"/" + tPrefix + "/svc/K7Q/NOPE", 404, true},
		{"/99.999/x", 404, true},
		{"/" + tTestPrefix + "/svc/" + tNS + "/NEW1", 404, true},
		{"/" + tHandle + "?noredirect", 200, false},
		{"/" + tHandle + "?noredirect&type=URL", 200, false},
		{"/" + tHandle + "?action=showurls", 200, false},
		{"/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 410, false},
	} {
		resp := f.get(t, tc.target)
		body := string(resp.Body())
		if resp.StatusCode() != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.target, resp.StatusCode(), tc.status)
		}
		if has := strings.Contains(body, `<form method="get" action="/lookup">`); has != tc.withForm {
			t.Errorf("GET %s: lookup form on the page %v, want %v", tc.target, has, tc.withForm)
		}
		want := strict
		if tc.withForm {
			want = form
		}
		if got := string(resp.Header.Peek("Content-Security-Policy")); got != want {
			t.Errorf("GET %s: Content-Security-Policy\n %q, want\n %q", tc.target, got, want)
		}
	}
}
