package resolver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/valyala/fasthttp"

	"pidnode/resolver/page"
)

// request sends GET target with the given extra header lines.
func (f *fixture) request(t testing.TB, target string, headers ...string) *fasthttp.Response {
	t.Helper()
	req := "GET " + target + " HTTP/1.1\r\nHost: resolver.test\r\n"
	for _, h := range headers {
		req += h + "\r\n"
	}
	return f.raw(t, req+"\r\n")
}

// dump renders a response for a golden file: the status line and the
// headers in the order sent, without Date and Expires (they move with the
// clock), then the body.
func dump(resp *fasthttp.Response) []byte {
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(resp.Header.String(), "\r\n"), "\r\n") {
		if strings.HasPrefix(line, "Date: ") || strings.HasPrefix(line, "Expires: ") {
			continue
		}
		out.WriteString(line + "\n")
	}
	out.WriteString("\n")
	out.Write(resp.Body())
	return out.Bytes()
}

// TestGoldenResponses pins whole answers (status, headers, body) of the
// locations, negotiation and signposting routes.
func TestGoldenResponses(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		file, target string
		headers      []string
	}{
		{"resp_redirect_signposting.txt", "/" + tHandle, nil},
		{"resp_redirect_negotiated.txt", "/" + tHandle, []string{"Accept: text/turtle;q=0.9, text/html;q=0.5"}},
		{"resp_redirect_negotiated.txt", "/" + tHandle, []string{"accept: text/turtle;q=0.9, text/html;q=0.5"}}, // any case
		{"resp_redirect_browser.txt", "/" + tHandle, []string{"Accept: text/turtle", "User-Agent: Mozilla/5.0 (X11; Linux x86_64)"}},
		{"resp_redirect_loc.txt", "/" + tExtra + "/loc", nil},
		{"resp_redirect_loc_negotiated.txt", "/" + tExtra + "/loc", []string{"Accept: text/turtle"}},
		{"resp_redirect_loc_metadata.txt", "/" + tExtra + "/loc?action=metadata", nil},
		{"resp_redirect_badloc.txt", "/" + tExtra + "/badloc", nil},
		{"resp_redirect_links_headers.txt", "/" + tExtra + "/links", nil},
		{"resp_linkset_json.txt", "/api/linksets/" + tHandle, nil},
		{"resp_linkset_text.txt", "/api/linksets/" + tHandle, []string{"Accept: application/linkset"}},
		{"resp_linkset_text.txt", "/api/linksets/" + tHandle, []string{"ACCEPT: application/linkset"}},
		{"resp_linkset_links.txt", "/api/linksets/" + tExtra + "/links", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			golden(t, tc.file, dump(f.request(t, tc.target, tc.headers...)))
		})
	}
	pages := []struct{ file, target string }{
		{"showurls_loc.html", "/" + tExtra + "/loc?action=showurls"},
		{"showurls_legacy.html", "/" + tExtra + "/order?action=showurls"},
		{"showurls_badloc.html", "/" + tExtra + "/badloc?action=showurls"},
		{"noredirect_badloc.html", "/" + tExtra + "/badloc?noredirect"},
	}
	for _, tc := range pages {
		t.Run(tc.file, func(t *testing.T) {
			body := append([]byte(nil), f.get(t, tc.target).Body()...)
			checkWellFormed(t, body)
			golden(t, tc.file, body)
		})
	}
}

// TestMalformedLocIgnored: a 10320/loc value that does not parse is
// ignored in favour of the URL values and shown as it is on ?noredirect,
// never a 5xx.
func TestMalformedLocIgnored(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.get(t, "/"+tExtra+"/badloc")
	if resp.StatusCode() != 302 || string(resp.Header.Peek("Location")) != "https://legacy.example.org/bad" {
		t.Errorf("redirect: %d %q, want 302 to the URL value", resp.StatusCode(), resp.Header.Peek("Location"))
	}
	resp = f.get(t, "/"+tExtra+"/badloc?noredirect")
	if want := string(page.AppendText(nil, `<locations><location href="https://never.example.org/"></locations>`)); !strings.Contains(string(resp.Body()), want) {
		t.Errorf("?noredirect does not show the value as it is (%s):\n%s", want, resp.Body())
	}
}

