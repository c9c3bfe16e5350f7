package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawCase is one hand-written HTTP/1.1 exchange against a real listener.
type rawCase struct {
	name string
	req  string
	want int // exact status of the first response
	// responses is how many responses the server may send (default 1): a
	// smuggled second request must never be answered.
	responses int
}

func runRawCases(t *testing.T, addr string, cases []rawCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rawExchange(t, addr, []byte(tc.req), 1500*time.Millisecond)
			wantN := tc.responses
			if wantN == 0 {
				wantN = 1
			}
			if len(r.Statuses) == 0 {
				t.Fatalf("no response (%v); want %d", r.Err, tc.want)
			}
			if r.Statuses[0] != tc.want {
				t.Errorf("status %d, want %d\n%s", r.Statuses[0], tc.want, r.Bodies[0])
			}
			if len(r.Statuses) != wantN {
				t.Errorf("%d responses %v, want %d: a second request was processed from the body", len(r.Statuses), r.Statuses, wantN)
			}
			for i, s := range r.Statuses {
				if s >= 500 && s != tc.want {
					t.Errorf("response %d: 5xx %d", i, s)
				}
			}
		})
	}
}

// TestHostileResolverRaw sends malformed HTTP/1.1 to the public resolver over
// raw TCP: oversized headers and handles, smuggling attempts, NUL and invalid
// UTF-8 bytes on the wire. Each case asserts the exact status.
func TestHostileResolverRaw(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	h := n.Handles[0]
	const smuggled = "GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n"
	runRawCases(t, n.addr["resolver"], []rawCase{
		{name: "header over MaxHeaderBytes", req: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + string(bigHeader(20000)) + "\r\n\r\n", want: 431},
		{name: "10 kB handle in the request line", req: "GET /21.12345/svc/DMO/" + string(bigHeader(10000)) + " HTTP/1.1\r\nHost: x\r\n\r\n", want: 431},
		{name: "10 kB handle on /api/handles", req: "GET /api/handles/21.12345/svc/DMO/" + string(bigHeader(10000)) + " HTTP/1.1\r\nHost: x\r\n\r\n", want: 431},
		{name: "3 kB handle (over MaxHandleLen, within the header limit)", req: "GET /21.12345/svc/DMO/" + string(bigHeader(3000)) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", want: 400},
		{name: "body over MaxBodyBytes", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n" + string(bigHeader(100000)), want: 413},
		{name: "smuggling: Content-Length and Transfer-Encoding", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, want: 400},
		{name: "smuggling: two different Content-Lengths", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 45\r\n\r\nabcd" + smuggled, want: 400},
		{name: "smuggling: Transfer-Encoding xchunked", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, want: 400},
		{name: "smuggling: Transfer-Encoding chunked, identity", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + smuggled, want: 400},
		{name: "smuggling: space before the colon", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, want: 400},
		{name: "chunk size overflow", req: "POST /api/handles/" + h + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n", want: 400},
		{name: "negative Content-Length", req: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", want: 400},
		{name: "NUL in the request line", req: "GET /21.12345/a\x00b HTTP/1.1\r\nHost: x\r\n\r\n", want: 400},
		{name: "raw 0xFF in the path", req: "GET /21.12345/a\xffb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", want: 400},
		{name: "NUL in a header value", req: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", want: 400},
		{name: "bare CR in a header value", req: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", want: 400},
		{name: "invalid UTF-8 in a header value is ignored", req: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\xff\xfeb\r\nConnection: close\r\n\r\n", want: 200},
		{name: "missing Host", req: "GET / HTTP/1.1\r\n\r\n", want: 400},
		{name: "HTTP/0.9 request line", req: "GET /\r\n\r\n", want: 400},
	})
}

// TestHostileResolverURLs sends well-framed requests whose path, query or
// headers carry hostile bytes.
func TestHostileResolverURLs(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	h := n.Handles[0]
	base := n.resolverURL()
	landing := "https://repository.demo-catalysis.example.org/samples/cu-zno-al2o3-2025-017"
	for _, tc := range []struct {
		name, path string
		hdr        []string
		want       int
		location   string // exact Location, when want is a redirect
		bodyPrefix string
		bodyLacks  string // must not appear in the body (markup sent back raw)
	}{
		{name: "invalid UTF-8 in the handle", path: "/21.12345/svc/DMO/%FF", want: 400},
		{name: "NUL in the handle", path: "/21.12345/svc/DMO/a%00b", want: 400},
		{name: "CR/LF in the handle", path: "/" + h + "%0d%0aSet-Cookie:x=1", want: 400},
		{name: "invalid UTF-8 and NUL in /api/handles", path: "/api/handles/21.12345/svc/DMO/%FF%00", want: 400},
		{name: "invalid UTF-8 and NUL in the query", path: "/" + h + "?noredirect&x=%FF%00", want: 200},
		{name: "NUL type and overflowing index", path: "/api/handles/" + h + "?type=%00&index=99999999999999999999", want: 400},
		{name: "urlappend with CR/LF", path: "/" + h + "?urlappend=%0d%0aSet-Cookie:%20a=b", want: 302, location: landing + "%0D%0ASet-Cookie:%20a=b"},
		{name: "urlappend with invalid UTF-8", path: "/" + h + "?urlappend=%FF", want: 302, location: landing + "%FF"},
		{name: "urlappend with NUL", path: "/" + h + "?urlappend=%00x", want: 302, location: landing + "%00x"},
		{name: "lookup with CR/LF", path: "/lookup?h=" + strings.ReplaceAll(h, "/", "%2F") + "%0d%0aSet-Cookie:x=1", want: 400},
		{name: "lookup with markup", path: "/lookup?h=%3Cscript%3E", want: 400, bodyLacks: "<script>"},
		{name: "JSONP callback with markup is sanitised", path: "/api/handles/" + h + "?callback=%3Cscript%3E", want: 200, bodyPrefix: "_script_("},
		{name: "JSONP callback with a statement", path: "/api/handles/" + h + "?callback=alert(1)//", want: 200, bodyPrefix: "alert_1___("},
		{name: "invalid UTF-8 and NUL-free junk in headers", path: "/" + h, hdr: []string{"Accept", "\xff\xfe", "Referer", "\xc3\x28"}, want: 302, location: landing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := do(defaultClient, "GET", base+tc.path, nil, tc.hdr...)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.want {
				t.Errorf("GET %s = %d, want %d\n%.300s", tc.path, r.Status, tc.want, r.Body)
			}
			noCRLFInHeaders(t, r.Header, "Set-Cookie")
			if tc.location != "" && r.Header.Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", r.Header.Get("Location"), tc.location)
			}
			if tc.bodyLacks != "" && bytes.Contains(r.Body, []byte(tc.bodyLacks)) {
				t.Errorf("body holds %q:\n%s", tc.bodyLacks, r.Body)
			}
			if tc.bodyPrefix != "" && !bytes.HasPrefix(r.Body, []byte(tc.bodyPrefix)) {
				t.Errorf("body %.80q, want prefix %q", r.Body, tc.bodyPrefix)
			}
		})
	}
}

// TestHostileAdminRaw sends malformed HTTP/1.1 to the admin listener over raw TCP.
func TestHostileAdminRaw(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	coll := testColl
	auth := "Authorization: Bearer " + n.Key + "\r\nContent-Type: application/json\r\n"
	const smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	runRawCases(t, n.addr["admin"], []rawCase{
		{name: "header over MaxHeaderBytes", req: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + string(bigHeader(32<<10)) + "\r\n\r\n", want: 431},
		{name: "smuggling: Content-Length and Transfer-Encoding", req: "POST " + coll + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, want: 400},
		{name: "smuggling: two different Content-Lengths", req: "POST " + coll + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 4\r\nContent-Length: 40\r\n\r\nabcd" + smuggled, want: 400},
		// RFC 9112 §6.1: an unknown transfer coding SHOULD get 501. net/http
		// answers it before any handler runs; the one 5xx this suite allows.
		{name: "smuggling: Transfer-Encoding xchunked", req: "POST " + coll + " HTTP/1.1\r\nHost: x\r\n" + auth + "Transfer-Encoding: xchunked\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, want: 501},
		{name: "smuggling: space before the colon", req: "POST " + coll + " HTTP/1.1\r\nHost: x\r\n" + auth + "Transfer-Encoding : chunked\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, want: 400},
		{name: "NUL in the request line", req: "GET /healthz\x00 HTTP/1.1\r\nHost: x\r\n\r\n", want: 400},
		{name: "NUL in a header value", req: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", want: 400},
		{name: "bare CR in a header value", req: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", want: 400},
		{name: "missing Host", req: "GET /healthz HTTP/1.1\r\n\r\n", want: 400},
		{name: "invalid UTF-8 in the key", req: "GET " + coll + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pid_\xff\xfe\r\nConnection: close\r\n\r\n", want: 401},
	})
}

// TestHostileAdminPayloads sends hostile JSON and hostile URLs to the admin
// API: size and depth bombs, invalid UTF-8, NUL, CR/LF that would reach a
// Location header. Every refusal is problem+json naming the problem.
func TestHostileAdminPayloads(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	a := n.adminURL()
	existing := n.create(t, n.Key, payload("https://example.org/existing", "REGISTERED", resourceInfo("existing", "d")))
	withRI := func(ri map[string]any) []byte { return payload("https://example.org/x", "REGISTERED", ri) }
	withMeta := func(k string, v any) []byte {
		var m map[string]any
		json.Unmarshal(payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), &m)
		m["metadata"].(map[string]any)[k] = v
		b, _ := json.Marshal(m)
		return b
	}
	related := func(k int) []any {
		out := make([]any, k)
		for i := range out {
			out[i] = map[string]any{"relation_type": "CITES", "related_identifier": map[string]any{"type": "ExampleIdentifier", "identifier": "ex:x"}}
		}
		return out
	}
	// Each item's identifier is ~400 characters: 700 of them pass the
	// schema but not the store's limit per value, which answered 500.
	longRelated := func(k int) []any {
		out := make([]any, k)
		for i := range out {
			out[i] = map[string]any{"relation_type": "CITES", "related_identifier": map[string]any{"type": "ExampleIdentifier",
				"identifier": "ex:" + strings.Repeat("r", 400) + strconv.Itoa(i)}}
		}
		return out
	}
	manyKeys := func(k int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"url":"https://example.org/x","metadata":{`)
		for i := range k {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
		}
		b.WriteString("}}")
		return b.Bytes()
	}
	for _, tc := range []struct {
		name         string
		method, path string
		body         []byte
		chunked      bool // hide the length so the client sends chunked
		hdr          []string
		want         int
		detail       string // substring of the problem's detail or errors
	}{
		{name: "body over 1 MiB with Content-Length", method: "POST", path: testColl, body: append(append([]byte(`{"url":"`), bigHeader(2<<20)...), `"}`...), want: 413, detail: "exceeds the limit of 1048576 bytes"},
		{name: "body over 1 MiB chunked", method: "POST", path: testColl, body: append(append([]byte(`{"url":"`), bigHeader(2<<20)...), `"}`...), chunked: true, want: 413, detail: "exceeds the limit of 1048576 bytes"},
		{name: "array depth bomb", method: "POST", path: testColl, body: append(bytes.Repeat([]byte("["), 100000), bytes.Repeat([]byte("]"), 100000)...), want: 400, detail: "nests deeper than 16 levels"},
		{name: "object depth 17", method: "POST", path: testColl, body: []byte(strings.Repeat(`{"a":`, 17) + "1" + strings.Repeat("}", 17)), want: 400, detail: "nests deeper than 16 levels"},
		{name: "unclosed depth bomb", method: "POST", path: testColl, body: bytes.Repeat([]byte("["), 500000), want: 400, detail: "nests deeper than 16 levels"},
		{name: "900 kB label", method: "POST", path: testColl, body: withRI(resourceInfo(strings.Repeat("a", 900000), "d")), want: 422, detail: "metadata.resource_info.label"},
		{name: "5000 related identifiers", method: "POST", path: testColl, body: withMeta("related_identifiers", related(5000)), want: 422, detail: "may have at most 1000 entries"},
		{name: "50000 unknown metadata keys", method: "POST", path: testColl, body: manyKeys(50000), want: 422, detail: "is not a field here; the fields are"},
		{name: "invalid UTF-8 in JSON", method: "POST", path: testColl, body: bytes.Replace(withRI(resourceInfo("XX", "d")), []byte("XX"), []byte("\xff\xfe"), 1), want: 400, detail: "not valid UTF-8"},
		{name: "raw NUL byte in JSON", method: "POST", path: testColl, body: bytes.Replace(withRI(resourceInfo("XX", "d")), []byte("XX"), []byte("a\x00b"), 1), want: 400, detail: "not valid JSON"},
		{name: "duplicate keys", method: "POST", path: testColl, body: []byte(`{"url":"https://example.org/a","url":"https://example.org/b","metadata":{}}`), want: 400, detail: "duplicate key"},
		{name: "two JSON values", method: "POST", path: testColl, body: append(withRI(resourceInfo("l", "d")), "{}"...), want: 400, detail: "more than one JSON value"},
		{name: "number overflow in size", method: "POST", path: testColl, body: withRI(map[string]any{"resource_category": "SAMPLE", "representation_variants": []any{map[string]any{"variant_url": "https://example.org/v", "media_type": "text/turtle", "size": json.Number("1e400")}}}), want: 422, detail: "size"},
		{name: "CR/LF in url on create", method: "POST", path: testColl, body: payload("https://example.org/a\r\nSet-Cookie: x=1", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "control characters"},
		{name: "CR/LF in url on update", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"https://example.org/a\r\nLocation: https://evil.example"}`), want: 422, detail: "control characters"},
		{name: "NUL in url on update", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"https://example.org/a\u0000b"}`), want: 422, detail: "control characters"},
		{name: "CR/LF in variant_url", method: "PUT", path: testColl + existing.ID, body: []byte(`{"metadata":{"resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://example.org/a\r\nX: y","media_type":"text/turtle"}]}}}`), want: 422, detail: "variant_url"},
		{name: "javascript: url", method: "POST", path: testColl, body: payload("javascript:alert(1)", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "javascript:"},
		{name: "data: url", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"data:text/html,<script>alert(1)</script>"}`), want: 422, detail: "url"},
		{name: "customid with markup", method: "PUT", path: "/testpid/v2?customid=%3Cscript%3E", body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "must start with a letter or a digit"},
		{name: "customid with NUL", method: "PUT", path: "/testpid/v2?customid=a%00b", body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "may hold only letters A to Z"},
		{name: "customid with CR/LF", method: "PUT", path: "/testpid/v2?customid=a%0d%0aSet-Cookie:x", body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "may hold only letters A to Z"},
		{name: "customid of 10 kB", method: "PUT", path: "/testpid/v2?customid=" + strings.Repeat("a", 10000), body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "must be 1 to 36 characters long"},
		{name: "invalid UTF-8 in the id path", method: "GET", path: testColl + "%FF", want: 404, detail: "invalid UTF-8"},
		{name: "NUL in the id path", method: "GET", path: testColl + "a%00b", want: 404, detail: "control byte"},
		{name: "10 kB id path", method: "GET", path: testColl + strings.Repeat("A", 10000), want: 404, detail: "no identifier"},
		{name: "Idempotency-Key with a tab", method: "POST", path: testColl, body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), hdr: []string{"Idempotency-Key", "a\tb"}, want: 400, detail: "Idempotency-Key"},
		{name: "If-Match with junk", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"https://example.org/y"}`), hdr: []string{"If-Match", "\"\xff\""}, want: 412, detail: "read it again and retry"},
		{name: "schema-valid but over the store's value limit", method: "POST", path: testColl, body: withMeta("related_identifiers", longRelated(700)), want: 422, detail: "the limit per value is 262144 bytes"},
		{name: "lone high surrogate", method: "POST", path: testColl, body: bytes.Replace(withRI(resourceInfo("XX", "d")), []byte("XX"), []byte(`a\ud800b`), 1), want: 422, detail: "lone UTF-16 surrogate"},
		{name: "lone low surrogate on update", method: "PUT", path: testColl + existing.ID, body: []byte(`{"metadata":{"resource_info":{"label":"\udc00"}}}`), want: 422, detail: "lone UTF-16 surrogate"},
		{name: "bidi override in the URL's host", method: "POST", path: testColl, body: payload("https://\u202eevil.org/", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "bidirectional control or invisible character"},
		{name: "zero-width joiner in the URL's host", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"https://e\u200dvil.org/"}`), want: 422, detail: "bidirectional control or invisible character"},
		{name: "zone id in the URL", method: "POST", path: testColl, body: payload("https://[fe80::1%25eth0]/", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "zone identifier"},
		{name: "empty port", method: "POST", path: testColl, body: payload("https://a.org:/", "REGISTERED", resourceInfo("l", "d")), want: 422, detail: "port is empty"},
		{name: "port out of range", method: "PUT", path: testColl + existing.ID, body: []byte(`{"url":"https://a.org:99999/"}`), want: 422, detail: "port is out of range"},
		{name: "HTML content type", method: "POST", path: testColl, body: payload("https://example.org/x", "REGISTERED", resourceInfo("l", "d")), hdr: []string{"Content-Type", "text/html"}, want: 415, detail: "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := append(auth(n.Key), tc.hdr...)
			var body io.Reader
			if tc.body != nil {
				body = bytes.NewReader(tc.body)
				if tc.chunked {
					body = io.MultiReader(body)
				}
			}
			req, err := http.NewRequest(tc.method, a+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			resp, err := defaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s = %d, want %d\n%.500s", tc.method, tc.path, resp.StatusCode, tc.want, rb)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", ct)
			}
			var p struct {
				Status int
				Detail string
				Errors []struct{ Field, Message string }
			}
			if err := json.Unmarshal(rb, &p); err != nil || p.Status != tc.want {
				t.Errorf("problem body %.300s (%v), want status %d", rb, err, tc.want)
			}
			if tc.detail == "" {
				t.Fatal("the case names no expected detail: an empty one matches any problem")
			}
			if !bytes.Contains(rb, []byte(tc.detail)) {
				t.Errorf("problem does not name the problem (want %q): %.500s", tc.detail, rb)
			}
			noCRLFInHeaders(t, resp.Header, "Set-Cookie")
		})
	}
	// The record the hostile updates aimed at is unchanged.
	r := mustDo(t, "GET", a+testColl+existing.ID, nil, auth(n.Key)...)
	var got identifier
	json.Unmarshal(r.Body, &got)
	if r.Status != 200 || got.URL != "https://example.org/existing" || got.Version != existing.Version {
		t.Errorf("after hostile updates: %d %s", r.Status, r.Body)
	}
}

// TestPercentEncodedCRLFURL: a landing page URL holding %0d%0a is a valid
// http URL (no control characters), so it is accepted; it must reach the
// redirect's Location exactly as written, still percent-encoded, and never
// split the header.
func TestPercentEncodedCRLFURL(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	id := n.create(t, n.Key, payload("https://example.org/ok", "REGISTERED", resourceInfo("l", "d")))
	evil := "https://example.org/a%0d%0aSet-Cookie:%20x=1%0d%0a%0d%0a<script>"
	body, _ := json.Marshal(map[string]any{"url": evil})
	r := mustDo(t, "PUT", n.adminURL()+testColl+id.ID, body, append(auth(n.Key), "If-Match", etag(id.Version))...)
	if r.Status != http.StatusOK {
		t.Fatalf("update with %%0d%%0a url = %d %s", r.Status, r.Body)
	}
	raw := rawExchange(t, n.addr["resolver"], []byte("GET /"+id.Handle+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 2*time.Second)
	if len(raw.Statuses) != 1 || raw.Statuses[0] != http.StatusFound {
		t.Fatalf("redirect: %v", raw)
	}
	want := "https://example.org/a%0d%0aSet-Cookie:%20x=1%0d%0a%0d%0a%3Cscript%3E"
	if got := raw.Headers[0].Get("Location"); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	noCRLFInHeaders(t, raw.Headers[0], "Set-Cookie")
}
