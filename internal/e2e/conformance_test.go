package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// marker is carried by the data of every value without public read in the
// conformance table: no byte any front sends may contain it.
const marker = "SECRET-0f3a"

// confValue is one value of a conformance record as `pidnode import` reads it.
type confValue struct {
	Index int32
	Type  string
	Data  string
	Perm  string // "permissions": "1110" public; "1100", "1000", "1101" not publicly readable
}

// confRecord is one row of the conformance table: a record and what the
// public may see of it, stated independently of the code that decides it.
type confRecord struct {
	name    string // last handle segment and DNS label
	values  []confValue
	absent  bool    // not imported at all
	hidden  bool    // SUBMITTED: answered as a handle that does not exist yet
	gone    bool    // OBSOLETED or DEPRECATED: tombstone on redirect
	visible []int32 // indexes of the values shown, in record order
	target  int32   // index of the redirect target, 0 for none
	// location, if set, is where the HTTP redirect goes instead of the
	// target's data: a 10320/loc location (docs/handle-protocol.md §2.1).
	// DNS and the native protocol answer the target by the URL rule.
	location string
	alias    string // handle an HS_ALIAS redirect goes to, "" for none
	dnsTXT   []string
	dnsURI   []string
	dnsA     []string
}

const (
	confPrefix = "21.T12345/CONF/"
	confZone   = "CONF.testpid.localhost."
	pub        = "1110"
)

func secret(s string) string { return "https://example.org/" + marker + "/" + s }

