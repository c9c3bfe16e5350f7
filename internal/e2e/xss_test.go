package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Payloads for every free-text or URL metadata field. Custom ids cannot carry
// markup at all ([A-Za-z0-9./-], TestHostileAdminPayloads checks the 422).
const (
	xLabel    = `<script>alert("label")</script>`
	xDesc     = `<img src=x onerror=alert("desc")>`
	xContact  = `"><script>alert("contact")</script>@example.org`
	xURL      = `https://example.org/"><svg/onload=alert("url")>`
	xVariant  = `https://example.org/"><script>alert("variant")</script>`
	xEncoding = `<b onmouseover=alert("enc")>`
	xMedia    = `text/turtle`
	xRelID    = `ex:<script>alert("rel")</script>`
	xRelURL   = `https://example.org/"onmouseover="alert('relurl')`
	xHdlID    = `21.12345/"><iframe/src=javascript:alert('hdl')>`
	xHdlURL   = `https://hdl.handle.net/21.12345/'><script>alert('hdlurl')</script>`
)

// xssPayload is a create body with a payload in every field.
func xssPayload(status string) []byte {
	b, _ := json.Marshal(map[string]any{"url": xURL, "metadata": map[string]any{
		"status": status, "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"curation_contact": xContact,
		"resource_info": map[string]any{"label": xLabel, "description": xDesc, "resource_category": "SAMPLE",
			"representation_variants": []any{map[string]any{"variant_url": xVariant, "media_type": xMedia, "encoding_format": xEncoding}}},
		"related_identifiers": []any{
			map[string]any{"relation_type": "IS_OBSOLETED_BY", "related_identifier": map[string]any{"type": "ExampleIdentifier", "identifier": xRelID, "resolving_url": xRelURL}},
			map[string]any{"relation_type": "IS_DERIVED_FROM", "related_identifier": map[string]any{"type": "HandleIdentifier", "identifier": xHdlID, "resolving_url": xHdlURL}},
		},
	}})
	return b
}

// jsonText is s as it appears inside JSON text shown on a page (no HTML escaping).
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// reporter is the part of testing.TB the page checks use, so that
// TestPageChecksCatchPayloads can prove they fail on a bad page.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// page is a parsed HTML page.
type page struct {
	root  *html.Node
	text  string      // all text nodes, concatenated
	title string      // <title> text
	links [][2]string // href, link text
}

var dangerousElements = map[string]bool{"script": true, "iframe": true, "object": true, "embed": true,
	"svg": true, "img": true, "base": true, "frame": true, "math": true, "link": true}

// styleSheetRef is the one <link> a resolver page carries: its own style
// sheet, named by the sheet's content.
var styleSheetRef = regexp.MustCompile(`^/style-[0-9a-f]{12}\.css$`)

// ownStyleSheet reports whether n is the resolver's own style sheet link:
// in <head>, rel="stylesheet", an href of the sheet's form, nothing else.
func ownStyleSheet(n *html.Node) bool {
	if n.Data != "link" || n.Parent == nil || n.Parent.Data != "head" || len(n.Attr) != 2 {
		return false
	}
	var rel, href string
	for _, a := range n.Attr {
		switch a.Key {
		case "rel":
			rel = a.Val
		case "href":
			href = a.Val
		}
	}
	return rel == "stylesheet" && styleSheetRef.MatchString(href)
}

