package hdldns_test

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"pidnode/handlev"
)

// Handles of the answer tests (all under the test prefix unless noted).
const (
	hDNS     = "21.T12345/svc/DNS/RECORDS01"
	hAlias   = "21.T12345/svc/DNS/ALIAS0001"
	hAbs     = "21.T12345/svc/TTL/ABSOLUTE1"
	hPast    = "21.T12345/svc/TTL/EXPIRED01"
	hObs     = "21.T12345/svc/OLD/OBSOLETE1"
	hDep     = "21.T12345/svc/OLD/DEPRECAT1"
	hSub     = "21.T12345/svc/NEW/SUBMITTED"
	hNoURL   = "21.T12345/svc/K7Q/NOURL0001"
	hURLDot  = "21.T12345/svc/K7Q/URLDOT001"
	hSpace   = "21.T12345/legacy/a b/c"
	hDotted  = "21.T12345/doc/v1.2"
	hBack    = "21.T12345/svc/K7Q/BACKSLASH"
	hProd    = "21.12345/svc/ABC/0123456789"
	hEmpty   = "21.T12345/svc/K7Q/EMPTYURL1"
	soaTest  = "hdl.example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 2026112201 3600 600 1209600 30"
	negTest  = "hdl.example.org. 30 IN SOA ns1.example.org. hostmaster.example.org. 2026112201 3600 600 1209600 30"
	urlDNS   = "https://example.org/dns"
	urlBack  = `https://example.org/a\b`
	nameDNS  = "RECORDS01.DNS.svc." + zoneTest
	nameObs  = "OBSOLETE1.OLD.svc." + zoneTest
	nameDep  = "DEPRECAT1.OLD.svc." + zoneTest
	nameProd = "0123456789.abc.svc." + zoneProd
)

// loadAnswerData stores the records the answer tests query.
func loadAnswerData(t testing.TB, f *fixture) {
	t.Helper()
	reg := status(handlev.StatusRegistered)
	f.put(t, hRef, val(handlev.TypeURL, urlRef, 86400), reg,
		val(handlev.TypeEmail, "pid@example.org", 86400))
	f.put(t, hDNS, val(handlev.TypeURL, urlDNS, 3600), reg,
		val("DNS.A", "192.0.2.1", 300),
		val("dns.a", "192.0.2.2", 600),
		val("DNS.A", "not-an-address", 600), // skipped: does not parse
		val("DNS.AAAA", "2001:db8::1", 300),
		val("DNS.TXT", `"v=hdl1" "second string"`, 120),
		val("DNS.MX", "10 mail.example.org.", 300),
		val("DNS.TYPE65280", `\# 3 010203`, 300),
		val("DNS.NS", "ns.elsewhere.example.", 300),         // ignored: NS only at the apex
		val("DNS.A", "192.0.2.9\nx 1 IN A 192.0.2.10", 300), // skipped: two lines
		val("DNS.TXT", "", 300),                             // skipped: a TXT needs a string
	)
	f.put(t, hAlias, reg, val("DNS.CNAME", "target.example.net.", 900))
	abs := val(handlev.TypeURL, "https://example.org/abs", startSec+300)
	abs.TTLType = handlev.TTLAbsolute
	f.put(t, hAbs, abs, reg)
	past := val(handlev.TypeURL, "https://example.org/past", startSec-10)
	past.TTLType = handlev.TTLAbsolute
	f.put(t, hPast, past, reg)
	f.put(t, hObs, val(handlev.TypeURL, "https://example.org/old", 3600), status(handlev.StatusObsoleted),
		val("DNS.A", "192.0.2.3", 300))
	f.put(t, hDep, val(handlev.TypeURL, "https://example.org/dep", 3600), status(handlev.StatusDeprecated))
	f.put(t, hSub, val(handlev.TypeURL, "https://example.org/new", 3600), status(handlev.StatusSubmitted))
	f.put(t, hNoURL, reg, val(handlev.TypeEmail, "pid@example.org", 3600))
	f.put(t, hURLDot, val("URL.landing", "https://example.org/dot", 3600), val("URL.meta", "https://example.org/meta", 3600))
	f.put(t, hSpace, val(handlev.TypeURL, "https://example.org/space", 3600))
	f.put(t, hDotted, val(handlev.TypeURL, "https://example.org/dotted", 3600))
	f.put(t, hBack, val(handlev.TypeURL, urlBack, 3600))
	f.put(t, hProd, val(handlev.TypeURL, "https://example.org/prod", 3600))
	f.put(t, hEmpty, val(handlev.TypeURL, "", 3600))
}