var confTable = []confRecord{
	{name: "PUBLIC", values: []confValue{{1, "URL", "https://example.org/public", pub}, {2, "EMAIL", "pid@example.org", pub}},
		visible: []int32{1, 2}, target: 1, dnsTXT: []string{"https://example.org/public"}, dnsURI: []string{"https://example.org/public"}},
	{name: "PRIVURL", values: []confValue{
		{1, "URL", secret("privurl"), "1100"},
		{2, "URL.landing", "https://example.org/landing", pub},
		{3, "DNS.TXT", `"` + marker + `-txt"`, "1100"},
		{4, "DNS.TXT", `"public-txt"`, pub},
		{5, "DNS.A", "192.0.2.10", pub},
		{6, "DNS.A", "192.0.2.77", "1000"},
	}, visible: []int32{2, 4, 5}, target: 2,
		dnsTXT: []string{"https://example.org/landing", "public-txt"}, dnsURI: []string{"https://example.org/landing"}, dnsA: []string{"192.0.2.10"}},
	{name: "ONLYPRIV", values: []confValue{
		{1, "URL", secret("onlypriv"), "1000"},
		{2, "DNS.TXT", `"` + marker + `"`, "1100"},
		{3, "DNS.URI", `10 1 "` + secret("uri") + `"`, "1100"},
	}, visible: []int32{}},
	{name: "ORDER", values: []confValue{{1, "URL.meta", "https://example.org/meta", pub}, {2, "url", "https://example.org/lower", pub}},
		visible: []int32{1, 2}, target: 2, dnsTXT: []string{"https://example.org/lower"}, dnsURI: []string{"https://example.org/lower"}},
	{name: "SUBCASE", values: []confValue{{1, "EMAIL", "x@example.org", pub}, {2, "Url.Landing", "https://example.org/sub", pub}, {3, "URL.meta", "https://example.org/meta2", pub}},
		visible: []int32{1, 2, 3}, target: 2, dnsTXT: []string{"https://example.org/sub"}, dnsURI: []string{"https://example.org/sub"}},
	{name: "PUBWRITE", values: []confValue{{1, "URL", secret("pubwrite"), "1101"}, {2, "URL", "https://example.org/second", pub}},
		visible: []int32{2}, target: 2, dnsTXT: []string{"https://example.org/second"}, dnsURI: []string{"https://example.org/second"}},
	{name: "SUBMITTED", values: []confValue{{1, "URL", "https://example.org/new", pub}, {2, "STATUS", "SUBMITTED", pub}},
		hidden: true},
	{name: "REGISTERED", values: []confValue{{1, "URL", "https://example.org/reg", pub}, {2, "STATUS", "REGISTERED", pub}, {3, "EMAIL", marker + "@example.org", "1100"}},
		visible: []int32{1, 2}, target: 1, dnsTXT: []string{"https://example.org/reg"}, dnsURI: []string{"https://example.org/reg"}},
	{name: "OBSOLETED", values: []confValue{{1, "URL", "https://example.org/old", pub}, {2, "STATUS", "OBSOLETED", pub}, {3, "URL.meta", secret("obs"), "1100"}},
		gone: true, visible: []int32{1, 2}, target: 1, dnsTXT: []string{"status=OBSOLETED"}},
	// The status is the administrator's decision and applies even when the
	// STATUS value itself is not publicly readable.
	{name: "DEPRECATED", values: []confValue{{1, "URL", "https://example.org/dep", pub}, {2, "STATUS", "DEPRECATED", "1100"}},
		gone: true, visible: []int32{1}, target: 1, dnsTXT: []string{"status=DEPRECATED"}},
	{name: "ALIAS", values: []confValue{{1, "HS_ALIAS", confPrefix + "PUBLIC", pub}, {2, "URL", "https://example.org/aliased", pub}},
		visible: []int32{1, 2}, target: 2, alias: confPrefix + "PUBLIC", dnsTXT: []string{"https://example.org/aliased"}, dnsURI: []string{"https://example.org/aliased"}},
	{name: "PRIVALIAS", values: []confValue{{1, "HS_ALIAS", confPrefix + marker, "1100"}, {2, "URL", "https://example.org/noalias", pub}},
		visible: []int32{2}, target: 2, dnsTXT: []string{"https://example.org/noalias"}, dnsURI: []string{"https://example.org/noalias"}},
	{name: "EMPTY", values: []confValue{}, visible: []int32{}},
	{name: "STOREDURI", values: []confValue{
		{1, "DNS.URI", `10 1 "https://example.org/stored"`, pub},
		{2, "DNS.URI", `10 1 "` + secret("stored") + `"`, "1100"},
		{3, "URL.next", "https://example.org/next", pub},
	}, visible: []int32{1, 3}, target: 3,
		dnsTXT: []string{"https://example.org/next"}, dnsURI: []string{"https://example.org/next", "https://example.org/stored"}},
	// Locations, links, headers and representation variants come from public
	// values only.
	{name: "PRIVLOC", values: []confValue{
		{1, "URL", "https://example.org/privloc", pub},
		{2, "10320/loc", `<locations><location href="` + secret("loc") + `" weight="1"/></locations>`, "1100"},
		{3, "10320/links", `<` + secret("link") + `>; rel="author"`, "1100"},
		{4, "10320/headers", "X-Secret: " + marker, "1100"},
		{5, "RESOURCE", `{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"` + secret("variant") + `","media_type":"text/turtle"}]}`, "1100"},
		{6, "LICENSE", secret("license"), "1100"},
	}, visible: []int32{1}, target: 1, dnsTXT: []string{"https://example.org/privloc"}, dnsURI: []string{"https://example.org/privloc"}},
	{name: "LOC", values: []confValue{
		{1, "URL", "https://example.org/loc-legacy", pub},
		{2, "10320/loc", `<locations><location href="https://example.org/loc-chosen" weight="1"/><location href="https://example.org/loc-conneg" http_role="conneg" weight="5"/></locations>`, pub},
	}, visible: []int32{1, 2}, target: 1, location: "https://example.org/loc-chosen",
		dnsTXT: []string{"https://example.org/loc-legacy"}, dnsURI: []string{"https://example.org/loc-legacy"}},
	{name: "ABSENT", absent: true},
}

// importLine is a record as one line of `pidnode import`'s JSON Lines.
func (r *confRecord) importLine() []byte {
	type data struct {
		Format string `json:"format"`
		Value  string `json:"value"`
	}
	type value struct {
		Index int32  `json:"index"`
		Type  string `json:"type"`
		Data  data   `json:"data"`
		Perm  string `json:"permissions"`
		TTL   int    `json:"ttl"`
	}
	rec := struct {
		Handle string  `json:"handle"`
		Values []value `json:"values"`
	}{Handle: confPrefix + r.name, Values: []value{}}
	for _, v := range r.values {
		rec.Values = append(rec.Values, value{v.Index, v.Type, data{"string", v.Data}, v.Perm, 3600})
	}
	b, _ := json.Marshal(rec)
	return append(b, '\n')
}