// checkHTML parses body and fails on anything executable a payload could
// have planted: script-like elements, on* attributes, javascript:/data: URLs,
// meta refresh. It returns the page for further checks.
func checkHTML(t reporter, body []byte) *page {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("html.Parse: %v", err)
	}
	p := &page{root: root}
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			if dangerousElements[n.Data] && !ownStyleSheet(n) {
				t.Errorf("page has a <%s> element: %s", n.Data, render(n))
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(k, "on") {
					t.Errorf("page has an event-handler attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
				}
				switch k {
				case "href", "src", "action", "formaction", "xlink:href", "srcdoc":
					for _, s := range []string{"javascript:", "data:", "vbscript:"} {
						if strings.HasPrefix(v, s) {
							t.Errorf("<%s %s=%q>: executable URL", n.Data, a.Key, a.Val)
						}
					}
				case "http-equiv":
					if v == "refresh" {
						t.Errorf("page has a meta refresh")
					}
				}
			}
			if n.Data == "title" && n.FirstChild != nil {
				p.title = n.FirstChild.Data
			}
			if n.Data == "a" {
				p.links = append(p.links, [2]string{attr(n, "href"), textOf(n)})
			}
		case html.TextNode:
			text.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	p.text = text.String()
	return p
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func render(n *html.Node) string {
	var b bytes.Buffer
	html.Render(&b, n)
	return b.String()
}

// wantText fails unless every s is present as text on the page.
func (p *page) wantText(t reporter, what string, ss ...string) {
	t.Helper()
	for _, s := range ss {
		if !strings.Contains(p.text, s) {
			t.Errorf("%s: payload %q is not on the page as text", what, s)
		}
	}
}

// tables returns, per table, the header cells and the body rows' cells, and
// fails if a body row does not have one cell per header (a broken table).
func (p *page) tables(t reporter) (heads [][]string, rows [][][]string) {
	t.Helper()
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "table" {
			var head []string
			var body [][]string
			var walk func(*html.Node, bool)
			walk = func(n *html.Node, inHead bool) {
				if n.Type == html.ElementNode {
					switch n.Data {
					case "thead":
						inHead = true
					case "tr":
						var cells []string
						for c := n.FirstChild; c != nil; c = c.NextSibling {
							if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
								cells = append(cells, textOf(c))
							} else if c.Type == html.ElementNode {
								t.Errorf("table row holds a <%s>", c.Data)
							}
						}
						if inHead {
							head = cells
						} else {
							body = append(body, cells)
						}
						return
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, inHead)
				}
			}
			walk(n, false)
			for i, r := range body {
				if len(r) != len(head) {
					t.Errorf("table row %d has %d cells, header has %d: %q", i, len(r), len(head), r)
				}
			}
			heads, rows = append(heads, head), append(rows, body)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(p.root)
	return heads, rows
}

// TestXSSPayloadsRenderEscaped creates identifiers with a payload in every
// metadata field through the admin API and checks, by parsing the HTML, that
// the ?noredirect page, the tombstones, the reserved page, the redirect page
// and 404 pages show the payloads as text and nothing executable.
func TestXSSPayloadsRenderEscaped(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	ids := map[string]identifier{}
	for _, st := range []string{"REGISTERED", "OBSOLETED", "DEPRECATED", "SUBMITTED"} {
		ids[st] = n.create(t, n.Key, xssPayload(st))
	}
	base := n.resolverURL()
	fields := []string{jsonText(xLabel), jsonText(xDesc), jsonText(xVariant), jsonText(xEncoding), jsonText(xRelID), jsonText(xRelURL), jsonText(xHdlID), jsonText(xHdlURL)}

	get := func(t *testing.T, path string, want int) (reply, *page) {
		t.Helper()
		r := mustDo(t, "GET", base+path, nil)
		if r.Status != want {
			t.Fatalf("GET %s = %d, want %d\n%.400s", path, r.Status, want, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q", ct)
		}
		noCRLFInHeaders(t, r.Header)
		return r, checkHTML(t, r.Body)
	}

	t.Run("noredirect", func(t *testing.T) {
		for _, st := range []string{"REGISTERED", "OBSOLETED", "DEPRECATED"} {
			_, p := get(t, "/"+ids[st].Handle+"?noredirect", 200)
			p.wantText(t, st+" ?noredirect", xURL, xContact)
			p.wantText(t, st+" ?noredirect RESOURCE and RELATED values", fields...)
			heads, rows := p.tables(t)
			if len(heads) != 1 || len(rows[0]) < 9 {
				t.Fatalf("?noredirect: want one table with the 9 values, got %d tables %v", len(heads), rows)
			}
			if got := strings.Join(heads[0], "|"); got != "Index|Type|Timestamp|Data" {
				t.Errorf("table header %q", got)
			}
			for _, l := range p.links {
				if l[1] == xURL && !strings.HasPrefix(l[0], "https://example.org/") {
					t.Errorf("URL link href %q", l[0])
				}
			}
		}
	})
	t.Run("tombstones", func(t *testing.T) {
		for _, st := range []string{"OBSOLETED", "DEPRECATED"} {
			_, p := get(t, "/"+ids[st].Handle, http.StatusGone)
			p.wantText(t, st+" tombstone", xLabel, xDesc, xURL, xContact, xRelID, xHdlID)
			var hrefs []string
			for _, l := range p.links {
				hrefs = append(hrefs, l[0])
				if !strings.HasPrefix(l[0], "https://") && !strings.HasPrefix(l[0], "/") && !strings.HasPrefix(l[0], "mailto:") {
					t.Errorf("tombstone link %q is neither https, mailto nor relative", l[0])
				}
			}
			if !strings.Contains(strings.Join(hrefs, " "), "https://example.org/%22onmouseover=%22alert(") {
				t.Errorf("related identifier link not percent-encoded: %q", hrefs)
			}
		}
	})
	t.Run("reserved", func(t *testing.T) {
		// docs/product.md §5: a SUBMITTED identifier is not public, with or without ?noredirect.
		for _, q := range []string{"", "?noredirect"} {
			r, p := get(t, "/"+ids["SUBMITTED"].Handle+q, http.StatusNotFound)
			if !strings.Contains(strings.ToLower(p.text), "reserved") {
				t.Errorf("reserved page%s does not say so: %.300s", q, r.Body)
			}
			if strings.Contains(p.text, "alert(") {
				t.Errorf("reserved page%s shows the unpublished metadata", q)
			}
		}
	})
	t.Run("redirect page", func(t *testing.T) {
		r := mustDo(t, "GET", base+"/"+ids["REGISTERED"].Handle, nil)
		if r.Status != http.StatusFound {
			t.Fatalf("status %d", r.Status)
		}
		loc := r.Header.Get("Location")
		if loc != "https://example.org/%22%3E%3Csvg/onload=alert(%22url%22)%3E" {
			t.Errorf("Location %q", loc)
		}
		p := checkHTML(t, r.Body)
		if len(p.links) != 1 || p.links[0][0] != loc {
			t.Errorf("redirect page links %q, want one to the Location", p.links)
		}
	})
	t.Run("404 pages", func(t *testing.T) {
		for _, tc := range []struct{ path, text string }{
			{"/21.12345/svc/DMO/%3Cscript%3Ealert(%22404%22)%3C%2Fscript%3E", `21.12345/svc/DMO/<script>alert("404")</script>`},
			{"/21.12345/svc/DMO/%22%20onmouseover%3D%22alert(1)%22", `21.12345/svc/DMO/" onmouseover="alert(1)"`},
			{"/21.12345/%3C%2Ftitle%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", `21.12345/</title><script>alert(1)</script>`},
			{"/21.T12345/svc/DMO/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E?noredirect", `<img src=x onerror=alert(1)>`},
		} {
			_, p := get(t, tc.path, http.StatusNotFound)
			p.wantText(t, "404 "+tc.path, tc.text)
		}
	})
	t.Run("home", func(t *testing.T) {
		_, p := get(t, "/?q=%3Cscript%3Ealert(1)%3C/script%3E", 200)
		if p.title == "" {
			t.Error("home page has no title")
		}
	})
}

// failures records what the page checks report.
type failures struct{ msgs []string }

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *failures) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

// TestPageChecksCatchPayloads proves the checks above fail on pages that
// render a payload unescaped or a broken table.
func TestPageChecksCatchPayloads(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"script element", `<p>x</p><script>alert(1)</script>`},
		{"event handler", `<p><img src=x onerror=alert(1)></p>`},
		{"attribute break-out", `<a href="https://example.org/" onmouseover="alert(1)">x</a>`},
		{"javascript link", `<a href=" JavaScript:alert(1)">x</a>`},
		{"svg", `<svg/onload=alert(1)>`},
		{"style sheet in the body", `<p>x</p><link rel="stylesheet" href="/style-0123456789ab.css">`},
		{"broken table", `<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>`},
		{"payload missing as text", `<p>nothing</p>`},
	} {
		f := &failures{}
		p := checkHTML(f, []byte("<!DOCTYPE html><html><head><title>t</title></head><body>"+tc.body+"</body></html>"))
		p.tables(f)
		if tc.name == "payload missing as text" {
			p.wantText(f, "page", xLabel)
		}
		if len(f.msgs) == 0 {
			t.Errorf("%s: the page checks found nothing wrong in %q", tc.name, tc.body)
		}
	}
	// In <head>, only the resolver's own sheet passes.
	for _, link := range []string{
		`<link rel="stylesheet" href="https://evil.example/style-0123456789ab.css">`,
		`<link rel="stylesheet" href="/style-0123456789ab.css?x">`,
		`<link rel="import" href="/style-0123456789ab.css">`,
		`<link rel="stylesheet" href="/style-0123456789ab.css" media="print">`,
	} {
		f := &failures{}
		checkHTML(f, []byte("<!DOCTYPE html><html><head><title>t</title>"+link+"</head><body><p>x</p></body></html>"))
		if len(f.msgs) == 0 {
			t.Errorf("the page checks found nothing wrong with %s in <head>", link)
		}
	}
	f := &failures{}
	p := checkHTML(f, []byte(`<title>t</title><link rel="stylesheet" href="/style-0123456789ab.css" /><p>`+html.EscapeString(xLabel)+"</p>"))
	p.wantText(f, "page", xLabel)
	if len(f.msgs) != 0 {
		t.Errorf("an escaped payload or the page's own style sheet is reported: %q", f.msgs)
	}
}

