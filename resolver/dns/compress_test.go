package hdldns

import (
	"testing"

	"github.com/miekg/dns"
)

// TestCompressOwners compares the hand-compressed message with what miekg/dns
// unpacks from it and with miekg's own compression.
func TestCompressOwners(t *testing.T) {
	owner := "4xj29mpac.k7q.svc.hdl.example.org."
	txt := func(name, s string) dns.RR {
		return &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{s}}
	}
	tests := []struct {
		name     string
		qname    string
		answers  []dns.RR
		pointers int // owners expected as pointers
	}{
		{"one answer", owner, []dns.RR{txt(owner, "https://example.org/a")}, 1},
		{"two answers", owner, []dns.RR{txt(owner, "a"), txt(owner, "b")}, 2},
		{"second owner differs: stop there", owner, []dns.RR{txt(owner, "a"), txt("x."+owner, "b")}, 1},
		{"case differs: not the same bytes", owner, []dns.RR{txt("4XJ29MPAC.k7q.svc.hdl.example.org.", "a")}, 0},
		{"root question", ".", []dns.RR{txt(".", "a")}, 0},
		{"short name", "a.", []dns.RR{txt("a.", "a")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion(tt.qname, dns.TypeTXT)
			m.Response = true
			m.Answer = tt.answers
			m.SetEdns0(1232, false)
			plain, err := m.Pack()
			if err != nil {
				t.Fatal(err)
			}
			out := compressOwners(append([]byte(nil), plain...), len(m.Answer))
			got := new(dns.Msg)
			if err := got.Unpack(out); err != nil {
				t.Fatalf("unpack compressed: %v", err)
			}
			if got.String() != m.String() {
				t.Errorf("compressed message reads\n%s\nwant\n%s", got, m)
			}
			qlen := len(plain) - len(out)
			if tt.pointers > 0 {
				wire := len(tt.qname) + 1 // wire length of a simple fully qualified name
				if want := tt.pointers * (wire - 2); qlen != want {
					t.Errorf("saved %d bytes, want %d", qlen, want)
				}
			} else if qlen != 0 {
				t.Errorf("saved %d bytes, want none", qlen)
			}
		})
	}
	// Truncated or odd input never panics and stays as it was.
	for _, b := range [][]byte{nil, make([]byte, 12), {0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0xC0}} {
		if out := compressOwners(b, 3); len(out) != len(b) {
			t.Errorf("compressOwners(% x) changed the length", b)
		}
	}
}
