package hdldns_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/handlev"
	hdldns "pidnode/resolver/dns"
)

const (
	hLong    = "21.T12345/svc/BIG/LONGURL01"
	nameLong = "LONGURL01.BIG.svc." + zoneTest
	hMany    = "21.T12345/svc/BIG/MANYTXT01"
	nameMany = "MANYTXT01.BIG.svc." + zoneTest
)

// loadBigData stores a record whose TXT (one 600-byte URL) needs EDNS0 and one
// whose TXT RRset (12 values of ~200 bytes) needs TCP.
func loadBigData(t testing.TB, f *fixture) string {
	t.Helper()
	long := "https://example.org/" + strings.Repeat("x", 580)
	f.put(t, hLong, val(handlev.TypeURL, long, 3600), status(handlev.StatusRegistered))
	var vals []handlev.Value
	for i := range 12 {
		vals = append(vals, val("DNS.TXT", `"`+strings.Repeat(string(rune('a'+i)), 200)+`"`, 300))
	}
	f.put(t, hMany, vals...)
	return long
}

func TestTruncationThenTCP(t *testing.T) {
	f := newFixture(t, nil)
	long := loadBigData(t, f)
	tests := []struct {
		name     string
		qname    string
		edns     uint16
		limit    int // largest UDP reply allowed
		tc       bool
		udpCount int // answers over UDP (when not truncated)
		tcpCount int
	}{
		{"600-byte URL without EDNS0", nameLong, 0, 512, true, 0, 1},
		{"600-byte URL with EDNS0 1232", nameLong, 1232, 1232, false, 1, 1},
		{"12 TXT strings, EDNS0 4096 capped at 1232", nameMany, 4096, 1232, true, 0, 12},
		{"12 TXT strings, EDNS0 800", nameMany, 800, 800, true, 0, 12},
		{"12 TXT strings, EDNS0 100 counts as 512", nameMany, 100, 512, true, 0, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := query(tt.qname, dns.TypeTXT, tt.edns)
			raw := f.rawUDP(t, q)
			if len(raw) > tt.limit {
				t.Errorf("UDP reply is %d bytes, limit %d", len(raw), tt.limit)
			}
			r := new(dns.Msg)
			if err := r.Unpack(raw); err != nil {
				t.Fatalf("unpack UDP reply: %v", err)
			}
			if r.Truncated != tt.tc {
				t.Errorf("UDP TC = %v, want %v", r.Truncated, tt.tc)
			}
			if !tt.tc && len(r.Answer) != tt.udpCount {
				t.Errorf("UDP answers = %d, want %d", len(r.Answer), tt.udpCount)
			}
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
				t.Errorf("UDP rcode %s aa %v, want NOERROR aa", dns.RcodeToString[r.Rcode], r.Authoritative)
			}
			if tt.edns > 0 && r.IsEdns0() == nil {
				t.Errorf("UDP reply lost its OPT")
			}
			// The client retries over TCP and gets everything.
			rt := f.exchange(t, "tcp", q)
			if rt.Truncated || len(rt.Answer) != tt.tcpCount {
				t.Fatalf("TCP TC=%v answers=%d, want full answer of %d", rt.Truncated, len(rt.Answer), tt.tcpCount)
			}
			if tt.qname == nameLong {
				got := strings.Join(rt.Answer[0].(*dns.TXT).Txt, "")
				if got != long {
					t.Errorf("TCP TXT = %q, want the URL in 255-byte strings", got)
				}
				if n := len(rt.Answer[0].(*dns.TXT).Txt); n != 3 {
					t.Errorf("TXT has %d strings, want 3 (255+255+90)", n)
				}
			}
		})
	}
	// miekg's own client: Truncated over UDP, then TCP.
	c := &dns.Client{Net: "udp", Timeout: 3 * time.Second}
	r, _, err := c.Exchange(query(nameMany, dns.TypeTXT, 1232), f.udp)
	if err != nil || !r.Truncated {
		t.Fatalf("client UDP exchange: TC=%v err=%v, want TC", r != nil && r.Truncated, err)
	}
	if st := f.srv.Stats(); st.Truncated == 0 {
		t.Errorf("Stats().Truncated = 0 after truncated answers")
	}
}

