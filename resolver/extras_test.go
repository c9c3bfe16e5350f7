package resolver

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"pidnode/cache"
	"pidnode/handlev"
)

// extrasOf builds the view and extras of a record outside any cache (the
// entry has no View, so nothing is charged).
func extrasOf(t testing.TB, rec handlev.Record) (*view, *extras) {
	t.Helper()
	e := &cache.Entry{Key: rec.Handle, Found: true, Record: rec}
	e.Public = handlev.NewPublic(&e.Record)
	e.Status = e.Public.Status
	v := render(e)
	return v, v.ext()
}

// locRecord is a record with a 10320/loc value and the given other values.
func locRecord(loc string, extra ...handlev.Value) handlev.Record {
	vs := append([]handlev.Value{sv(2, handlev.TypeLoc, loc)}, extra...)
	return handlev.Record{Handle: "10.1000/T", Values: vs}
}

// seq returns a "random" source that yields rs in turn.
func seq(rs ...uint64) func() uint64 {
	i := 0
	return func() uint64 {
		r := rs[i%len(rs)]
		i++
		return r
	}
}

// half is the random number in the middle of the range.
const half = 1 << 63

func TestChooseLocation(t *testing.T) {
	const three = `<locations>
<location href="https://a.example/" weight="1" country="de" view="html"/>
<location href="https://b.example/" weight="3" country="US" view="pdf"/>
<location href="https://c.example/" weight="0" role="metadata"/>
</locations>`
	const scored = `<location href="https://a.example/" weight="1" score="1"/>
<location href="https://b.example/" weight="3" score="5"/>
<location href="https://c.example/" weight="0" score="5"/>
</locations>`
	geo := func(cc string) func(netip.Addr) ([2]byte, bool) {
		return func(netip.Addr) ([2]byte, bool) {
			if cc == "" {
				return [2]byte{}, false
			}
			return [2]byte{cc[0], cc[1]}, true
		}
	}
	url := sv(1, "URL", "https://legacy.example/")
	tests := []struct {
		name   string
		loc    string
		extra  []handlev.Value
		locatt []string
		geo    func(netip.Addr) ([2]byte, bool)
		rnd    uint64
		want   string // Location, "" when the legacy target applies
		status int
	}{
		// weighted: 1 : 3 : 0 over [0, 4) of the random range.
		{name: "weighted low", loc: three, rnd: 0, want: "https://a.example/"},
		{name: "weighted just under a quarter", loc: three, rnd: 1<<62 - 1<<11, want: "https://a.example/"},
		{name: "weighted at a quarter", loc: three, rnd: 1 << 62, want: "https://b.example/"},
		{name: "weighted high", loc: three, rnd: ^uint64(0), want: "https://b.example/"},
		{name: "all weights 0: uniform", loc: `<locations><location href="https://a.example/" weight="0"/><location href="https://b.example/" weight="0"/></locations>`,
			rnd: 3, want: "https://b.example/"},
		{name: "no weight attribute counts 1", loc: `<locations><location href="https://a.example/"/><location href="https://b.example/" weight="x"/></locations>`,
			rnd: half, want: "https://b.example/"},
		{name: "locatt name and value", loc: three, locatt: []string{"view:pdf"}, rnd: 0, want: "https://b.example/"},
		{name: "locatt name only", loc: three, locatt: []string{"role"}, want: "https://c.example/"},
		{name: "locatt value is exact", loc: three, locatt: []string{"view:PDF"}, rnd: 0, want: "https://a.example/"},
		{name: "locatt that matches nothing keeps the set", loc: three, locatt: []string{"view:epub"}, rnd: ^uint64(0), want: "https://b.example/"},
		{name: "locatt repeated narrows in turn", loc: "<locations>" + scored, locatt: []string{"score:5", "weight:0"}, want: "https://c.example/"},
		{name: "locatt repeated, second matches none", loc: "<locations>" + scored, locatt: []string{"score:5", "view:html"}, rnd: 0, want: "https://b.example/"},
		{name: "country (case-insensitive)", loc: three, geo: geo("us"), rnd: 0, want: "https://b.example/"},
		{name: "country unknown", loc: three, geo: geo(""), rnd: 0, want: "https://a.example/"},
		{name: "country without match keeps the set", loc: three, geo: geo("fr"), rnd: 0, want: "https://a.example/"},
		{name: "score keeps the highest", loc: `<locations chooseby="score,weighted">` + scored, rnd: 0, want: "https://b.example/"},
		{name: "score by default", loc: `<locations>` + scored, rnd: 0, want: "https://b.example/"},
		{name: "score tie, then weights", loc: `<locations chooseby="score,weighted">` + scored, rnd: ^uint64(0), want: "https://b.example/"},
		{name: "score only: first of the best", loc: `<locations chooseby="score">` + scored, want: "https://b.example/"},
		{name: "weighted before score", loc: `<locations chooseby="weighted,score">` + scored, rnd: 0, want: "https://a.example/"},
		{name: "no weighted: first left", loc: `<locations chooseby="locatt">` + three[len("<locations>"):], rnd: ^uint64(0), want: "https://a.example/"},
		{name: "unknown methods skipped", loc: `<locations chooseby="random, Weighted">` + three[len("<locations>"):], rnd: ^uint64(0), want: "https://b.example/"},
		{name: "legacy URL joins with weight 0", loc: `<locations><location href="https://a.example/" weight="0"/></locations>`, extra: []handlev.Value{url},
			rnd: ^uint64(0), want: "https://legacy.example/"},
		{name: "legacy URL never wins against a weight", loc: `<locations><location href="https://a.example/"/></locations>`, extra: []handlev.Value{url},
			rnd: ^uint64(0), want: "https://a.example/"},
		{name: "unusable hrefs skipped", loc: `<locations><location href="javascript:alert(1)"/><location href="/relative"/><location href="https://ok.example/"/></locations>`,
			rnd: 0, want: "https://ok.example/"},
		{name: "no usable location: legacy target", loc: `<locations><location href="ftp://x.example/"/></locations>`, extra: []handlev.Value{url}, want: ""},
		{name: "conneg only: legacy target", loc: `<locations><location href="https://a.example/x.ttl" http_role="conneg" media-type="text/turtle"/></locations>`,
			extra: []handlev.Value{url}, want: ""},
		{name: "conneg location never chosen by default", loc: `<locations><location href="https://a.example/x.ttl" http_role="conneg"/><location href="https://b.example/"/></locations>`,
			rnd: 0, want: "https://b.example/"},
		{name: "malformed: legacy target", loc: `<locations><location href="https://a.example/">`, extra: []handlev.Value{url}, want: ""},
		{name: "template {hdl}", loc: `<locations><location href_template="https://t.example/?id={hdl}"/></locations>`, want: "https://t.example/?id=10.1000%2FT"},
		{name: "template {hdl:path}", loc: `<locations><location href_template="https://t.example/{hdl:path}/x" href="https://ignored.example/"/></locations>`, want: "https://t.example/10.1000/T/x"},
		{name: "template made safe", loc: `<locations><location href_template="https://t.example/a b/{hdl}"/></locations>`, want: "https://t.example/a%20b/10.1000%2FT"},
		{name: "http_sc on the location", loc: `<locations http_sc="301"><location href="https://a.example/" http_sc="307"/></locations>`, want: "https://a.example/", status: 307},
		{name: "http_sc on locations", loc: `<locations http_sc="308"><location href="https://a.example/"/></locations>`, want: "https://a.example/", status: 308},
		{name: "http_sc invalid: 302", loc: `<locations http_sc="200"><location href="https://a.example/" http_sc="404"/></locations>`, want: "https://a.example/", status: 302},
		{name: "http_sc 303", loc: `<locations><location href="https://a.example/" http_sc=" 303 "/></locations>`, want: "https://a.example/", status: 303},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, x := extrasOf(t, locRecord(tc.loc, tc.extra...))
			in := selectIn{geo: tc.geo, ip: netip.MustParseAddr("192.0.2.1"), rnd: seq(tc.rnd)}
			for _, f := range tc.locatt {
				in.locatt = append(in.locatt, []byte(f))
			}
			i := x.choose(&in)
			got := ""
			if i >= 0 {
				got = string(x.at(x.locs[i].href))
			}
			if got != tc.want {
				t.Fatalf("choose(locatt %q, rnd %#x) = %q, want %q", tc.locatt, tc.rnd, got, tc.want)
			}
			if want := max(tc.status, 302); i >= 0 && x.status(i) != want {
				t.Errorf("status = %d, want %d", x.status(i), want)
			}
		})
	}
}

