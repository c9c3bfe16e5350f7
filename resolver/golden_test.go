package resolver

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// checkWellFormed parses an HTML page twice: with golang.org/x/net/html (the
// HTML5 algorithm; must yield a document with head, title and body) and with a
// strict XML decoder (the pages are written XHTML-compatible, so every
// element must be closed and every entity known).
func checkWellFormed(t *testing.T, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("html.Parse: %v", err)
	}
	var title, body bool
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			title = title || n.Data == "title"
			body = body || n.Data == "body" && n.FirstChild != nil
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if !title || !body {
		t.Errorf("page lacks a title or a non-empty body:\n%s", page)
	}
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v\n%s", err, page)
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		t.Errorf("unbalanced elements (depth %d)", depth)
	}
}

// TestGolden pins the bytes users see: Handle JSON and the HTML pages.
func TestGolden(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		file, target string
		html         bool
	}{
		{"api_record.json", "/api/handles/" + strings.ToLower(tHandle), false},
		{"api_mixed.json", "/api/handles/" + tExtra + "/mixed", false},
		{"api_filtered.json", "/api/handles/" + tExtra + "/order?type=URL.&index=2", false},
		{"api_pretty.json", "/api/handles/" + tHandle + "?pretty", false},
		{"api_jsonp.js", "/api/handles/" + tExtra + "/order?callback=jQuery.cb-1", false},
		{"api_not_found.json", "/api/handles/" + tPrefix + "/svc/K7Q/NOPE", false},
		{"api_nothing_public.json", "/api/handles/" + tExtra + "/private", false},
		{"noredirect.html", "/" + tHandle + "?noredirect", true},
		{"noredirect_mixed.html", "/" + tExtra + "/mixed?noredirect", true},
		{"noredirect_filtered.html", "/" + tExtra + "/order?noredirect&index=2", true},
		{"tombstone_obsoleted.html", "/" + tTestPrefix + "/svc/" + tNS + "/OLD1", true},
		{"tombstone_deprecated.html", "/" + tTestPrefix + "/svc/" + tNS + "/DEP1", true},
		{"reserved.html", "/" + tTestPrefix + "/svc/" + tNS + "/NEW1", true},
		{"not_found.html", "/" + tPrefix + "/svc/K7Q/<nope>", true},
		{"malformed.html", "/" + tPrefix + "/svc/" + tNS + "/" + tBadID, true},
		{"prefix_not_found.html", "/99.999/x", true},
		{"redirect.html", "/" + tHandle, true},
		{"home.html", "/", true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			resp := f.get(t, strings.ReplaceAll(tc.target, "<", "%3C"))
			body := append([]byte(nil), resp.Body()...)
			if tc.html {
				checkWellFormed(t, body)
			}
			golden(t, tc.file, body)
		})
	}
}