func TestEDNS0(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	t.Run("no OPT in, no OPT out", func(t *testing.T) {
		r := f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0))
		if r.IsEdns0() != nil {
			t.Errorf("reply has an OPT: %v", r.IsEdns0())
		}
	})
	t.Run("OPT echoed with our size and the DO bit", func(t *testing.T) {
		q := query(nameRef, dns.TypeTXT, 0)
		q.SetEdns0(4096, true)
		r := f.exchange(t, "udp", q)
		opt := r.IsEdns0()
		if opt == nil || opt.UDPSize() != 1232 || !opt.Do() || opt.Version() != 0 {
			t.Fatalf("OPT = %v, want size 1232, DO, version 0", opt)
		}
	})
	t.Run("EDNS version 1: BADVERS", func(t *testing.T) {
		q := query(nameRef, dns.TypeTXT, 1232)
		q.IsEdns0().SetVersion(1)
		for _, network := range nets {
			r := f.exchange(t, network, q)
			if r.Rcode != dns.RcodeBadVers || r.IsEdns0() == nil || r.IsEdns0().Version() != 0 || len(r.Answer) != 0 {
				t.Errorf("%s: rcode %s OPT %v, want BADVERS with a version-0 OPT", network, dns.RcodeToString[r.Rcode], r.IsEdns0())
			}
		}
	})
	t.Run("two OPTs: FORMERR", func(t *testing.T) {
		q := query(nameRef, dns.TypeTXT, 1232)
		q.Extra = append(q.Extra, q.Extra[0])
		r := f.exchange(t, "tcp", q)
		if r.Rcode != dns.RcodeFormatError {
			t.Errorf("rcode %s, want FORMERR", dns.RcodeToString[r.Rcode])
		}
	})
}

func TestCompression(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	raw := f.rawUDP(t, query(nameRef, dns.TypeTXT, 0))
	// The answer's owner is a pointer to the question name at offset 12.
	q := 12 + len(nameRef) + 1 + 4
	if len(raw) < q+2 || raw[q] != 0xC0 || raw[q+1] != 12 {
		t.Fatalf("answer owner at %d is % x, want a compression pointer c0 0c", q, raw[q:min(q+2, len(raw))])
	}
}

func TestRcodes(t *testing.T) {
	f := newFixture(t, nil)
	t.Run("AXFR over TCP: REFUSED", func(t *testing.T) {
		r := f.exchange(t, "tcp", query(zoneTest, dns.TypeAXFR, 0))
		if r.Rcode != dns.RcodeRefused || r.Authoritative || len(r.Answer) != 0 {
			t.Errorf("rcode %s aa %v answers %d, want REFUSED, no AA, nothing", dns.RcodeToString[r.Rcode], r.Authoritative, len(r.Answer))
		}
	})
	t.Run("NOTIFY: NOTIMP", func(t *testing.T) {
		q := query(zoneTest, dns.TypeSOA, 0)
		q.Opcode = dns.OpcodeNotify
		r := f.exchange(t, "udp", q)
		if r.Rcode != dns.RcodeNotImplemented || r.Opcode != dns.OpcodeNotify {
			t.Errorf("rcode %s opcode %d, want NOTIMP NOTIFY", dns.RcodeToString[r.Rcode], r.Opcode)
		}
	})
	t.Run("store failure: SERVFAIL", func(t *testing.T) {
		if err := f.db.Close(); err != nil {
			t.Fatal(err)
		}
		r := f.exchange(t, "udp", query("NOTCACHED.K7Q.svc."+zoneTest, dns.TypeTXT, 0))
		if r.Rcode != dns.RcodeServerFailure {
			t.Errorf("rcode %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
		}
		if f.srv.Stats().ServFail != 1 {
			t.Errorf("Stats().ServFail = %d, want 1", f.srv.Stats().ServFail)
		}
	})
}

// TestInvalidation: answers come from the shared cache; after a write and its
// invalidation the next answer is the new record.
func TestInvalidation(t *testing.T) {
	f := newFixture(t, nil)
	f.put(t, hRef, val(handlev.TypeURL, "https://example.org/v1", 60))
	if r := f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0)); r.Answer[0].(*dns.TXT).Txt[0] != "https://example.org/v1" {
		t.Fatalf("first answer %v", r.Answer)
	}
	f.put(t, hRef, val(handlev.TypeURL, "https://example.org/v2", 60)) // put invalidates
	if r := f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0)); r.Answer[0].(*dns.TXT).Txt[0] != "https://example.org/v2" {
		t.Fatalf("answer after update %v", r.Answer)
	}
	// Parsed DNS.* values are remembered per cache entry: a new entry is parsed anew.
	for _, a := range []string{"192.0.2.1", "192.0.2.2"} {
		f.put(t, hRef, val("DNS.A", a, 60))
		for range 2 { // the second answer comes from the memo
			r := f.exchange(t, "udp", query(nameRef, dns.TypeA, 0))
			if len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != a {
				t.Fatalf("A answer %v, want %s", r.Answer, a)
			}
		}
	}
}