// noMarker fails the test if raw carries restricted data.
func noMarker(t *testing.T, front string, raw []byte) {
	t.Helper()
	if bytes.Contains(raw, []byte(marker)) {
		t.Errorf("%s: response carries data without public read:\n%s", front, raw)
	}
	if bytes.Contains(raw, []byte{192, 0, 2, 77}) || bytes.Contains(raw, []byte("192.0.2.77")) { // the private DNS.A
		t.Errorf("%s: response carries the private DNS.A address", front)
	}
}

var rowIndex = regexp.MustCompile(`<tr><td class="n">(-?\d+)</td>`)

// TestConformance drives every public front of one real node (HTTP redirect,
// ?noredirect, /api/handles with and without filters, DNS over UDP and TCP,
// the native protocol over TCP and UDP) over one table of records and checks
// that each agrees with the table's public view: the same values by index, the
// same redirect target, the same hidden/gone/not-found decision, and no byte
// of a value without public read anywhere.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var lines []byte
	for i := range confTable {
		if !confTable[i].absent {
			lines = append(lines, confTable[i].importLine()...)
		}
	}
	file := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(file, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binPath, "import", "--data", data, file).CombinedOutput(); err != nil {
		t.Fatalf("pidnode import: %v\n%s", err, out)
	}
	n := startNode(t, data)

	for i := range confTable {
		r := &confTable[i]
		t.Run(r.name, func(t *testing.T) {
			handle := confPrefix + r.name
			notThere := r.absent || r.hidden
			checkRedirect(t, n, r, handle, notThere)
			checkNegotiated(t, n, r, handle, notThere)
			checkLinkset(t, n, r, handle, notThere)
			checkNoredirect(t, n, r, handle, notThere)
			checkAPI(t, n, r, handle, notThere)
			checkDNS(t, n, r, notThere)
			checkNative(t, n, r, handle, notThere)
		})
	}
}

func httpGet(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := defaultClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	raw, err := httputil.DumpResponse(resp, true)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

func checkRedirect(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	resp, raw := httpGet(t, n.resolverURL()+"/"+handle)
	noMarker(t, "redirect", raw)
	want := http.StatusOK // no target: the values page
	switch {
	case notThere:
		want = http.StatusNotFound
	case r.gone:
		want = http.StatusGone
	case r.alias != "":
		want = http.StatusMovedPermanently
	case r.target != 0:
		want = http.StatusFound
	}
	if resp.StatusCode != want {
		t.Fatalf("redirect: status %d, want %d\n%s", resp.StatusCode, want, raw)
	}
	loc := resp.Header.Get("Location")
	switch want {
	case http.StatusFound:
		w := r.value(r.target).Data
		if r.location != "" {
			w = r.location
		}
		if loc != w {
			t.Errorf("redirect: Location %q, want the target %q", loc, w)
		}
	case http.StatusMovedPermanently:
		if !strings.HasSuffix(loc, "/"+r.alias) {
			t.Errorf("alias redirect: Location %q, want …/%s", loc, r.alias)
		}
	case http.StatusGone:
		if w := r.value(r.target).Data; !bytes.Contains(raw, []byte(w)) {
			t.Errorf("tombstone lacks the last landing page %q", w)
		}
	case http.StatusOK:
		checkRows(t, "redirect values page", raw, r.visible)
	}
}

// checkNegotiated asks for Turtle and for every location: whatever the
// record offers, the answer carries nothing without public read.
func checkNegotiated(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	for _, q := range []string{"", "?action=showurls", "?action=metadata", "?locatt=weight:5"} {
		req, err := http.NewRequest(http.MethodGet, n.resolverURL()+"/"+handle+q, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/turtle, application/ld+json;q=0.9")
		resp, err := defaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s%s: %v", handle, q, err)
		}
		raw, _ := httputil.DumpResponse(resp, true)
		resp.Body.Close()
		noMarker(t, "negotiated "+q, raw)
		if notThere && resp.StatusCode != http.StatusNotFound {
			t.Errorf("negotiated %s: status %d, want 404", q, resp.StatusCode)
		}
		if resp.StatusCode >= 500 {
			t.Errorf("negotiated %s: status %d", q, resp.StatusCode)
		}
	}
}

// checkLinkset: the identifier's linkset exists exactly when the
// identifier is public, and carries nothing without public read.
func checkLinkset(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	resp, raw := httpGet(t, n.resolverURL()+"/api/linksets/"+handle)
	noMarker(t, "linkset", raw)
	want := http.StatusOK
	if notThere {
		want = http.StatusNotFound
	}
	if resp.StatusCode != want {
		t.Errorf("linkset: status %d, want %d", resp.StatusCode, want)
	}
	if !notThere && !bytes.Contains(raw, []byte(`"cite-as":[{"href":"https://hdl.handle.net/`+handle+`"}]`)) {
		t.Errorf("linkset lacks cite-as:\n%s", raw)
	}
}

func checkNoredirect(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	resp, raw := httpGet(t, n.resolverURL()+"/"+handle+"?noredirect")
	noMarker(t, "?noredirect", raw)
	if notThere {
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("?noredirect: status %d, want 404", resp.StatusCode)
		}
		return
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("?noredirect: status %d, want 200", resp.StatusCode)
	}
	checkRows(t, "?noredirect", raw, r.visible)
}