// TestControlCharactersInMetadata: the admin API accepts control characters in
// free-text metadata (the model restricts only URLs), so the pages must not
// emit them raw: NUL and ESC come out as U+FFFD, and nothing else breaks.
func TestControlCharactersInMetadata(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	label := "a\x00b\x1bc\u2028d\x7fe"
	r := mustDo(t, "POST", n.adminURL()+testColl, payload("https://example.org/x", "OBSOLETED", resourceInfo(label, "d\x00")), auth(n.Key)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create with control characters in the label = %d, want 201 (accepted as free text): %s", r.Status, r.Body)
	}
	var id identifier
	json.Unmarshal(r.Body, &id)
	if got := labelOf(id.Metadata); got != label {
		t.Errorf("label stored as %q, want %q", got, label)
	}
	for _, path := range []string{"/" + id.Handle, "/" + id.Handle + "?noredirect"} {
		rep := mustDo(t, "GET", n.resolverURL()+path, nil)
		if bytes.ContainsAny(rep.Body, "\x00\x1b") {
			t.Errorf("GET %s: raw NUL or ESC in the HTML", path)
		}
		p := checkHTML(t, rep.Body)
		if path == "/"+id.Handle {
			p.wantText(t, "tombstone", "a\ufffdb\ufffdc\u2028d")
		}
	}
}
