package resolver

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
)

func TestAppendLocation(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "https://example.org/a?b=c#d", "https://example.org/a?b=c#d", true},
		{"scheme case", "HTTPS://Example.org/X", "https://Example.org/X", true},
		{"http", "http://example.org", "http://example.org", true},
		{"port", "https://example.org:8443/x", "https://example.org:8443/x", true},
		{"userinfo", "https://user:pw@example.org/", "https://user:pw@example.org/", true},
		{"ipv6", "http://[::1]:8080/x", "http://[::1]:8080/x", true},
		{"trimmed", " \t https://example.org/x \r\n", "https://example.org/x", true},
		{"space and CRLF encoded", "https://example.org/a b\r\nX: y", "https://example.org/a%20b%0D%0AX:%20y", true},
		{"unsafe ASCII encoded", "https://example.org/\"<>\\^`{|}", "https://example.org/%22%3C%3E%5C%5E%60%7B%7C%7D", true},
		{"valid escapes kept", "https://example.org/%41%zz%", "https://example.org/%41%25zz%25", true},
		{"second hash encoded", "https://example.org/a#b#c", "https://example.org/a#b%23c", true},
		{"non-ASCII path", "https://example.org/ä", "https://example.org/%C3%A4", true},
		{"IDN", "https://bücher.example/", "https://xn--bcher-kva.example/", true},
		{"IDN upper case folded", "https://BÜCHER.example/", "https://xn--bcher-kva.example/", true},
		{"IDN RFC 3492 vector", "http://他们为什么不说中文.example", "http://xn--ihqwcrb4cv8a8dqg056pqjye.example", true},
		{"IDN all non-ASCII", "https://münchen.de", "https://xn--mnchen-3ya.de", true},
		{"javascript", "javascript:alert(1)", "", false},
		{"data", "data:text/html,<script>", "", false},
		{"relative", "/local/path", "", false},
		{"protocol relative", "//evil.example/", "", false},
		{"single slash", "https:/example.org", "", false},
		{"backslash authority", "https://evil.example\\@good.example/", "", false},
		{"backslash host", "https://good.example\\evil.example/", "", false},
		{"empty host", "https:///x", "", false},
		{"empty port", "https://example.org:/x", "", false},
		{"bad port", "https://example.org:80a/", "", false},
		{"space in host", "https://exa mple.org/", "", false},
		{"CR in host", "https://example.org\r\nX: y/", "", false},
		{"percent in host", "https://%65xample.org/", "", false},
		{"invalid UTF-8 host", "https://\xff.example/", "", false},
		{"mailto", "mailto:a@b.example", "", false},
		{"ftp", "ftp://example.org/", "", false},
		{"too long", "https://example.org/" + strings.Repeat("a", maxLocation), "", false},
		// The admin API accepts by the same rule (handlev.CheckTargetURL):
		// what it refuses is never redirected to, and the reverse.
		{"port out of range", "https://example.org:99999/", "", false},
		{"port zero", "https://example.org:0/", "", false},
		{"port leading zeros", "https://example.org:0443/", "https://example.org:443/", true},
		{"bidi override in host", "https://\u202eevil.org/", "", false},
		{"zero-width joiner in host", "https://e\u200dvil.org/", "", false},
		{"zero-width space in host", "https://e\u200bvil.org/", "", false},
		{"zone id", "https://[fe80::1%25eth0]/", "", false},
		{"short IPv4", "http://127.1/", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := appendLocation([]byte("prefix:"), []byte(tc.in))
			if err := handlev.CheckTargetURL([]byte(tc.in)); (err == nil) != tc.ok {
				t.Errorf("handlev.CheckTargetURL(%q) = %v, but appendLocation ok = %v", tc.in, err, ok)
			}
			if ok != tc.ok {
				t.Fatalf("appendLocation(%q) ok = %v, want %v (%q)", tc.in, ok, tc.ok, got)
			}
			want := "prefix:" + tc.want
			if string(got) != want {
				t.Errorf("appendLocation(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

// FuzzAppendLocation: whatever goes in, what comes out is an absolute http(s)
// URL of printable ASCII without spaces, and encoding it again changes nothing.
func FuzzAppendLocation(f *testing.F) {
	for _, r := range testRecords() {
		for _, v := range r.Values {
			f.Add(string(v.Data))
		}
	}
	f.Add("https://bücher.example/straße?q=ä#x#y")
	f.Add("http://[::1]:80/%zz")
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := appendLocation(nil, []byte(in))
		if !ok {
			if len(out) != 0 {
				t.Fatalf("appendLocation(%q) failed but wrote %q", in, out)
			}
			return
		}
		if !bytes.HasPrefix(out, []byte("http://")) && !bytes.HasPrefix(out, []byte("https://")) {
			t.Fatalf("appendLocation(%q) = %q: not http(s)", in, out)
		}
		for _, c := range out {
			if c <= ' ' || c >= 0x7f {
				t.Fatalf("appendLocation(%q) = %q: byte %#x", in, out, c)
			}
		}
		again, ok := appendLocation(nil, out)
		if !ok || !bytes.Equal(again, out) {
			t.Fatalf("appendLocation not idempotent: %q → %q → %q (%v)", in, out, again, ok)
		}
	})
}

func TestAppendPathEscaped(t *testing.T) {
	tests := []struct{ in, want string }{
		{"21.T1/svc/K7Q/4XJ2-9MPA-C", "21.T1/svc/K7Q/4XJ2-9MPA-C"},
		{"10.1000/a+b c", "10.1000/a+b%20c"},
		{"10.1000/?#%<>\"", "10.1000/%3F%23%25%3C%3E%22"},
		{"10.1000/ünï", "10.1000/%C3%BCn%C3%AF"},
	}
	for _, tc := range tests {
		if got := string(appendPathEscaped(nil, tc.in)); got != tc.want {
			t.Errorf("appendPathEscaped(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// The proxy path decoder must give the handle back.
		if h, err := handlev.DecodePath(nil, appendPathEscaped(nil, tc.in)); err != nil || string(h) != tc.in {
			t.Errorf("DecodePath(appendPathEscaped(%q)) = %q, %v", tc.in, h, err)
		}
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name, raw  string
		noredirect bool
		pretty     bool
		urlappend  string
		hasAppend  bool
		callback   string
		types      []string
		indexes    []int32
		err        string
	}{
		{name: "empty"},
		{name: "flag present", raw: "noredirect", noredirect: true},
		{name: "flag empty value", raw: "noredirect=", noredirect: true},
		{name: "flag yes", raw: "pretty=YES", pretty: true},
		{name: "flag true", raw: "pretty=True", pretty: true},
		{name: "flag other is false", raw: "pretty=1", pretty: false},
		{name: "flag no", raw: "noredirect=no", noredirect: false},
		{name: "action showvalues", raw: "action=ShowValues", noredirect: true},
		{name: "action other", raw: "action=x"},
		{name: "separators", raw: "type=URL;index=1&type=EMAIL;;&", types: []string{"URL", "EMAIL"}, indexes: []int32{1}},
		{name: "decoding", raw: "urlappend=%2Fa+b%3F%zz&callback=c%62", urlappend: "/a b?%zz", hasAppend: true, callback: "cb"},
		{name: "empty urlappend", raw: "urlappend", hasAppend: true},
		{name: "encoded key", raw: "no%72edirect", noredirect: true},
		{name: "negative index", raw: "index=-5", indexes: []int32{-5}},
		{name: "max index", raw: "index=2147483647", indexes: []int32{2147483647}},
		{name: "index overflow", raw: "index=2147483648", err: "index"},
		{name: "index not a number", raw: "index=1x", err: "index"},
		{name: "index empty", raw: "index=", err: "index"},
		{name: "unknown ignored", raw: "auth&cert=1&publicOnly=false&doNotRefer&x=y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p params
			arena := make([]byte, 0, len(tc.raw))
			_, err := parseQuery(&p, []byte(tc.raw), arena)
			if tc.err != "" {
				pe, ok := err.(*ParamError)
				if !ok || pe.Name != tc.err {
					t.Fatalf("parseQuery(%q) error = %v, want *ParamError for %s", tc.raw, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseQuery(%q): %v", tc.raw, err)
			}
			var types []string
			for _, ty := range p.types {
				types = append(types, string(ty))
			}
			if p.noredirect != tc.noredirect || p.pretty != tc.pretty || string(p.urlappend) != tc.urlappend ||
				p.hasURLAppend != tc.hasAppend || string(p.callback) != tc.callback ||
				strings.Join(types, ",") != strings.Join(tc.types, ",") || len(p.indexes) != len(tc.indexes) {
				t.Fatalf("parseQuery(%q) = %+v", tc.raw, p)
			}
			for i := range tc.indexes {
				if p.indexes[i] != tc.indexes[i] {
					t.Errorf("parseQuery(%q) indexes = %v, want %v", tc.raw, p.indexes, tc.indexes)
				}
			}
		})
	}
}

func TestTypeMatches(t *testing.T) {
	tests := []struct {
		typ, filter string
		want        bool
	}{
		{"URL", "URL", true},
		{"url", "URL", true},
		{"URL.alt", "URL", false},
		{"URL.alt", "URL.", true},
		{"URL", "URL.", true},
		{"URLX", "URL.", false},
		{"URL.ALT.x", "url.alt.", true},
		{"EMAIL", "URL.", false},
		{"", "", true},
	}
	for _, tc := range tests {
		if got := typeMatches(tc.typ, []byte(tc.filter)); got != tc.want {
			t.Errorf("typeMatches(%q, %q) = %v, want %v", tc.typ, tc.filter, got, tc.want)
		}
	}
}

func TestExpires(t *testing.T) {
	const now = 1_000_000_000
	tests := []struct {
		name string
		typ  handlev.TTLType
		ttl  int32
		want int64
	}{
		{"relative", handlev.TTLRelative, 600, now + 600},
		{"relative capped", handlev.TTLRelative, 7 * 86400, now + maxExpires},
		{"zero", handlev.TTLRelative, 0, now},
		{"negative", handlev.TTLRelative, -5, now},
		{"absolute", handlev.TTLAbsolute, now + 100, now + 100},
		{"absolute past", handlev.TTLAbsolute, now - 100, now},
		{"absolute far", handlev.TTLAbsolute, now + 10*86400, now + maxExpires},
	}
	for _, tc := range tests {
		if got := expiresAt(now, tc.typ, tc.ttl); got != tc.want {
			t.Errorf("%s: expiresAt = %d, want %d", tc.name, got, tc.want)
		}
	}
	var c dateCache
	for _, sec := range []int64{now, now, now - 50, now + 1} {
		want := time.Unix(sec, 0).UTC().Format(httpTimeFormat)
		if got := string(c.appendDate(nil, sec)); got != want {
			t.Errorf("appendDate(%d) = %q, want %q", sec, got, want)
		}
	}
}

func TestSplitRequestURI(t *testing.T) {
	tests := []struct{ in, path, query, frag string }{
		{"/", "/", "", ""},
		{"/a/b?x=1&y#f", "/a/b", "x=1&y", "f"},
		{"/a#f?x", "/a", "", "f?x"},
		{"/a?", "/a", "", ""},
		{"http://host/a?q", "/a", "q", ""},
		{"https://host", "/", "", ""},
		{"http://host?q", "/", "q", ""},
		{"*", "*", "", ""},
	}
	for _, tc := range tests {
		p, q, f := splitRequestURI([]byte(tc.in))
		if string(p) != tc.path || string(q) != tc.query || string(f) != tc.frag {
			t.Errorf("splitRequestURI(%q) = %q, %q, %q; want %q, %q, %q", tc.in, p, q, f, tc.path, tc.query, tc.frag)
		}
	}
}