func TestRRL(t *testing.T) {
	f := newFixture(t, func(c *hdldns.Config) {
		c.RRLRate = 5
		c.RRLBurst = 5
		c.RRLSlip = 2
	})
	loadAnswerData(t, f)
	conn, err := net.Dial("udp", f.udp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The fixture clock stands still: 5 answers, then every second response
	// over the limit slips (TC, no records) and the others are dropped.
	const sent = 25
	for i := range sent {
		q := query(nameRef, dns.TypeTXT, 1232)
		q.Id = uint16(1000 + i)
		b, _ := q.Pack()
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var answered, slipped int
	buf := make([]byte, 2048)
	for {
		// The 15 replies due are waited for as long as a loaded machine may
		// need (each wait ends with its reply); after them a short wait looks
		// for replies that should not come: a late one would escape it, but
		// no slowness can fail the test.
		wait := 10 * time.Second
		if answered+slipped >= 15 {
			wait = 300 * time.Millisecond
		}
		conn.SetReadDeadline(time.Now().Add(wait))
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		r := new(dns.Msg)
		if err := r.Unpack(buf[:n]); err != nil {
			t.Fatalf("unpack: %v", err)
		}
		switch {
		case r.Truncated && len(r.Answer) == 0 && len(r.Extra) == 0:
			slipped++
			if n > 12+len(nameRef)+1+4 {
				t.Errorf("slip reply is %d bytes, want header and question only", n)
			}
		case !r.Truncated && len(r.Answer) == 1:
			answered++
		default:
			t.Errorf("unexpected reply %v", r)
		}
	}
	if answered != 5 || slipped != 10 {
		t.Errorf("answered %d slipped %d of %d, want 5 and 10", answered, slipped, sent)
	}
	st := f.srv.Stats()
	if st.RRLDropped != 10 || st.RRLSlipped != 10 || st.Queries != sent {
		t.Errorf("Stats = %+v, want 10 dropped, 10 slipped, %d queries", st, sent)
	}
	// TCP is not limited.
	for range 10 {
		if r := f.exchange(t, "tcp", query(nameRef, dns.TypeTXT, 0)); len(r.Answer) != 1 {
			t.Fatalf("TCP answer %v", r)
		}
	}
	// Time refills the bucket.
	f.clock.Add(int64(time.Second))
	if r := f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0)); len(r.Answer) != 1 || r.Truncated {
		t.Fatalf("UDP answer after a second: %v", r)
	}
}

