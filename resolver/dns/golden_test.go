package hdldns_test

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/miekg/dns"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGoldenReplies pins the bytes of representative replies (docs/architecture.md practice
// 10): the text miekg/dns prints for them and their wire form in hex. Review a
// diff here as a change of what DNS clients receive.
func TestGoldenReplies(t *testing.T) {
	fx := newOffline(t, nil)
	loadAnswerData(t, fx)
	loadBigData(t, fx)
	cases := []struct {
		name  string
		qname string
		qtype uint16
		edns  uint16
		tcp   bool
	}{
		{"TXT, reference example, UDP", nameRef, dns.TypeTXT, 0, false},
		{"URI, reference example, EDNS0", nameRef, dns.TypeURI, 1232, false},
		{"TXT, URL and DNS.TXT", nameDNS, dns.TypeTXT, 1232, false},
		{"A from DNS.A values", nameDNS, dns.TypeA, 0, false},
		{"CNAME for A", "ALIAS0001.DNS.svc." + zoneTest, dns.TypeA, 0, false},
		{"tombstone TXT", nameObs, dns.TypeTXT, 0, false},
		{"NODATA", nameRef, dns.TypeA, 1232, false},
		{"NXDOMAIN", "NOSUCHID0.K7Q.svc." + zoneTest, dns.TypeTXT, 1232, false},
		{"apex SOA", zoneTest, dns.TypeSOA, 0, false},
		{"apex NS, TCP", zoneTest, dns.TypeNS, 0, true},
		{"REFUSED outside the zones", "www.example.com.", dns.TypeA, 0, false},
		{"truncated over UDP", nameLong, dns.TypeTXT, 0, false},
		{"hx name", "hx--a-20b-2fc.legacy." + zoneTest, dns.TypeURI, 0, false},
	}
	var out bytes.Buffer
	for i, c := range cases {
		q := query(c.qname, c.qtype, c.edns)
		q.Id = uint16(0x1000 + i)
		w := &captureWriter{tcp: c.tcp}
		fx.srv.ServeDNS(w, q)
		if len(w.out) != 1 {
			t.Fatalf("%s: %d replies", c.name, len(w.out))
		}
		r := new(dns.Msg)
		if err := r.Unpack(w.out[0]); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		network := "udp"
		if c.tcp {
			network = "tcp"
		}
		fmt.Fprintf(&out, "=== %s\n;; query %s %s edns=%d %s\n%s\n;; wire %d bytes\n", c.name, c.qname,
			dns.TypeToString[c.qtype], c.edns, network, r.String(), len(w.out[0]))
		for b := w.out[0]; len(b) > 0; b = b[min(32, len(b)):] {
			fmt.Fprintf(&out, "%s\n", hex.EncodeToString(b[:min(32, len(b))]))
		}
		out.WriteString("\n")
	}
	path := filepath.Join("testdata", "replies.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./resolver/dns -run Golden -update)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("replies differ from %s (review, then -update):\n%s", path, out.String())
	}
}
