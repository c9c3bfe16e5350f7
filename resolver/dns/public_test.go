package hdldns_test

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"

	"pidnode/handlev"
)

// Markers carried only by values without public read: no reply may contain them.
const (
	secretURL = "https://secret.example.org/PRIVATE-URL-MARKER"
	secretTXT = "PRIVATE-TXT-MARKER"
	secretA   = "192.0.2.77"
)

// TestPrivateValuesNeverAnswered: a value without public read (permissions
// 1100, admin read/write only) is never published. Over real UDP and TCP, TXT,
// URI, ANY, A and the type the private value would answer all leave it out;
// the public URL.* subtype after the private URL is the one answered.
func TestPrivateValuesNeverAnswered(t *testing.T) {
	f := newFixture(t, nil)
	const (
		hPriv    = "21.T12345/svc/PRV/ONLYPRIV1"
		namePriv = "ONLYPRIV1.PRV.svc." + zoneTest
		hMixed   = "21.T12345/svc/PRV/MIXED0001"
		nameMix  = "MIXED0001.PRV.svc." + zoneTest
		urlPub   = "https://example.org/public-landing"
	)
	private := func(v handlev.Value) handlev.Value {
		v.Perm = handlev.PermAdminRead | handlev.PermAdminWrite // "1100"
		return v
	}
	f.put(t, hPriv, private(val(handlev.TypeURL, secretURL, 300)),
		private(val("DNS.TXT", `"`+secretTXT+`"`, 300)),
		private(val("DNS.A", secretA, 300)),
		status(handlev.StatusRegistered))
	f.put(t, hMixed, private(val(handlev.TypeURL, secretURL, 300)),
		val("URL.landing", urlPub, 300),
		private(val("DNS.TXT", `"`+secretTXT+`"`, 300)),
		status(handlev.StatusRegistered))

	markers := [][]byte{[]byte(secretURL), []byte(secretTXT), []byte("PRIVATE-URL-MARKER"), {192, 0, 2, 77}}
	for _, network := range nets {
		for _, qt := range []uint16{dns.TypeTXT, dns.TypeURI, dns.TypeANY, dns.TypeA} {
			for _, name := range []string{namePriv, nameMix} {
				r := f.exchange(t, network, query(name, qt, 1232))
				raw, err := r.Pack()
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range markers {
					if bytes.Contains(raw, m) {
						t.Errorf("%s %s %s: reply carries private data %q:\n%v", network, name, dns.TypeToString[qt], m, r)
					}
				}
				if r.Rcode != dns.RcodeSuccess {
					t.Errorf("%s %s %s: rcode %s, want NOERROR", network, name, dns.TypeToString[qt], dns.RcodeToString[r.Rcode])
				}
				switch {
				case name == namePriv && len(r.Answer) != 0:
					t.Errorf("%s %s %s: %d answers, want none (NODATA):\n%v", network, name, dns.TypeToString[qt], len(r.Answer), r)
				case name == nameMix && (qt == dns.TypeTXT || qt == dns.TypeANY):
					if len(r.Answer) != 1 || r.Answer[0].(*dns.TXT).Txt[0] != urlPub {
						t.Errorf("%s %s %s: answer %v, want the public URL.landing %q", network, name, dns.TypeToString[qt], r.Answer, urlPub)
					}
				case name == nameMix && qt == dns.TypeURI:
					if len(r.Answer) != 1 || r.Answer[0].(*dns.URI).Target != urlPub {
						t.Errorf("%s %s URI: answer %v, want the public URL.landing %q", network, name, r.Answer, urlPub)
					}
				}
			}
		}
	}
}
