package hdldns

import (
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// parseSeeds are queries the fast parser takes and some it must leave to
// dns.Msg.Unpack.
func parseSeeds(t testing.TB) [][]byte {
	var out [][]byte
	add := func(m *dns.Msg) {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	q := func(name string, qt uint16) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion(name, qt)
		m.Id = 0x1234
		return m
	}
	add(q("4XJ29MPAC.K7Q.svc.hdl.example.org.", dns.TypeTXT))
	add(q(".", dns.TypeNS))
	add(q(`a\.b\@c\;\(\)\"\\\032\000\255.x.`, dns.TypeURI))
	add(q(strings.Repeat("a", 63)+"."+strings.Repeat("b", 63)+"."+strings.Repeat("c", 63)+"."+strings.Repeat("d", 61)+".", dns.TypeA))
	e := q("hx--a-2fb.hdl.example.org.", dns.TypeTXT)
	e.SetEdns0(1232, true)
	add(e)
	e = q("x.hdl.example.org.", dns.TypeTXT)
	e.SetEdns0(4096, false)
	e.IsEdns0().SetVersion(1)
	e.IsEdns0().SetExtendedRcode(dns.RcodeBadVers)
	add(e)
	e = q("cookie.hdl.example.org.", dns.TypeTXT)
	e.SetEdns0(1232, false)
	e.IsEdns0().Option = append(e.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
	add(e) // options: left to Unpack
	c := q("a.hdl.example.org.", dns.TypeTXT)
	c.Extra = append(c.Extra, &dns.A{Hdr: dns.RR_Header{Name: "a.hdl.example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}})
	c.Compress = true
	add(c) // a compressed name and a non-OPT record: left to Unpack
	return out
}

// FuzzParseQuery: whatever the fast parser accepts, it reads exactly as
// dns.Msg.Unpack does.
func FuzzParseQuery(f *testing.F) {
	for _, b := range parseSeeds(f) {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	var p queryParser
	f.Fuzz(func(t *testing.T, b []byte) {
		var got dns.Msg
		if !p.parse(&got, b) {
			return
		}
		var want dns.Msg
		if err := want.Unpack(b); err != nil {
			t.Fatalf("parse accepted what Unpack rejects (%v): %x", err, b)
		}
		// Compare copies: the parser's sections live in its own arrays.
		got.Question = append([]dns.Question(nil), got.Question...)
		got.Question[0].Name = strings.Clone(got.Question[0].Name)
		if got.Extra != nil {
			o := *got.Extra[0].(*dns.OPT)
			got.Extra = []dns.RR{&o}
		}
		if !reflect.DeepEqual(&got, &want) {
			t.Fatalf("parse(%x):\n%v\nUnpack:\n%v", b, &got, &want)
		}
	})
}

// TestParseQueryTakesTheCommonQueries: the fast path is actually taken for
// plain queries, with or without an option-less OPT.
func TestParseQueryTakesTheCommonQueries(t *testing.T) {
	seeds := parseSeeds(t)
	var p queryParser
	for i, b := range seeds {
		var m dns.Msg
		want := i < 6 // the first six seeds: no options, no compression
		if got := p.parse(&m, b); got != want {
			t.Errorf("seed %d: parse = %v, want %v", i, got, want)
		}
	}
	var m dns.Msg
	if n := testing.AllocsPerRun(100, func() { p.parse(&m, seeds[0]) }); n != 0 {
		t.Errorf("parse allocates %.1f times, want 0", n)
	}
}
