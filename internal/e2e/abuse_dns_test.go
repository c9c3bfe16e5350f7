package e2e

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Response-rate limiting as `pidnode serve` configures it by default
// (--dns-rrl-rate, --dns-rrl-burst).
const (
	defaultRRLRate  = 50
	defaultRRLBurst = 100
)

// TestDNSRRLOnByDefault floods the DNS listener over UDP from one source with
// ANY and TXT queries, as an amplification attack with a spoofed source would,
// against a node started without any RRL flag: beyond the burst and the rate
// (counted over the flood's own duration, whatever the machine's speed),
// responses are slipped (empty, TC=1) or dropped, not answered in full.
func TestDNSRRLOnByDefault(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"))
	c, err := net.Dial("udp", n.addr["dns"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const sent = 400
	start := time.Now()
	for i := range sent {
		q := new(dns.Msg)
		qt := dns.TypeANY
		if i%2 == 1 {
			qt = dns.TypeTXT
		}
		q.SetQuestion("pid.localhost.", qt)
		q.SetEdns0(4096, false)
		q.Id = uint16(i + 1)
		b, err := q.Pack()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var full, slipped int
	last := start
	buf := make([]byte, 65536)
	for {
		// The node has every query before the last write returns; a second of
		// silence means it has sent all it will.
		c.SetReadDeadline(time.Now().Add(time.Second))
		k, err := c.Read(buf)
		if err != nil {
			break
		}
		last = time.Now()
		m := new(dns.Msg)
		if err := m.Unpack(buf[:k]); err != nil {
			t.Fatalf("unpack reply: %v", err)
		}
		if m.Truncated && len(m.Answer) == 0 && len(m.Ns) == 0 {
			slipped++
		} else {
			full++
		}
	}
	elapsed := last.Sub(start)
	allowed := defaultRRLBurst + int(elapsed.Seconds()*defaultRRLRate) + 1
	t.Logf("%d queries in %v: %d answered in full, %d slipped, %d dropped (allowed %d)", sent, elapsed, full, slipped, sent-full-slipped, allowed)
	if allowed >= sent {
		t.Skipf("the flood took %v: too slow to exceed the default rate", elapsed)
	}
	if full > allowed {
		t.Errorf("%d of %d responses answered in full within %v, want at most %d (burst %d + %d/s)", full, sent, elapsed, allowed, defaultRRLBurst, defaultRRLRate)
	}
	if slipped == 0 || full+slipped == sent {
		t.Errorf("%d slipped, %d dropped: want some of each beyond the limit", slipped, sent-full-slipped)
	}
}