func checkRows(t *testing.T, front string, page []byte, want []int32) {
	t.Helper()
	got := []int32{}
	for _, m := range rowIndex.FindAllSubmatch(page, -1) {
		i, _ := strconv.Atoi(string(m[1]))
		got = append(got, int32(i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s shows values %v, want %v", front, got, want)
	}
}

func checkAPI(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	all := ""
	for _, v := range r.values {
		all += "&index=" + strconv.Itoa(int(v.Index))
	}
	for _, query := range []string{"", "?type=URL.&type=DNS.&type=HS_ALIAS&type=EMAIL&type=STATUS", "?x=1" + all} {
		resp, raw := httpGet(t, n.resolverURL()+"/api/handles/"+handle+query)
		noMarker(t, "/api/handles"+query, raw)
		var body struct {
			ResponseCode int `json:"responseCode"`
			Values       []struct {
				Index int32  `json:"index"`
				Type  string `json:"type"`
			} `json:"values"`
		}
		b := raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:]
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("/api/handles%s: %v\n%s", query, err, raw)
		}
		if notThere {
			if resp.StatusCode != http.StatusNotFound || body.ResponseCode != 100 {
				t.Errorf("/api/handles%s: %d responseCode %d, want 404 and 100", query, resp.StatusCode, body.ResponseCode)
			}
			continue
		}
		want := r.visible
		if strings.HasPrefix(query, "?type=") {
			want = nil
			for _, i := range r.visible {
				switch typ := strings.ToUpper(r.value(i).Type); {
				case strings.HasPrefix(typ, "URL"), strings.HasPrefix(typ, "DNS."), typ == "HS_ALIAS", typ == "EMAIL", typ == "STATUS":
					want = append(want, i)
				}
			}
		}
		got := []int32{}
		for _, v := range body.Values {
			got = append(got, v.Index)
		}
		if resp.StatusCode != http.StatusOK || !slices.Equal(got, append([]int32{}, want...)) {
			t.Errorf("/api/handles%s: %d values %v, want 200 and %v", query, resp.StatusCode, got, want)
		}
		// The responseCode the native protocol answers for the same view
		// (checkNative): 200 VALUES_NOT_FOUND when nothing public is left,
		// whether by a filter or because no value has public read.
		wantRC := 1
		if len(want) == 0 {
			wantRC = 200
		}
		if body.ResponseCode != wantRC {
			t.Errorf("/api/handles%s: responseCode %d with values %v, want %d", query, body.ResponseCode, got, wantRC)
		}
	}
}