// canon renders zone-file lines as miekg/dns prints RRs, for comparison.
func canon(t testing.TB, lines ...string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("test RR %q: %v", l, err)
		}
		out = append(out, rr.String())
	}
	return out
}

func strs(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	return out
}

func TestAnswers(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	txt := func(name, ttl, s string) string { return name + " " + ttl + " IN TXT \"" + s + "\"" }
	tests := []struct {
		name   string
		qname  string
		qtype  uint16
		qclass uint16 // 0: IN
		rcode  int
		aa     bool
		answer []string // zone-file lines
		ns     []string
	}{
		{name: "TXT reference example", qname: nameRef, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(nameRef, "86400", urlRef)}},
		{name: "URI reference example", qname: nameRef, qtype: dns.TypeURI, aa: true,
			answer: []string{nameRef + " 86400 IN URI 10 1 \"" + urlRef + "\""}},
		{name: "ANY answers the TXT RRset", qname: nameRef, qtype: dns.TypeANY, aa: true,
			answer: []string{txt(nameRef, "86400", urlRef)}},
		{name: "mixed case name, owner echoed", qname: "4xj29mPaC.k7Q.SVC.HDL.example.ORG.", qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("4xj29mPaC.k7Q.SVC.HDL.example.ORG.", "86400", urlRef)}},
		{name: "dashes in the id fold away", qname: "4xj2-9mpa-c.k7q.svc.hdl.example.org.", qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("4xj2-9mpa-c.k7q.svc.hdl.example.org.", "86400", urlRef)}},
		{name: "short form finds the full record", qname: "4XJ29MPAC.K7Q." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("4XJ29MPAC.K7Q."+zoneTest, "86400", urlRef)}},
		{name: "second zone, production prefix", qname: nameProd, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(nameProd, "3600", "https://example.org/prod")}},
		{name: "URL.* when there is no URL", qname: "URLDOT001.K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("URLDOT001.K7Q.svc."+zoneTest, "3600", "https://example.org/dot")}},
		{name: "backslash in URL survives", qname: "BACKSLASH.K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("BACKSLASH.K7Q.svc."+zoneTest, "3600", `https://example.org/a\\b`)}},

		{name: "DNS.A RRset, smallest TTL, bad values skipped", qname: nameDNS, qtype: dns.TypeA, aa: true,
			answer: []string{nameDNS + " 300 IN A 192.0.2.1", nameDNS + " 300 IN A 192.0.2.2"}},
		{name: "DNS.AAAA", qname: nameDNS, qtype: dns.TypeAAAA, aa: true,
			answer: []string{nameDNS + " 300 IN AAAA 2001:db8::1"}},
		{name: "TXT: URL then DNS.TXT, one TTL", qname: nameDNS, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(nameDNS, "120", urlDNS), nameDNS + ` 120 IN TXT "v=hdl1" "second string"`}},
		{name: "DNS.MX", qname: nameDNS, qtype: dns.TypeMX, aa: true,
			answer: []string{nameDNS + " 300 IN MX 10 mail.example.org."}},
		{name: "DNS.TYPE65280 generic", qname: nameDNS, qtype: 65280, aa: true,
			answer: []string{nameDNS + ` 300 IN TYPE65280 \# 3 010203`}},
		{name: "DNS.NS below the apex is ignored", qname: nameDNS, qtype: dns.TypeNS, aa: true,
			ns: []string{negTest}},
		{name: "no value of the type: NODATA", qname: nameDNS, qtype: dns.TypeSRV, aa: true,
			ns: []string{negTest}},
		{name: "CNAME answers other types", qname: "ALIAS0001.DNS.svc." + zoneTest, qtype: dns.TypeA, aa: true,
			answer: []string{"ALIAS0001.DNS.svc." + zoneTest + " 900 IN CNAME target.example.net."}},
		{name: "CNAME asked for", qname: "ALIAS0001.DNS.svc." + zoneTest, qtype: dns.TypeCNAME, aa: true,
			answer: []string{"ALIAS0001.DNS.svc." + zoneTest + " 900 IN CNAME target.example.net."}},
		{name: "empty URL: TXT is NODATA", qname: "EMPTYURL1.K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			ns: []string{negTest}},
		{name: "empty URL: URI is NODATA", qname: "EMPTYURL1.K7Q.svc." + zoneTest, qtype: dns.TypeURI, aa: true,
			ns: []string{negTest}},
		{name: "no URL: TXT is NODATA", qname: "NOURL0001.K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			ns: []string{negTest}},

		{name: "absolute TTL as seconds left", qname: "ABSOLUTE1.TTL.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("ABSOLUTE1.TTL.svc."+zoneTest, "300", "https://example.org/abs")}},
		{name: "absolute TTL passed is 0", qname: "EXPIRED01.TTL.svc." + zoneTest, qtype: dns.TypeURI, aa: true,
			answer: []string{"EXPIRED01.TTL.svc." + zoneTest + " 0 IN URI 10 1 \"https://example.org/past\""}},

		{name: "obsoleted: TXT status", qname: nameObs, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(nameObs, "600", "status=OBSOLETED")}},
		{name: "obsoleted: no URI", qname: nameObs, qtype: dns.TypeURI, aa: true, ns: []string{negTest}},
		{name: "obsoleted: no DNS values", qname: nameObs, qtype: dns.TypeA, aa: true, ns: []string{negTest}},
		{name: "deprecated: TXT status", qname: nameDep, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(nameDep, "600", "status=DEPRECATED")}},
		{name: "submitted is not public", qname: "SUBMITTED.NEW.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			rcode: dns.RcodeNameError, ns: []string{negTest}},

		{name: "hx label with space", qname: "c.hx--a-20b.legacy." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("c.hx--a-20b.legacy."+zoneTest, "3600", "https://example.org/space")}},
		{name: "hx label carrying slashes", qname: "HX--A-20B-2FC.legacy." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("HX--A-20B-2FC.legacy."+zoneTest, "3600", "https://example.org/space")}},
		{name: "hx label with a dot", qname: "hx--v1-2e2.doc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt("hx--v1-2e2.doc."+zoneTest, "3600", "https://example.org/dotted")}},
		{name: "escaped dot in a label", qname: `v1\.2.doc.` + zoneTest, qtype: dns.TypeTXT, aa: true,
			answer: []string{txt(`v1\.2.doc.`+zoneTest, "3600", "https://example.org/dotted")}},
		{name: "malformed hx label", qname: "hx--a-zz.legacy." + zoneTest, qtype: dns.TypeTXT, aa: true,
			rcode: dns.RcodeNameError, ns: []string{negTest}},

		{name: "apex SOA", qname: zoneTest, qtype: dns.TypeSOA, aa: true, answer: []string{soaTest}},
		{name: "apex SOA, other case", qname: "HDL.Example.Org.", qtype: dns.TypeSOA, aa: true, answer: []string{soaTest}},
		{name: "apex NS", qname: zoneTest, qtype: dns.TypeNS, aa: true, answer: []string{
			"hdl.example.org. 3600 IN NS ns1.example.org.", "hdl.example.org. 3600 IN NS ns2.example.org."}},
		{name: "apex ANY is the SOA", qname: zoneTest, qtype: dns.TypeANY, aa: true, answer: []string{soaTest}},
		{name: "apex TXT: NODATA", qname: zoneTest, qtype: dns.TypeTXT, aa: true, ns: []string{negTest}},
		{name: "apex of the second zone", qname: zoneProd, qtype: dns.TypeSOA, aa: true, answer: []string{
			"prod.example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 2026112201 3600 600 1209600 30"}},

		{name: "unknown handle: NXDOMAIN", qname: "NOSUCHID0.K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			rcode: dns.RcodeNameError, ns: []string{negTest}},
		{name: "empty non-terminal: NXDOMAIN", qname: "K7Q.svc." + zoneTest, qtype: dns.TypeTXT, aa: true,
			rcode: dns.RcodeNameError, ns: []string{negTest}},

		{name: "outside every zone: REFUSED", qname: "www.example.com.", qtype: dns.TypeA, rcode: dns.RcodeRefused},
		{name: "parent of a zone: REFUSED", qname: "example.org.", qtype: dns.TypeSOA, rcode: dns.RcodeRefused},
		{name: "CHAOS class: REFUSED", qname: "version.bind.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS, rcode: dns.RcodeRefused},
		{name: "CHAOS in the zone: REFUSED", qname: nameRef, qtype: dns.TypeTXT, qclass: dns.ClassCHAOS, rcode: dns.RcodeRefused},
		{name: "IXFR: REFUSED", qname: zoneTest, qtype: dns.TypeIXFR, rcode: dns.RcodeRefused},
	}
	for _, network := range nets {
		for _, tt := range tests {
			t.Run(network+"/"+tt.name, func(t *testing.T) {
				q := query(tt.qname, tt.qtype, 1232)
				if tt.qclass != 0 {
					q.Question[0].Qclass = tt.qclass
				}
				r := f.exchange(t, network, q)
				if r.Rcode != tt.rcode {
					t.Errorf("rcode = %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[tt.rcode])
				}
				if r.Authoritative != tt.aa || r.RecursionAvailable || !r.RecursionDesired || r.Truncated {
					t.Errorf("flags aa=%v ra=%v rd=%v tc=%v, want aa=%v ra=false rd=true tc=false",
						r.Authoritative, r.RecursionAvailable, r.RecursionDesired, r.Truncated, tt.aa)
				}
				if len(r.Question) != 1 || r.Question[0] != q.Question[0] {
					t.Errorf("question = %v, want %v", r.Question, q.Question)
				}
				if got, want := strs(r.Answer), canon(t, tt.answer...); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("answer:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if got, want := strs(r.Ns), canon(t, tt.ns...); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("authority:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if opt := r.IsEdns0(); opt == nil || opt.UDPSize() != 1232 || opt.Version() != 0 {
					t.Errorf("OPT = %v, want version 0, size 1232", opt)
				}
				if len(r.Extra) != 1 {
					t.Errorf("additional = %v, want the OPT only", r.Extra)
				}
			})
		}
	}
}

// TestURIBackslash checks the URI target on the wire: miekg/dns unpacks URI
// targets raw but prints them as if escaped, so String() cannot be compared.
func TestURIBackslash(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	for _, network := range nets {
		r := f.exchange(t, network, query("BACKSLASH.K7Q.svc."+zoneTest, dns.TypeURI, 0))
		if len(r.Answer) != 1 {
			t.Fatalf("%s: answer %v, want one URI", network, r.Answer)
		}
		u, ok := r.Answer[0].(*dns.URI)
		if !ok || u.Target != urlBack || u.Priority != 10 || u.Weight != 1 {
			t.Errorf("%s: answer %#v, want URI 10 1 %q", network, r.Answer[0], urlBack)
		}
	}
}
