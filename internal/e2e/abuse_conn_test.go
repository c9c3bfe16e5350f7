package e2e

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/resolver/hdl"
)

// The first read deadline of a connection that has sent nothing, on both TCP
// listeners, as `pidnode serve` configures them by default (the native
// protocol's HeaderTimeout, DNS's ReadTimeout).
const defaultHeaderTimeout = 2 * time.Second

// TestIdleConnFloodFromOneSource holds twice --*-max-conns-per-source idle
// connections from 127.0.0.1 on the native protocol's and DNS's TCP
// listeners: the ones beyond the limit are closed at once (before the first
// read deadline closes the others), and another source (127.0.0.2: the whole
// of 127/8 is loopback on Linux) resolves over both, every time, meanwhile.
func TestIdleConnFloodFromOneSource(t *testing.T) {
	t.Parallel()
	const perSource = 16
	n := startNode(t, filepath.Join(t.TempDir(), "data"), "--demo",
		"--hdl-max-conns-per-source", "16", "--dns-max-conns-per-source", "16")
	h := n.Handles[0]
	name := strings.ReplaceAll(h[len("21.12345/svc/DMO/"):], "-", "") + ".DMO.svc.pid.localhost."

	var wg sync.WaitGroup
	for _, l := range []string{"hdl", "dns"} {
		closedEarly := make(chan bool, 2*perSource)
		for range 2 * perSource {
			c, err := net.DialTimeout("tcp", n.addr[l], 5*time.Second)
			if err != nil {
				t.Fatalf("%s: dial: %v", l, err)
			}
			t.Cleanup(func() { c.Close() })
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(defaultHeaderTimeout / 2))
				_, err := c.Read(make([]byte, 1))
				var ne net.Error
				closedEarly <- !(errors.As(err, &ne) && ne.Timeout())
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			early := 0
			for range 2 * perSource {
				if <-closedEarly {
					early++
				}
			}
			if early != perSource {
				t.Errorf("%s: %d of %d idle connections from one source closed before the header timeout, want the %d beyond the limit", l, early, 2*perSource, perSource)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other := net.ParseIP("127.0.0.2")
	nc := &hdl.Client{Addr: n.addr["hdl"], Timeout: 5 * time.Second, LocalIP: other}
	dc := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, Dialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: other}}}
	const tries = 20
	for i := range tries {
		resp, err := nc.Resolve(ctx, h, nil, nil, 0)
		if err != nil || resp.Header.ResponseCode != 1 {
			t.Fatalf("native resolution %d of %d from 127.0.0.2 during the flood: %v", i+1, tries, err)
		}
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeTXT)
		r, _, err := dc.Exchange(m, n.addr["dns"])
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
			t.Fatalf("DNS-over-TCP query %d of %d from 127.0.0.2 during the flood: %v %v", i+1, tries, err, r)
		}
	}
	wg.Wait()
}

// TestDNSTCPPipelined200 sends 200 queries back to back on one DNS-over-TCP
// connection: every one is answered (miekg/dns's default closed the
// connection after 128 and dropped the rest).
func TestDNSTCPPipelined200(t *testing.T) {
	t.Parallel()
	n := startNode(t, filepath.Join(t.TempDir(), "data"))
	c, err := net.DialTimeout("tcp", n.addr["dns"], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	const k = 200
	var out []byte
	for i := range k {
		m := new(dns.Msg)
		m.SetQuestion("pid.localhost.", dns.TypeSOA)
		m.Id = uint16(i + 1)
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
		out = append(out, b...)
	}
	go c.Write(out) //nolint:errcheck // the reads report a broken connection
	r := bufio.NewReader(c)
	seen := map[uint16]bool{}
	for len(seen) < k {
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		b := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(b); err != nil || m.Rcode != dns.RcodeSuccess || seen[m.Id] {
			t.Fatalf("answer %d: %v rcode %d id %d (repeated: %v)", len(seen)+1, err, m.Rcode, m.Id, seen[m.Id])
		}
		seen[m.Id] = true
	}
}
