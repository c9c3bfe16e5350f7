package resolver

import (
	"strings"
	"testing"

	"pidnode/handlev"
)

func recordJSON(handle string, vs []handlev.Value) string {
	return string(handlev.AppendRecordJSON(nil, handle, vs))
}

// TestAPIResponses checks every docs/handle-protocol.md §1.3 row and the success
// shapes: exact bodies and statuses.
func TestAPIResponses(t *testing.T) {
	f := newFixture(t, nil)
	main := record(t, tHandle)
	order := record(t, tExtra+"/order")
	lower := strings.ToLower(tHandle)
	tests := []struct {
		name   string
		target string
		status int
		body   string
	}{
		{"success", "/api/handles/" + tHandle, 200, recordJSON(tHandle, main.Values)},
		{"echo as written", "/api/handles/" + lower, 200, recordJSON(lower, main.Values)},
		{"short form", "/api/handles/" + tPrefix + "/" + tNS + "/" + tID, 200, recordJSON(tPrefix+"/"+tNS+"/"+tID, main.Values)},
		{"dashes ignored", "/api/handles/" + strings.ReplaceAll(tHandle, "-", ""), 200, recordJSON(strings.ReplaceAll(tHandle, "-", ""), main.Values)},
		{"hdl scheme stripped", "/api/handles/hdl:" + tHandle, 200, recordJSON(tHandle, main.Values)},
		{"percent-encoded slash", "/api/handles/" + strings.ReplaceAll(tHandle, "/", "%2F"), 200, recordJSON(tHandle, main.Values)},
		{"not found", "/api/handles/" + tPrefix + "/svc/K7Q/NOPE", 404, `{"responseCode":100,"handle":"21.12345/svc/K7Q/NOPE"}`},
		{"no value matches filter", "/api/handles/" + tHandle + "?type=NOPE", 200, `{"responseCode":200,"values":[],"handle":"` + tHandle + `"}`},
		{"prefix not served", "/api/handles/99.999/x", 400, `{"responseCode":301,"message":"That prefix doesn't live here","handle":"99.999/x"}`},
		{"no slash is 0.NA", "/api/handles/abc", 400, `{"responseCode":301,"message":"That prefix doesn't live here","handle":"abc"}`},
		{"empty handle", "/api/handles/", 400, `{"responseCode":102,"message":"Empty handle invalid"}`},
		{"empty handle no slash", "/api/handles", 400, `{"responseCode":102,"message":"Empty handle invalid"}`},
		{"bad index", "/api/handles/" + tHandle + "?index=x", 400, `{"responseCode":4,"message":"Invalid index: x"}`},
		{"unknown endpoint", "/api/foo", 404, `{"responseCode":4,"message":"Unknown HTTP API endpoint GET /api/foo"}`},
		{"unknown endpoint api root", "/api", 404, `{"responseCode":4,"message":"Unknown HTTP API endpoint GET /api"}`},
		{"bad escape", "/api/handles/" + tPrefix + "/%zz", 400, `{"responseCode":102,"message":"Invalid handle: it has a '%' that is not followed by two hexadecimal digits"}`},
		{"NUL byte", "/api/handles/" + tPrefix + "/a%00b", 400, `{"responseCode":102,"message":"Invalid handle: it contains a control character"}`},
		{"invalid UTF-8", "/api/handles/" + tPrefix + "/a%ffb", 400, `{"responseCode":102,"message":"Invalid handle: it is not valid UTF-8 text"}`},
		{"dot segment", "/api/handles/" + tPrefix + "/../x", 400, `{"responseCode":102,"message":"Invalid handle: it contains a '.' or '..' path segment"}`},
		{"filter type", "/api/handles/" + tExtra + "/order?type=URL", 200, recordJSON(tExtra+"/order", order.Values[1:])},
		{"filter type case-insensitive", "/api/handles/" + tExtra + "/order?type=url.MIRROR", 200, recordJSON(tExtra+"/order", order.Values[:1])},
		{"filter trailing dot", "/api/handles/" + tExtra + "/order?type=URL.", 200, recordJSON(tExtra+"/order", order.Values)},
		{"filter no dot is exact", "/api/handles/" + tExtra + "/order?type=URL.mirr", 200, `{"responseCode":200,"values":[],"handle":"10.1000/order"}`},
		{"filter index", "/api/handles/" + tExtra + "/order?index=6", 200, recordJSON(tExtra+"/order", order.Values[2:])},
		{"filter union", "/api/handles/" + tExtra + "/order?index=6&type=URL.mirror", 200, recordJSON(tExtra+"/order", []handlev.Value{order.Values[0], order.Values[2]})},
		{"filter union semicolon", "/api/handles/" + tExtra + "/order?index=6;type=URL.mirror", 200, recordJSON(tExtra+"/order", []handlev.Value{order.Values[0], order.Values[2]})},
		{"filter repeated index", "/api/handles/" + tExtra + "/order?index=2&index=5", 200, recordJSON(tExtra+"/order", order.Values[:2])},
		{"record order kept", "/api/handles/" + tExtra + "/order?index=6&index=2", 200, recordJSON(tExtra+"/order", []handlev.Value{order.Values[0], order.Values[2]})},
		{"public only", "/api/handles/" + tExtra + "/mixed", 200, recordJSON(tExtra+"/mixed", withoutIndex(record(t, tExtra+"/mixed").Values, 3))},
		{"publicOnly=false reveals nothing", "/api/handles/" + tExtra + "/mixed?publicOnly=false&auth=true", 200, recordJSON(tExtra+"/mixed", withoutIndex(record(t, tExtra+"/mixed").Values, 3))},
		{"empty record", "/api/handles/" + tExtra + "/empty", 200, `{"responseCode":200,"values":[],"handle":"10.1000/empty"}`},
		{"nothing public", "/api/handles/" + tExtra + "/private", 200, `{"responseCode":200,"values":[],"handle":"10.1000/private"}`},
		{"nothing public, pretty", "/api/handles/" + tExtra + "/private?pretty", 200, "{\n  \"responseCode\": 200,\n  \"values\": [],\n  \"handle\": \"10.1000/private\"\n}"},
		{"tombstone still served", "/api/handles/" + tTestPrefix + "/svc/" + tNS + "/OLD1", 200, recordJSON(tTestPrefix+"/svc/"+tNS+"/OLD1", record(t, tTestPrefix+"/svc/"+tNS+"/OLD1").Values)},
		{"reserved is not public", "/api/handles/" + tTestPrefix + "/svc/" + tNS + "/NEW1", 404, `{"responseCode":100,"handle":"` + tTestPrefix + `/svc/` + tNS + `/NEW1"}`},
		{"unicode handle", "/api/handles/" + tExtra + "/%C3%BCn%C3%AF", 200, recordJSON(tExtra+"/ünï", record(t, tExtra+"/ünï").Values)},
		{"plus literal", "/api/handles/" + tExtra + "/a+b%20c", 200, recordJSON(tExtra+"/a+b c", record(t, tExtra+"/a+b c").Values)},
		{"callback", "/api/handles/" + tExtra + "/none?callback=a-b.c", 200, `a_b_c(` + recordJSON(tExtra+"/none", record(t, tExtra+"/none").Values) + `);`},
		{"callback on error", "/api/handles/99.9/x?callback=cb", 400, `cb({"responseCode":301,"message":"That prefix doesn't live here","handle":"99.9/x"});`},
		{"empty callback is plain JSON", "/api/handles/" + tExtra + "/none?callback=", 200, recordJSON(tExtra+"/none", record(t, tExtra+"/none").Values)},
		{"pretty", "/api/handles/" + tExtra + "/none?pretty", 200, string(handlev.AppendPrettyJSON(nil, []byte(recordJSON(tExtra+"/none", record(t, tExtra+"/none").Values))))},
		{"pretty=no", "/api/handles/" + tExtra + "/none?pretty=no", 200, recordJSON(tExtra+"/none", record(t, tExtra+"/none").Values)},
		{"pretty=TRUE", "/api/handles/" + tExtra + "/none?pretty=TRUE", 200, string(handlev.AppendPrettyJSON(nil, []byte(recordJSON(tExtra+"/none", record(t, tExtra+"/none").Values))))},
		{"pretty error", "/api/handles/?pretty=yes", 400, "{\n  \"responseCode\": 102,\n  \"message\": \"Empty handle invalid\"\n}"},
		{"pretty and callback", "/api/handles/" + tExtra + "/empty?pretty&callback=9x", 200, "_x({\n  \"responseCode\": 200,\n  \"values\": [],\n  \"handle\": \"10.1000/empty\"\n});"},
		{"unknown parameter ignored", "/api/handles/" + tExtra + "/empty?foo=bar&doNotRefer&cert=1", 200, `{"responseCode":200,"values":[],"handle":"10.1000/empty"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.get(t, tc.target)
			if got := resp.StatusCode(); got != tc.status {
				t.Errorf("GET %s: status %d, want %d", tc.target, got, tc.status)
			}
			if got := string(resp.Body()); got != tc.body {
				t.Errorf("GET %s:\n got %s\nwant %s", tc.target, got, tc.body)
			}
			wantCT := "application/json;charset=UTF-8"
			if strings.Contains(tc.target, "callback=") && !strings.HasSuffix(tc.target, "callback=") {
				wantCT = "application/javascript"
			}
			if got := string(resp.Header.ContentType()); got != wantCT {
				t.Errorf("GET %s: Content-Type %q, want %q", tc.target, got, wantCT)
			}
			if got := string(resp.Header.Peek("Access-Control-Allow-Origin")); got != "*" {
				t.Errorf("GET %s: Access-Control-Allow-Origin %q, want *", tc.target, got)
			}
			if resp.Header.Peek("Access-Control-Allow-Credentials") != nil {
				t.Errorf("GET %s: credentials allowed", tc.target)
			}
			if got := string(resp.Header.Peek("X-Content-Type-Options")); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", tc.target, got)
			}
		})
	}
}

// TestAPINosniffOnEveryAnswer checks the answers that do not come from the
// API's own JSON writer (preflight, 405, 400 for a chunked body, 429 from the
// per-address limit, 431 from fasthttp) carry X-Content-Type-Options too.
func TestAPINosniffOnEveryAnswer(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.RateLimit = 0.001; c.RateBurst = 3 }) // the 3 answers before "rate limited"
	h := "/api/handles/" + tHandle
	tests := []struct {
		name   string
		req    string
		status int
	}{
		{"ok", "GET " + h + " HTTP/1.1\r\nHost: r\r\n\r\n", 200},
		{"preflight", "OPTIONS " + h + " HTTP/1.1\r\nHost: r\r\nAccess-Control-Request-Method: GET\r\n\r\n", 204},
		{"method", "DELETE " + h + " HTTP/1.1\r\nHost: r\r\n\r\n", 405},
		{"chunked", "POST " + h + " HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", 400},
		{"rate limited", "GET " + h + " HTTP/1.1\r\nHost: r\r\n\r\n", 429},
		{"header too large", "GET " + h + " HTTP/1.1\r\nHost: r\r\nX: " + strings.Repeat("a", 1<<16) + "\r\n\r\n", 431},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.raw(t, tc.req)
			if got := resp.StatusCode(); got != tc.status {
				t.Errorf("%s: status %d, want %d", firstLine(tc.req), got, tc.status)
			}
			if got := string(resp.Header.Peek("X-Content-Type-Options")); got != "nosniff" {
				t.Errorf("%s: X-Content-Type-Options %q, want nosniff", firstLine(tc.req), got)
			}
		})
	}
}

func withoutIndex(vs []handlev.Value, index int32) []handlev.Value {
	var out []handlev.Value
	for _, v := range vs {
		if v.Index != index {
			out = append(out, v)
		}
	}
	return out
}

func TestAPIPost(t *testing.T) {
	f := newFixture(t, nil)
	order := record(t, tExtra+"/order")
	union := recordJSON(tExtra+"/order", []handlev.Value{order.Values[0], order.Values[2]})
	tests := []struct {
		name        string
		target      string
		contentType string
		body        string
		status      int
		want        string
	}{
		{"form", "/api/handles/" + tExtra + "/order", "application/x-www-form-urlencoded", "index=6&type=URL.mirror", 200, union},
		{"form with semicolons", "/api/handles/" + tExtra + "/order", "application/x-www-form-urlencoded", "index=6;type=URL.mirror", 200, union},
		{"form plus query", "/api/handles/" + tExtra + "/order?index=6", "application/x-www-form-urlencoded", "type=URL.mirror", 200, union},
		{"json", "/api/handles/" + tExtra + "/order", "application/json", `{"index":6,"type":"URL.mirror"}`, 200, union},
		{"json list", "/api/handles/" + tExtra + "/order", "application/json", `{"index":[6,2]}`, 200, union},
		{"json sniffed", "/api/handles/" + tExtra + "/order", "", `{"index":"6","type":["URL.mirror"]}`, 200, union},
		{"json pretty true", "/api/handles/" + tExtra + "/empty", "application/json", `{"pretty":true}`, 200, "{\n  \"responseCode\": 200,\n  \"values\": [],\n  \"handle\": \"10.1000/empty\"\n}"},
		{"json bad", "/api/handles/" + tExtra + "/order", "application/json", `[1,2]`, 400, `{"responseCode":4,"message":"Invalid JSON body: not a JSON object"}`},
		{"json bad with callback", "/api/handles/" + tExtra + "/order?callback=cb", "application/json", `{`, 400, `cb({"responseCode":4,"message":"Invalid JSON body: not a JSON object"});`},
		{"json long values", "/api/handles/" + tExtra + "/order?type=URL.mirror", "application/json", `{"index":["6","6","6","6"],"x":"` + strings.Repeat("é&", 50) + `"}`, 200, union},
		{"json nested", "/api/handles/" + tExtra + "/order", "application/json", `{"index":{"a":1}}`, 400, `{"responseCode":4,"message":"Invalid JSON body: property \"index\" is not a string, number, boolean or list of them"}`},
		{"form bad index", "/api/handles/" + tExtra + "/order", "application/x-www-form-urlencoded", "index=1.5", 400, `{"responseCode":4,"message":"Invalid index: 1.5"}`},
		{"empty body", "/api/handles/" + tExtra + "/empty", "application/json", "", 200, `{"responseCode":200,"values":[],"handle":"10.1000/empty"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := "POST " + tc.target + " HTTP/1.1\r\nHost: resolver.test\r\n"
			if tc.contentType != "" {
				req += "Content-Type: " + tc.contentType + "\r\n"
			}
			req += "Content-Length: " + itoa(len(tc.body)) + "\r\n\r\n" + tc.body
			resp := f.raw(t, req)
			if resp.StatusCode() != tc.status || string(resp.Body()) != tc.want {
				t.Errorf("POST %s %q: %d %s, want %d %s", tc.target, tc.body, resp.StatusCode(), resp.Body(), tc.status, tc.want)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestAPIMethodsAndCORS(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.raw(t, "OPTIONS /api/handles/"+tHandle+" HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: content-type\r\n\r\n")
	if resp.StatusCode() != 204 {
		t.Errorf("OPTIONS: status %d, want 204", resp.StatusCode())
	}
	for k, want := range map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS",
		"Access-Control-Allow-Headers": "content-type",
	} {
		if got := string(resp.Header.Peek(k)); got != want {
			t.Errorf("OPTIONS: %s = %q, want %q", k, got, want)
		}
	}
	resp = f.raw(t, "DELETE /api/handles/"+tHandle+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode() != 405 || string(resp.Header.Peek("Allow")) != "GET, HEAD, POST, OPTIONS" {
		t.Errorf("DELETE: %d Allow %q, want 405 with Allow", resp.StatusCode(), resp.Header.Peek("Allow"))
	}
	resp = f.raw(t, "HEAD /api/handles/"+tHandle+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode() != 200 || len(resp.Body()) != 0 || resp.Header.ContentLength() <= 0 {
		t.Errorf("HEAD: %d body %d bytes, Content-Length %d", resp.StatusCode(), len(resp.Body()), resp.Header.ContentLength())
	}
}

func TestCallbackName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cb", "cb"},
		{"a-b.c", "a_b_c"},
		{"$jQuery_1", "$jQuery_1"},
		{"1abc", "_abc"},
		{"a1", "a1"},
		{"x</script>", "x__script_"},
		{"ü", "_"},
		{"a\xffb", "a_b"},
		{"alert(1)//", "alert_1___"},
	}
	for _, tc := range tests {
		if got := string(appendCallbackName(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("appendCallbackName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRCStatus(t *testing.T) {
	want := map[int]int{1: 200, 200: 200, 100: 404, 101: 409, 201: 409, 4: 400, 102: 400, 202: 400, 301: 400,
		5: 501, 3: 503, 7: 503, 402: 401, 400: 403, 401: 403, 403: 403, 404: 403, 2: 500, 999: 500}
	for rc, st := range want {
		if got := rcStatus(rc); got != st {
			t.Errorf("rcStatus(%d) = %d, want %d", rc, got, st)
		}
	}
}