func checkDNS(t *testing.T, n *node, r *confRecord, notThere bool) {
	name := r.name + "." + confZone
	for _, network := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: network, Timeout: 5 * time.Second}
		for _, qt := range []uint16{dns.TypeTXT, dns.TypeURI, dns.TypeANY, dns.TypeA} {
			q := new(dns.Msg)
			q.SetQuestion(name, qt)
			q.SetEdns0(4096, false)
			m, _, err := c.Exchange(q, n.addr["dns"])
			if err != nil {
				t.Fatalf("dns %s %s: %v", network, dns.TypeToString[qt], err)
			}
			front := "dns " + network + " " + dns.TypeToString[qt]
			raw, err := m.Pack()
			if err != nil {
				t.Fatal(err)
			}
			noMarker(t, front, raw)
			if notThere {
				if m.Rcode != dns.RcodeNameError {
					t.Errorf("%s: rcode %s, want NXDOMAIN", front, dns.RcodeToString[m.Rcode])
				}
				continue
			}
			if m.Rcode != dns.RcodeSuccess {
				t.Errorf("%s: rcode %s, want NOERROR", front, dns.RcodeToString[m.Rcode])
				continue
			}
			var got, want []string
			for _, rr := range m.Answer {
				switch x := rr.(type) {
				case *dns.TXT:
					got = append(got, strings.Join(x.Txt, ""))
				case *dns.URI:
					got = append(got, x.Target)
				case *dns.A:
					got = append(got, x.A.String())
				}
			}
			switch qt {
			case dns.TypeTXT, dns.TypeANY:
				want = r.dnsTXT
			case dns.TypeURI:
				want = r.dnsURI
			case dns.TypeA:
				want = r.dnsA
			}
			if len(got) != len(want) || len(want) > 0 && !slices.Equal(got, want) {
				t.Errorf("%s: answers %q, want %q", front, got, want)
			}
		}
	}
}

func checkNative(t *testing.T, n *node, r *confRecord, handle string, notThere bool) {
	var all []int32
	for _, v := range r.values {
		all = append(all, v.Index)
	}
	for _, udp := range []bool{false, true} {
		c := &hdl.Client{Addr: n.addr["hdl"], UDP: udp, Timeout: 5 * time.Second}
		for _, filter := range []struct {
			name    string
			indexes []int32
			types   []string
		}{{"unfiltered", nil, nil}, {"every index", all, nil}, {"types URL. DNS.", nil, []string{"URL.", "DNS."}}} {
			if filter.name == "every index" && len(all) == 0 {
				continue
			}
			front := "native tcp " + filter.name
			if udp {
				front = "native udp " + filter.name
			}
			resp, err := c.Resolve(context.Background(), handle, filter.indexes, filter.types, 0)
			if err != nil {
				t.Fatalf("%s: %v", front, err)
			}
			noMarker(t, front, resp.Raw)
			rc := resp.Message.Header.ResponseCode
			if notThere {
				if rc != hsmsg.RCHandleNotFound {
					t.Errorf("%s: RC %d, want %d", front, rc, hsmsg.RCHandleNotFound)
				}
				continue
			}
			want := r.visible
			if filter.types != nil {
				want = nil
				for _, i := range r.visible {
					if typ := strings.ToUpper(r.value(i).Type); typ == "URL" || strings.HasPrefix(typ, "URL.") || strings.HasPrefix(typ, "DNS.") {
						want = append(want, i)
					}
				}
			}
			got := []int32{}
			for _, v := range resp.Values {
				got = append(got, v.Index)
			}
			switch {
			case len(want) == 0 && rc != hsmsg.RCValuesNotFound:
				t.Errorf("%s: RC %d values %v, want RC %d (no public value)", front, rc, got, hsmsg.RCValuesNotFound)
			case len(want) > 0 && (rc != hsmsg.RCSuccess || !slices.Equal(got, want)):
				t.Errorf("%s: RC %d values %v, want RC 1 and %v", front, rc, got, want)
			}
		}
	}
}

// value returns the table value with index i.
func (r *confRecord) value(i int32) confValue {
	for _, v := range r.values {
		if v.Index == i {
			return v
		}
	}
	return confValue{}
}