// TestNegotiationHTTP drives content negotiation through the server:
// status, Location and Vary.
func TestNegotiationHTTP(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name, target string
		headers      []string
		status       int
		location     string
		vary         bool
	}{
		{"turtle", "/" + tHandle, []string{"Accept: text/turtle"}, 303, "https://example.org/resource", true},
		{"wildcard", "/" + tHandle, []string{"Accept: */*"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"no Accept", "/" + tHandle, nil, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"Handle JSON does not negotiate", "/" + tHandle, []string{"Accept: application/json"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"vnd.handle+json does not negotiate", "/" + tHandle, []string{"Accept: application/vnd.handle+json"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"no match", "/" + tHandle, []string{"Accept: image/png"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"browser", "/" + tHandle, []string{"Accept: text/turtle", "User-Agent: Opera/9.80"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"explicit ?type wins", "/" + tHandle + "?type=URL", []string{"Accept: text/turtle"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E", true},
		{"urlappend wins", "/" + tHandle + "?urlappend=/x", []string{"Accept: text/turtle"}, 302, "https://landing.example.org/item/42?a=1&b=%3C2%3E/x", true},
		{"typed location, own status", "/" + tExtra + "/loc", []string{"Accept: text/turtle"}, 303, "https://meta.example.org/item.ttl", true},
		{"nothing negotiable: no Vary", "/" + tExtra + "/order", []string{"Accept: text/turtle"}, 302, "https://primary.example.org/x", false},
		{"?noredirect: no Vary", "/" + tHandle + "?noredirect", []string{"Accept: text/turtle"}, 200, "", false},
		{"HEAD", "/" + tHandle, []string{"Accept: text/turtle"}, 303, "https://example.org/resource", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var resp *fasthttp.Response
			if tc.name == "HEAD" {
				resp = f.raw(t, "HEAD "+tc.target+" HTTP/1.1\r\nHost: x\r\n"+strings.Join(tc.headers, "\r\n")+"\r\n\r\n")
			} else {
				resp = f.request(t, tc.target, tc.headers...)
			}
			if resp.StatusCode() != tc.status || string(resp.Header.Peek("Location")) != tc.location {
				t.Errorf("GET %s %q: %d %q, want %d %q", tc.target, tc.headers, resp.StatusCode(), resp.Header.Peek("Location"), tc.status, tc.location)
			}
			if vary := string(resp.Header.Peek("Vary")) == "Accept"; vary != tc.vary {
				t.Errorf("GET %s %q: Vary %q, want Accept: %v", tc.target, tc.headers, resp.Header.Peek("Vary"), tc.vary)
			}
		})
	}
}

// TestLocationsHTTP: the chooseby selection and its parameters through the
// server.
func TestLocationsHTTP(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.Country = func(ip netip.Addr) ([2]byte, bool) { return [2]byte{'U', 'S'}, true }
	})
	tests := []struct {
		target, location string
		status           int
	}{
		{"/" + tExtra + "/loc", "https://us.example.org/item", 302}, // country before weighted
		{"/" + tExtra + "/loc?locatt=view:html", "https://eu.example.org/item", 302},
		{"/" + tExtra + "/loc?locatt=role:metadata", "https://meta.example.org/item.ttl", 303},
		{"/" + tExtra + "/loc?action=metadata", "https://meta.example.org/item.ttl", 303},
		{"/" + tExtra + "/loc?locatt=nothing", "https://us.example.org/item", 302},
		{"/" + tExtra + "/loc?locatt=country:de&urlappend=?x=1", "https://eu.example.org/item?x=1", 302},
		{"/" + tExtra + "/loc?type=URL", "https://legacy.example.org/item", 302},
		{"/" + tExtra + "/order?locatt=view:html", "https://primary.example.org/x", 302},
	}
	for _, tc := range tests {
		resp := f.get(t, tc.target)
		if resp.StatusCode() != tc.status || string(resp.Header.Peek("Location")) != tc.location {
			t.Errorf("GET %s: %d %q, want %d %q", tc.target, resp.StatusCode(), resp.Header.Peek("Location"), tc.status, tc.location)
		}
	}
}

// TestHeadersDroppedLoggedOnce: the refused 10320/headers lines of a record
// are logged once per cache entry, not per request; the accepted ones are
// sent on every redirect.
func TestHeadersDroppedLoggedOnce(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	h := slog.NewTextHandler(&lockedWriter{&mu, &logs}, nil)
	f := newFixture(t, func(c *Config) { c.Logger = slog.New(h) })
	for range 3 {
		resp := f.get(t, "/"+tExtra+"/links")
		if string(resp.Header.Peek("X-Robots-Tag")) != "noindex" || string(resp.Header.Peek("Cache-Control")) != "max-age=60" {
			t.Errorf("record headers missing:\n%s", resp.Header.String())
		}
		if len(resp.Header.PeekCookie("a")) > 0 || string(resp.Header.ContentType()) != "text/html; charset=utf-8" ||
			len(resp.Header.Peek("X-Bad")) > 0 || string(resp.Header.Peek("Access-Control-Allow-Origin")) != "" {
			t.Errorf("a denied header was sent:\n%s", resp.Header.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "10320/headers lines not sent"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if want := `headers="Set-Cookie, Content-Type, X-Bad, Access-Control-Allow-Origin, (malformed line)"`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestLinkHeadersParse parses every Link header field of the answers that
// carry them with a strict RFC 8288 parser, written here and not shared with
// the code that writes them, and checks the FAIR Signposting level 1 links.
func TestLinkHeadersParse(t *testing.T) {
	f := newFixture(t, nil)
	targets := []struct {
		target string
		accept string
		rels   []string // relation types every such answer must carry
	}{
		{"/" + tHandle, "", []string{"cite-as", "describedby", "type", "item", "linkset"}},
		{"/" + tHandle, "text/turtle", []string{"cite-as", "describedby", "type", "item", "linkset"}},
		{"/" + tHandle + "?noredirect", "", []string{"cite-as", "describedby", "type", "item", "linkset"}},
		{"/" + tTestPrefix + "/svc/" + tNS + "/OLD1", "", []string{"cite-as", "describedby", "linkset"}},
		{"/" + tExtra + "/loc", "", []string{"cite-as", "describedby", "linkset"}},
		{"/" + tExtra + "/links", "", []string{"cite-as", "describedby", "linkset", "author", "alternate"}},
		{"/" + tExtra + "/none", "", []string{"cite-as", "describedby", "linkset"}},
		{"/" + tExtra + "/ünï", "", []string{"cite-as", "describedby", "linkset"}},
		{"/" + tExtra + "/a+b c", "", []string{"cite-as", "describedby", "linkset"}},
	}
	for _, tc := range targets {
		var resp *fasthttp.Response
		if tc.accept != "" {
			resp = f.request(t, escapePath(tc.target), "Accept: "+tc.accept)
		} else {
			resp = f.get(t, escapePath(tc.target))
		}
		fields := resp.Header.PeekAll("Link")
		if len(fields) == 0 {
			t.Errorf("GET %s: no Link header", tc.target)
			continue
		}
		var links []link8288
		for _, fv := range fields {
			ls, err := parseLink8288(string(fv))
			if err != nil {
				t.Errorf("GET %s: Link %q: %v", tc.target, fv, err)
				continue
			}
			// One header field per relation type.
			for _, l := range ls[1:] {
				if l.params["rel"] != ls[0].params["rel"] {
					t.Errorf("GET %s: Link field %q mixes relation types", tc.target, fv)
				}
			}
			links = append(links, ls...)
		}
		got := map[string]int{}
		for _, l := range links {
			for _, r := range strings.Fields(l.params["rel"]) {
				got[r]++
			}
		}
		for _, r := range tc.rels {
			if got[r] == 0 {
				t.Errorf("GET %s: no rel=%q link in %q", tc.target, r, fields)
			}
		}
		if got["cite-as"] != 1 || got["linkset"] != 1 {
			t.Errorf("GET %s: %d cite-as and %d linkset links, want one each", tc.target, got["cite-as"], got["linkset"])
		}
		for _, l := range links {
			switch l.params["rel"] {
			case "cite-as":
				if !strings.HasPrefix(l.target, "https://hdl.handle.net/") {
					t.Errorf("GET %s: cite-as %q", tc.target, l.target)
				}
			case "linkset":
				if !strings.HasPrefix(l.target, tPublicURL+"/api/linksets/") || l.params["type"] != "application/linkset+json" {
					t.Errorf("GET %s: linkset link %q %q", tc.target, l.target, l.params)
				}
			}
		}
	}
}

// escapePath percent-encodes the bytes a request line cannot carry.
func escapePath(p string) string {
	return strings.NewReplacer(" ", "%20", "ü", "%C3%BC", "ï", "%C3%AF").Replace(p)
}

// TestLinksetRFC9264 validates every linkset against RFC 9264's JSON form
// (testdata/linkset.schema.json), checks that the text form carries the
// same links, each with its anchor, and that the linkset holds the same
// links as the Link header.
func TestLinksetRFC9264(t *testing.T) {
	raw, err := os.ReadFile("testdata/linkset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("linkset.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("linkset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	// The schema refuses what RFC 9264 does not allow.
	for _, bad := range []string{`{"linkset":{}}`, `{"linkset":[{"item":{"href":"x"}}]}`, `{"linkset":[{"item":[{"type":"a/b"}]}]}`, `{"linkset":[{"Bad Rel":[{"href":"x"}]}]}`} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if schema.Validate(v) == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
	f := newFixture(t, nil)
	for _, h := range []string{tHandle, tExtra + "/links", tExtra + "/loc", tExtra + "/none", tTestPrefix + "/svc/" + tNS + "/OLD1", tExtra + "/ünï"} {
		t.Run(h, func(t *testing.T) {
			resp := f.get(t, escapePath("/api/linksets/"+h))
			if resp.StatusCode() != 200 || string(resp.Header.ContentType()) != "application/linkset+json" {
				t.Fatalf("GET linkset: %d %q", resp.StatusCode(), resp.Header.ContentType())
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(resp.Body()))
			if err != nil {
				t.Fatalf("linkset is not JSON: %v\n%s", err, resp.Body())
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("linkset does not validate: %v\n%s", err, resp.Body())
			}
			var ls struct {
				Linkset []map[string]json.RawMessage `json:"linkset"`
			}
			if err := json.Unmarshal(resp.Body(), &ls); err != nil {
				t.Fatal(err)
			}
			jsonLinks := map[string]bool{}
			for _, ctx := range ls.Linkset {
				var anchor string
				_ = json.Unmarshal(ctx["anchor"], &anchor)
				for rel, raw := range ctx {
					if rel == "anchor" {
						continue
					}
					var targets []struct{ Href, Type string }
					_ = json.Unmarshal(raw, &targets)
					for _, tg := range targets {
						jsonLinks[anchor+" "+rel+" "+tg.Href+" "+tg.Type] = true
					}
				}
			}
			text := f.request(t, escapePath("/api/linksets/"+h), "Accept: application/linkset+json;q=0.5, application/linkset")
			if string(text.Header.ContentType()) != "application/linkset" {
				t.Fatalf("text form: Content-Type %q", text.Header.ContentType())
			}
			links, err := parseLink8288(strings.ReplaceAll(string(text.Body()), "\n", ""))
			if err != nil {
				t.Fatalf("text form does not parse: %v\n%s", err, text.Body())
			}
			textLinks := map[string]bool{}
			for _, l := range links {
				if l.params["anchor"] == "" {
					t.Errorf("text form: link %q without anchor", l.target)
				}
				textLinks[l.params["anchor"]+" "+l.params["rel"]+" "+l.target+" "+l.params["type"]] = true
			}
			if fmt.Sprint(sortedKeys(jsonLinks)) != fmt.Sprint(sortedKeys(textLinks)) {
				t.Errorf("JSON and text forms differ:\n%q\n%q", sortedKeys(jsonLinks), sortedKeys(textLinks))
			}
			// Every link of the header is in the linkset, anchored at the identifier.
			page := f.get(t, escapePath("/"+h))
			for _, fv := range page.Header.PeekAll("Link") {
				hl, _ := parseLink8288(string(fv))
				for _, l := range hl {
					if l.params["rel"] == "linkset" {
						continue
					}
					k := tPublicURL + "/" + escapePath(h) + " " + l.params["rel"] + " " + l.target + " " + l.params["type"]
					if !textLinks[strings.ReplaceAll(k, "ü", "%C3%BC")] {
						t.Errorf("header link %q missing from the linkset %q", k, sortedKeys(textLinks))
					}
				}
			}
		})
	}
	if r := f.get(t, "/api/linksets/"+tTestPrefix+"/svc/"+tNS+"/NEW1"); r.StatusCode() != 404 {
		t.Errorf("reserved identifier's linkset: %d, want 404", r.StatusCode())
	}
	if r := f.get(t, "/api/linksets/"+tExtra+"/nope"); r.StatusCode() != 404 {
		t.Errorf("unknown identifier's linkset: %d, want 404", r.StatusCode())
	}
	if r := f.raw(t, "POST /api/linksets/"+tHandle+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"); r.StatusCode() != 405 {
		t.Errorf("POST linkset: %d, want 405", r.StatusCode())
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// link8288 is one link-value: its target and its parameters (names in
// lower case, quoted values unquoted).
type link8288 struct {
	target string
	params map[string]string
}

// parseLink8288 parses a Link header field value strictly by RFC 8288 §3:
//
//	Link       = #link-value
//	link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
//	link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
//
// with no empty list elements, a URI-Reference of RFC 3986 characters that
// net/url accepts, exactly one rel (a registered name or an absolute URI per
// relation type, RFC 8288 §3.3), at most one of every other parameter, and
// a type that is a media type.
func parseLink8288(s string) ([]link8288, error) {
	var out []link8288
	i := 0
	ows := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	isTchar := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
	}
	token := func() string {
		j := i
		for i < len(s) && isTchar(s[i]) {
			i++
		}
		return s[j:i]
	}
	for {
		ows()
		if i >= len(s) || s[i] != '<' {
			return nil, fmt.Errorf("at %d: want '<'", i)
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			return nil, fmt.Errorf("at %d: no '>'", i)
		}
		target := s[i+1 : i+end]
		for _, c := range []byte(target) {
			if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
				return nil, fmt.Errorf("target %q: byte %q outside RFC 3986", target, c)
			}
		}
		if _, err := url.Parse(target); err != nil {
			return nil, fmt.Errorf("target %q: %v", target, err)
		}
		i += end + 1
		l := link8288{target: target, params: map[string]string{}}
		for {
			ows()
			if i >= len(s) || s[i] == ',' {
				break
			}
			if s[i] != ';' {
				return nil, fmt.Errorf("at %d: want ';' or ','", i)
			}
			i++
			ows()
			name := strings.ToLower(token())
			if name == "" {
				return nil, fmt.Errorf("at %d: empty parameter name", i)
			}
			if _, dup := l.params[name]; dup {
				return nil, fmt.Errorf("parameter %q twice", name)
			}
			ows()
			val := ""
			if i < len(s) && s[i] == '=' {
				i++
				ows()
				if i < len(s) && s[i] == '"' {
					var b strings.Builder
					i++
					for {
						if i >= len(s) {
							return nil, fmt.Errorf("unterminated quoted-string")
						}
						c := s[i]
						if c == '"' {
							i++
							break
						}
						if c == '\\' {
							if i+1 >= len(s) || s[i+1] < 0x20 && s[i+1] != '\t' || s[i+1] == 0x7f {
								return nil, fmt.Errorf("bad quoted-pair")
							}
							c = s[i+1]
							i++
						} else if c < 0x20 && c != '\t' || c == 0x7f {
							return nil, fmt.Errorf("control byte in quoted-string")
						}
						b.WriteByte(c)
						i++
					}
					val = b.String()
				} else if val = token(); val == "" {
					return nil, fmt.Errorf("at %d: empty parameter value", i)
				}
			}
			l.params[name] = val
		}
		rel, ok := l.params["rel"]
		if !ok {
			return nil, fmt.Errorf("link %q without rel", target)
		}
		for _, r := range strings.Split(rel, " ") {
			reg := r != "" && r[0] >= 'a' && r[0] <= 'z' && strings.Trim(r, "abcdefghijklmnopqrstuvwxyz0123456789.-") == ""
			if u, err := url.Parse(r); !reg && (err != nil || !u.IsAbs()) {
				return nil, fmt.Errorf("relation type %q is neither registered-name syntax nor an absolute URI", r)
			}
		}
		if typ, ok := l.params["type"]; ok {
			a, b, ok := strings.Cut(typ, "/")
			if !ok || a == "" || b == "" || strings.ContainsAny(typ, " ;,") {
				return nil, fmt.Errorf("type %q is not a media type", typ)
			}
		}
		out = append(out, l)
		if i >= len(s) {
			return out, nil
		}
		i++ // ','
		ows()
		if i >= len(s) {
			return nil, fmt.Errorf("empty list element at the end")
		}
	}
}

func TestParseLink8288Strict(t *testing.T) {
	for _, bad := range []string{
		``, `<a>`, `<a>; rel=`, `<a> rel="x"`, `<a>; rel="x",`, `<a>; rel="x", , <b>; rel="y"`, `<a b>; rel="x"`,
		`<a>; rel="x"; rel="y"`, `<a>; rel="x"; type="text"`, `<a>; rel=x; type=text/turtle`, `<a>; rel="Bad!"`, `<a>; rel="x`, `<a>; rel="x"junk`,
	} {
		if _, err := parseLink8288(bad); err == nil {
			t.Errorf("parseLink8288(%q) accepted", bad)
		}
	}
	ls, err := parseLink8288(`<https://a.example/>; rel="author"; title="a \"b\"", <https://b.example/>;rel=item;type="text/turtle"`)
	if err != nil || len(ls) != 2 || ls[0].params["title"] != `a "b"` || ls[1].params["type"] != "text/turtle" {
		t.Errorf("parseLink8288 = %v, %v", ls, err)
	}
}