func TestRRLOffByDefault(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	for range 50 {
		if r := f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0)); len(r.Answer) != 1 {
			t.Fatalf("answer %v", r)
		}
	}
}

func TestShutdown(t *testing.T) {
	f := newOffline(t, nil)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- f.srv.ServeUDP(pc) }()
	go func() { done <- f.srv.ServeTCP(ln) }()
	// Let at least one answer through so the listeners are up.
	f.udp = pc.LocalAddr().String()
	f.exchange(t, "udp", query(zoneTest, dns.TypeSOA, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, hdldns.ErrServerClosed) {
				t.Errorf("Serve = %v, want ErrServerClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return after Shutdown")
		}
	}
	pc2, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.ServeUDP(pc2); !errors.Is(err, hdldns.ErrServerClosed) {
		t.Errorf("ServeUDP after Shutdown = %v, want ErrServerClosed", err)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*hdldns.Config)
	}{
		{"no cache", func(c *hdldns.Config) { c.Cache = nil }},
		{"no namer", func(c *hdldns.Config) { c.Namer = nil }},
		{"no zones", func(c *hdldns.Config) { c.Zones = nil }},
		{"root zone", func(c *hdldns.Config) { c.Zones = []hdldns.Zone{{Name: ".", Prefix: prefTest}} }},
		{"zone with a space", func(c *hdldns.Config) { c.Zones = []hdldns.Zone{{Name: "a b.org", Prefix: prefTest}} }},
		{"zone twice", func(c *hdldns.Config) {
			c.Zones = []hdldns.Zone{{Name: "a.org", Prefix: prefTest}, {Name: "A.org.", Prefix: prefProd}}
		}},
		{"prefix not served", func(c *hdldns.Config) { c.Zones = []hdldns.Zone{{Name: "a.org", Prefix: "10.1000"}} }},
		{"empty prefix", func(c *hdldns.Config) { c.Zones = []hdldns.Zone{{Name: "a.org"}} }},
		{"UDP size below 512", func(c *hdldns.Config) { c.UDPSize = 100 }},
		{"bad NS", func(c *hdldns.Config) { c.NS = []string{"a..b"} }},
		{"negative rate", func(c *hdldns.Config) { c.RRLRate = -1 }},
		{"IPv4 prefix too long", func(c *hdldns.Config) { c.RRLRate = 1; c.RRLIPv4Bits = 33 }},
	}
	f := newOffline(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := hdldns.Config{Cache: f.cache, Namer: f.namer, Zones: []hdldns.Zone{{Name: "hdl.example.org", Prefix: prefTest}}}
			tt.mutate(&cfg)
			_, err := hdldns.New(cfg)
			var ce *hdldns.ConfigError
			if !errors.Is(err, hdldns.ErrBadConfig) || !errors.As(err, &ce) {
				t.Fatalf("New = %v, want a *ConfigError", err)
			}
		})
	}
}

func TestWriteMetrics(t *testing.T) {
	f := newFixture(t, func(c *hdldns.Config) { c.RRLRate = 1000 })
	loadAnswerData(t, f)
	f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0))
	f.exchange(t, "tcp", query("NOSUCHID0.K7Q.svc."+zoneTest, dns.TypeTXT, 0))
	f.exchange(t, "udp", query("www.example.com.", dns.TypeA, 0))
	var b strings.Builder
	if err := f.srv.WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"pidnode_dns_queries_total 3\n",
		`pidnode_dns_responses_total{result="answer"} 1` + "\n",
		`pidnode_dns_responses_total{result="nxdomain"} 1` + "\n",
		`pidnode_dns_responses_total{result="refused"} 1` + "\n",
		"# TYPE pidnode_dns_truncated_total counter\n",
		"pidnode_dns_rrl_sources 1\n",
		"pidnode_dns_tcp_refused_total 0\n",
		"# TYPE pidnode_dns_tcp_connections gauge\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "pidnode_dns_") {
			t.Errorf("metric line %q not named pidnode_dns_*", line)
		}
	}
}
