package e2e

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/resolver/hdl"
)

// TestHostileNativeAndDNS throws garbage at the native Handle protocol and DNS
// listeners (TCP and UDP): every hostile connection is closed promptly, the
// node does not panic, and afterwards it still answers a real query on each.
func TestHostileNativeAndDNS(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo")
	h := n.Handles[0]
	rnd := rand.New(rand.NewPCG(1, 2))
	garbage := func(k int) []byte {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	envelope := func(msgLen uint32) []byte { // a 2.10 envelope announcing msgLen bytes
		b := make([]byte, 20)
		b[0], b[1] = 2, 10
		binary.BigEndian.PutUint32(b[16:], msgLen)
		return b
	}
	dnsLen := func(l uint16) []byte { return binary.BigEndian.AppendUint16(nil, l) }

	tcpCases := []struct {
		name, listener string
		data           []byte
	}{
		{"hdl: random bytes", "hdl", garbage(4096)},
		{"hdl: envelope announcing 2 GiB", "hdl", envelope(1 << 31)},
		{"hdl: envelope announcing 64 MiB then nothing", "hdl", envelope(64 << 20)},
		{"hdl: truncated envelope", "hdl", envelope(100)[:7]},
		{"hdl: envelope with a garbage message", "hdl", append(envelope(200), garbage(200)...)},
		{"dns: length 65535 then nothing", "dns", dnsLen(65535)},
		{"dns: random message", "dns", append(dnsLen(512), garbage(512)...)},
		{"dns: zero length", "dns", dnsLen(0)},
	}
	// All TCP cases at once (plain goroutines, not parallel subtests, which
	// -parallel would serialise on a 2-core machine): each waits for the
	// server's idle timeout.
	var wg sync.WaitGroup
	for _, tc := range tcpCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", n.addr[tc.listener], 5*time.Second)
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			defer c.Close()
			c.Write(tc.data)
			// The server must either answer an error or give up on us; it
			// must not keep the connection forever. Read until close.
			c.SetReadDeadline(time.Now().Add(45 * time.Second))
			start := time.Now()
			buf := make([]byte, 4096)
			total := 0
			for {
				k, err := c.Read(buf)
				total += k
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						t.Errorf("%s: connection still open after %v (read %d bytes)", tc.name, time.Since(start), total)
					}
					break
				}
			}
			t.Logf("%s: closed by the server after %v, %d bytes of reply", tc.name, time.Since(start).Round(time.Millisecond), total)
		}()
	}
	wg.Wait()
	// UDP garbage, then real queries must still work.
	for _, l := range []string{"hdl", "dns"} {
		c, err := net.Dial("udp", n.addr[l])
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			c.Write(garbage(1 + i*7%1400))
		}
		c.Write(envelope(1 << 31))
		c.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, udp := range []bool{false, true} {
		cl := &hdl.Client{Addr: n.addr["hdl"], UDP: udp, Timeout: 5 * time.Second}
		resp, err := cl.Resolve(ctx, h, nil, nil, 0)
		if err != nil {
			t.Fatalf("native resolve (udp=%v) after the garbage: %v", udp, err)
		}
		if resp.Header.ResponseCode != 1 || len(resp.Values) == 0 {
			t.Errorf("native resolve (udp=%v): RC %d, %d values", udp, resp.Header.ResponseCode, len(resp.Values))
		}
	}
	id := strings.ReplaceAll(h[len("21.12345/svc/DMO/"):], "-", "")
	name := id + ".DMO.svc.pid.localhost."
	for _, netw := range []string{"udp", "tcp"} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeTXT)
		cl := &dns.Client{Net: netw, Timeout: 5 * time.Second}
		r, _, err := cl.Exchange(m, n.addr["dns"])
		if err != nil {
			t.Fatalf("DNS %s query after the garbage: %v", netw, err)
		}
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
			t.Errorf("DNS %s TXT %s: rcode %s, %d answers", netw, name, dns.RcodeToString[r.Rcode], len(r.Answer))
		}
	}
}