// TestWeightedProportions draws from a seeded source and checks that the
// choices follow the weights (1 : 3 : 0): with a fixed seed the counts are
// fixed, and the bounds are wide enough for any fair source.
func TestWeightedProportions(t *testing.T) {
	_, x := extrasOf(t, locRecord(`<locations><location href="https://a.example/" weight="0.25"/><location href="https://b.example/" weight="0.75"/><location href="https://c.example/" weight="0"/></locations>`))
	r := rand.New(rand.NewPCG(1, 2))
	in := selectIn{rnd: r.Uint64}
	var n [3]int
	for range 40000 {
		n[x.choose(&in)]++
	}
	if n[2] != 0 || n[0] < 9000 || n[0] > 11000 || n[1] < 29000 || n[1] > 31000 {
		t.Errorf("choices %v, want about 10000 : 30000 : 0", n)
	}
}

func TestParseAccept(t *testing.T) {
	type rng struct {
		typ, sub string
		q        uint16
	}
	tests := []struct {
		in   string
		want []rng
	}{
		{"text/turtle", []rng{{"text", "turtle", 1000}}},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
			[]rng{{"text", "html", 1000}, {"application", "xhtml+xml", 1000}, {"application", "xml", 900}, {"*", "*", 800}}},
		{" Text/Turtle ; Q=0.5 , application/ld+json;profile=\"a,b;q=0\";q=0.7", []rng{{"Text", "Turtle", 500}, {"application", "ld+json", 700}}},
		{"text/*;q=0.001, */*;q=0", []rng{{"text", "*", 1}, {"*", "*", 0}}},
		{"text/plain;q=1.000;ext=1", []rng{{"text", "plain", 1000}}},
		{"bad, text/turtle", []rng{{"text", "turtle", 1000}}},
		{"*/turtle, a/b;q=2, c/d;q=0.1234, e/f;q=.5, g/h;q=1.001, i/j", []rng{{"i", "j", 1000}}},
		{"a/b c/d, e/f", []rng{{"e", "f", 1000}}},
		{`a/b;x="unterminated, c/d`, nil},
		{",,, ,", nil},
		{"", nil},
	}
	for _, tc := range tests {
		var rs [maxRanges]mediaRange
		n := parseAccept(&rs, []byte(tc.in))
		var got []rng
		for _, r := range rs[:n] {
			got = append(got, rng{string(r.typ), string(r.sub), r.q})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("parseAccept(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	var rs [maxRanges]mediaRange
	if n := parseAccept(&rs, []byte(strings.Repeat("a/b,", 100))); n != maxRanges {
		t.Errorf("parseAccept of 100 ranges read %d, want %d", n, maxRanges)
	}
}

func TestNegotiate(t *testing.T) {
	cands := []cand{{mediaType{[]byte("text"), []byte("turtle")}, 0}, {mediaType{[]byte("application"), []byte("ld+json")}, 1}}
	tests := []struct {
		name, accept, ua string
		want             int // index in cands, -1 for the default answer
	}{
		{"specific type", "text/turtle", "curl/8", 0},
		{"second type", "application/ld+json", "", 1},
		{"q-values pick the higher", "text/turtle;q=0.5, application/ld+json;q=0.9", "", 1},
		{"equal q: first candidate", "application/ld+json, text/turtle", "", 0},
		{"type wildcard", "application/*", "", 1},
		{"most specific range decides", "text/*;q=0.9, text/turtle;q=0, text/html;q=0, application/ld+json;q=0.1", "", 1},
		{"wildcard gives the landing page its weight", "text/*;q=0.9, application/ld+json;q=0.1", "", -1},
		{"*/* alone: landing page", "*/*", "", -1},
		{"text/* ties with the landing page", "text/*", "", -1},
		{"above the landing page", "text/turtle, */*;q=0.1", "", 0},
		{"html preferred", "text/html, text/turtle;q=0.9", "", -1},
		{"html ranked first: browser", "text/html;q=0.9, text/turtle;q=0.8", "", -1},
		{"browser user agent", "text/turtle", "Mozilla/5.0 (X11)", -1},
		{"opera user agent", "text/turtle", "Opera/9.80", -1},
		{"no match", "image/png", "", -1},
		{"excluded by q=0", "text/turtle;q=0", "", -1},
		{"no Accept", "", "", -1},
		{"unparsable Accept", "garbage", "", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs [maxRanges]mediaRange
			ranges := rs[:parseAccept(&rs, []byte(tc.accept))]
			got := -1
			if !isBrowser([]byte(tc.ua), ranges) {
				got = negotiate(ranges, cands)
			}
			if got != tc.want {
				t.Errorf("Accept %q, User-Agent %q: chose %d, want %d", tc.accept, tc.ua, got, tc.want)
			}
		})
	}
}

// TestNegotiationCandidates: the variants of the resource and the typed
// locations are candidates; the Handle JSON types and unusable URLs are not.
func TestNegotiationCandidates(t *testing.T) {
	res := sv(14, "RESOURCE", `{"resource_category":"DATA_OBJECT","representation_variants":[`+
		`{"variant_url":"https://v.example/x.ttl","media_type":"text/turtle"},`+
		`{"variant_url":"https://v.example/x.json","media_type":"application/json"},`+
		`{"variant_url":"javascript:alert(1)","media_type":"text/csv"},`+
		`{"variant_url":"https://v.example/x.jsonld","media_type":"Application/LD+JSON; charset=utf-8"},`+
		`{"variant_url":"https://v.example/x.bin","media_type":"*/*"},`+
		`{"variant_url":"https://v.example/none"}]}`)
	loc := `<locations><location href="https://l.example/x.rdf" ctype="application/rdf+xml"/><location href="https://l.example/h.json" media-type="application/vnd.handle+json"/></locations>`
	_, x := extrasOf(t, locRecord(loc, res))
	var got []string
	for _, c := range x.cands {
		got = append(got, string(c.typ)+"/"+string(c.sub))
	}
	want := []string{"application/rdf+xml", "text/turtle", "application/ld+json"}
	if !slices.Equal(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	if len(x.variants) != 3 {
		t.Errorf("%d variants kept, want 3 (turtle, json, ld+json)", len(x.variants))
	}
}

func TestRecordHeaders(t *testing.T) {
	data := "X-Robots-Tag: noindex, nofollow\r\n" +
		"Cache-Control:max-age=60 \n" +
		"\n" +
		"Location: https://evil.example/\n" +
		"set-cookie: a=1\n" +
		"Content-Type: text/plain\n" +
		"Content-Security-Policy: default-src *\n" +
		"Transfer-Encoding: chunked\n" +
		"Connection: close\n" +
		"Keep-Alive: timeout=5\n" +
		"Upgrade: h2c\n" +
		"Access-Control-Allow-Origin: *\n" +
		"Refresh: 0; url=javascript:alert(1)\n" +
		"Link: <https://x.example/>; rel=\"x\"\n" +
		"Vary: *\n" +
		"X-Split: a\rInjected: yes\n" +
		"X-Nul: a\x00b\n" +
		"X-Utf8: é\n" +
		"Bad Name: x\n" +
		" folded: x\n" +
		"no colon\n" +
		"X-Last: ok"
	_, x := extrasOf(t, handlev.Record{Handle: "10.1000/H", Values: []handlev.Value{sv(1, "URL", "https://a.example/"), sv(2, handlev.TypeHeaders, data)}})
	var got []string
	for _, h := range x.headers {
		got = append(got, string(x.at(h.name))+": "+string(x.at(h.value)))
	}
	want := []string{"X-Robots-Tag: noindex, nofollow", "Cache-Control: max-age=60", "X-Last: ok"}
	if !slices.Equal(got, want) {
		t.Errorf("headers kept %q, want %q", got, want)
	}
	wantDropped := "Location, set-cookie, Content-Type, Content-Security-Policy, Transfer-Encoding, Connection, Keep-Alive, Upgrade, " +
		"Access-Control-Allow-Origin, Refresh, Link, Vary, X-Split, X-Nul, X-Utf8, (malformed line), (malformed line), (malformed line)"
	if d := string(x.at(x.dropped)); d != wantDropped {
		t.Errorf("dropped %q\nwant    %q", d, wantDropped)
	}
}

func TestRecordLinks(t *testing.T) {
	data := `<https://a.example/>; rel="author"; title="A \"quoted\" name", <https://b.example/x.jsonld>;rel="alternate describedby";type="application/ld+json"` + "\n" +
		`<HTTPS://c.example/p q>; rel=License, <https://d.example/>; rel="https://rel.example/ext", ` +
		`<javascript:alert(1)>; rel="author", <https://e.example/>; rel="cite-as", <https://f.example/>; rel="linkset", ` +
		`<https://g.example/>; rel="bad!rel", <https://h.example/>; rel="author"; anchor="https://other.example/", ` +
		`<https://i.example/>, junk, <https://j.example/>; rel="author"; title="ünïcode", <https://k.example/>; rel="item"; type="*/*"`
	_, x := extrasOf(t, handlev.Record{Handle: "10.1000/L", Values: []handlev.Value{sv(1, "URL", "https://a.example/"), sv(2, handlev.TypeLinks, data)}})
	fields := strings.Split(string(appendExpanded(nil, x.at(x.link), []byte("https://r.example"), "https://p.example")), "\n")
	want := []string{
		`<https://p.example/10.1000/L>; rel="cite-as"`,
		`<https://r.example/api/handles/10.1000/L>; rel="describedby"; type="application/json", <https://b.example/x.jsonld>; rel="describedby"; type="application/ld+json"`,
		`<https://r.example/api/linksets/10.1000/L>; rel="linkset"; type="application/linkset+json"`,
		`<https://a.example/>; rel="author"; title="A \"quoted\" name", <https://j.example/>; rel="author"`,
		`<https://b.example/x.jsonld>; rel="alternate"; type="application/ld+json"`,
		`<https://c.example/p%20q>; rel="license"`,
		`<https://d.example/>; rel="https://rel.example/ext"`,
		`<https://k.example/>; rel="item"`,
	}
	if !slices.Equal(fields, want) {
		t.Errorf("Link fields:\n%s\nwant:\n%s", strings.Join(fields, "\n"), strings.Join(want, "\n"))
	}
}

// TestLinkHeaderCap: a record with many variants sends its items in the
// linkset only once the Link fields would pass maxLinkHeader.
func TestLinkHeaderCap(t *testing.T) {
	var vs []string
	for i := range 100 {
		vs = append(vs, `{"variant_url":"https://v.example/`+strings.Repeat("x", 60)+itoa(i)+`","media_type":"text/turtle"}`)
	}
	res := sv(14, "RESOURCE", `{"resource_category":"SAMPLE","representation_variants":[`+strings.Join(vs, ",")+`]}`)
	_, x := extrasOf(t, handlev.Record{Handle: "10.1000/M", Values: []handlev.Value{sv(1, "URL", "https://a.example/"), res}})
	link := string(x.at(x.link))
	if len(link) > maxLinkHeader || strings.Contains(link, `rel="item"`) || !strings.Contains(link, `rel="cite-as"`) || !strings.Contains(link, `rel="linkset"`) {
		t.Errorf("Link fields (%d bytes) should keep cite-as and linkset and leave the items out:\n%.300s", len(link), link)
	}
	v, x2 := extrasOf(t, handlev.Record{Handle: "10.1000/M", Values: []handlev.Value{sv(1, "URL", "https://a.example/"), res}})
	if n := strings.Count(string(v.linksets(x2).buf), `"type":"text/turtle"`); n != 100 {
		t.Errorf("linkset has %d items, want 100", n)
	}
}

// TestExtrasFromPublicValuesOnly: values without public read give no
// location, link, header, type or variant.
func TestExtrasFromPublicValuesOnly(t *testing.T) {
	private := func(v handlev.Value) handlev.Value {
		v.Perm = handlev.PermAdminRead | handlev.PermAdminWrite
		return v
	}
	rec := handlev.Record{Handle: "10.1000/P", Values: []handlev.Value{
		sv(1, "URL", "https://public.example/"),
		private(sv(2, handlev.TypeLoc, `<locations><location href="https://secret.example/loc"/></locations>`)),
		private(sv(3, handlev.TypeLinks, `<https://secret.example/link>; rel="author"`)),
		private(sv(4, handlev.TypeHeaders, "X-Secret: secret")),
		private(sv(5, "RESOURCE", `{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://secret.example/v","media_type":"text/turtle"}]}`)),
		private(sv(6, "LICENSE", "https://secret.example/license")),
		private(sv(7, "METADATA_LICENSE", "CC0-1.0")),
	}}
	v, x := extrasOf(t, rec)
	d := v.linksets(x)
	if x.choosable != 0 || len(x.cands) != 0 || len(x.headers) != 0 || len(x.variants) != 0 {
		t.Errorf("extras from private values: choosable %b, %d candidates, %d headers, %d variants", x.choosable, len(x.cands), len(x.headers), len(x.variants))
	}
	for _, part := range [][]byte{x.buf, d.buf} {
		if strings.Contains(string(part), "secret") || strings.Contains(string(part), "schema.org") || strings.Contains(string(part), "spdx") {
			t.Errorf("extras carry data without public read:\n%s", part)
		}
	}
}

func TestSignpostingTypes(t *testing.T) {
	for cat, want := range map[string]string{"COLLECTION": "Collection", "SAMPLE": "Thing", "MATERIAL": "Thing", "DEVICE": "Product",
		"DATA_OBJECT": "Dataset", "DATA_SERVICE": "Service", "OTHER": ""} {
		res := sv(14, "RESOURCE", `{"resource_category":"`+cat+`","representation_variants":[]}`)
		for _, landing := range []bool{true, false} {
			vs := []handlev.Value{res}
			if landing {
				vs = append(vs, sv(1, "URL", "https://landing.example/"))
			}
			_, x := extrasOf(t, handlev.Record{Handle: "10.1000/S", Values: vs})
			link := string(x.at(x.link))
			var got []string
			for _, l := range strings.Split(link, "\n") {
				if strings.Contains(l, `rel="type"`) {
					got = append(got, l)
				}
			}
			var w []string
			if want != "" {
				f := `<https://schema.org/` + want + `>; rel="type"`
				if landing {
					f += `, <https://schema.org/AboutPage>; rel="type"`
				}
				w = []string{f}
			}
			if !slices.Equal(got, w) {
				t.Errorf("%s (landing page %v): type links %q, want %q", cat, landing, got, w)
			}
		}
	}
}

func TestLicenseURL(t *testing.T) {
	for in, want := range map[string]string{
		"CC0-1.0": "https://spdx.org/licenses/CC0-1.0", " CC-BY-4.0 ": "https://spdx.org/licenses/CC-BY-4.0",
		"https://example.org/lic": "https://example.org/lic", "javascript:x": "", "CC BY": "", "": "", "a/b": "",
	} {
		if got := string((&extBuilder{}).licenseURL([]byte(in))); got != want {
			t.Errorf("licenseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAccept: no Accept header makes the parser or the negotiation panic;
// ranges are well-formed; the negotiation picks an existing candidate.
func FuzzAccept(f *testing.F) {
	for _, s := range []string{"text/turtle", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
		`application/ld+json;profile="a,b";q=0.5, text/*;q=0`, "*/*;q=1.000", `a/b;x="\"`, ",;=/", "text/turtle;q=0.5;q=1"} {
		f.Add([]byte(s))
	}
	cands := []cand{{mediaType{[]byte("text"), []byte("turtle")}, 0}, {mediaType{[]byte("application"), []byte("ld+json")}, 1}}
	f.Fuzz(func(t *testing.T, h []byte) {
		var rs [maxRanges]mediaRange
		n := parseAccept(&rs, h)
		if n < 0 || n > maxRanges {
			t.Fatalf("parseAccept(%q) = %d", h, n)
		}
		for _, r := range rs[:n] {
			if r.q > 1000 || len(r.typ) == 0 || len(r.sub) == 0 || isStar(r.typ) && !isStar(r.sub) {
				t.Fatalf("parseAccept(%q): bad range %q/%q q=%d", h, r.typ, r.sub, r.q)
			}
			for _, c := range append(append([]byte(nil), r.typ...), r.sub...) {
				if !tokenByte[c] {
					t.Fatalf("parseAccept(%q): range %q/%q has a non-token byte", h, r.typ, r.sub)
				}
			}
		}
		if c := negotiate(rs[:n], cands); c < -1 || c >= len(cands) {
			t.Fatalf("negotiate(%q) = %d", h, c)
		}
		_ = isBrowser(nil, rs[:n])
	})
}

// FuzzRecordLinks: a 10320/links or 10320/headers value never makes the
// extras panic, and whatever they keep is safe in a header: no control
// byte, every link target canonical.
func FuzzRecordLinks(f *testing.F) {
	f.Add([]byte(`<https://a.example/>; rel="author"; title="x", <https://b.example/>; rel=item`), []byte("X-A: b\nLocation: x"))
	f.Add([]byte(`<a>;;rel=,<`), []byte("\r\n:\n"))
	f.Fuzz(func(t *testing.T, links, headers []byte) {
		_, x := extrasOf(t, handlev.Record{Handle: "10.1000/F", Values: []handlev.Value{
			sv(1, "URL", "https://a.example/"), sv(2, handlev.TypeLinks, string(links)), sv(3, handlev.TypeHeaders, string(headers))}})
		for _, c := range x.at(x.link) {
			if c < 0x20 && c != '\n' && c != 0 || c >= 0x7f {
				t.Fatalf("Link template has byte %#x:\n%q", c, x.at(x.link))
			}
		}
		for _, h := range x.headers {
			for _, c := range append(x.at(h.name), x.at(h.value)...) {
				if c < 0x20 && c != '\t' || c >= 0x7f {
					t.Fatalf("header %q: %q has byte %#x", x.at(h.name), x.at(h.value), c)
				}
			}
		}
	})
}
