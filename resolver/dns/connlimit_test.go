package hdldns_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	hdldns "pidnode/resolver/dns"
)

// TestTCPIdleFlood holds idle TCP connections from one loopback source, more
// than its share, and checks that (a) the ones beyond MaxTCPConnsPerSource are
// closed at once (well before the read timeout, which is long here so that
// only the limit can close them), and (b) queries over TCP from another
// source (127.0.0.2: the whole of 127/8 is loopback on Linux) all succeed
// while the flood is held.
func TestTCPIdleFlood(t *testing.T) {
	const (
		perSource = 8
		flood     = perSource + 24
		read      = time.Minute
	)
	f := newFixture(t, func(c *hdldns.Config) {
		c.MaxTCPConns, c.MaxTCPConnsPerSource = 32, perSource
		c.ReadTimeout = read
	})
	loadAnswerData(t, f)
	closed := make(chan bool, flood)
	for range flood {
		c := dialFrom(t, "127.0.0.1", f.tcp)
		go func() {
			c.SetReadDeadline(time.Now().Add(read / 4))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			closed <- !(errors.As(err, &ne) && ne.Timeout())
		}()
	}
	for range flood - perSource {
		if !<-closed {
			t.Fatal("a connection over the per-source limit was left open until its read deadline")
		}
	}
	if st := f.srv.Stats(); st.TCPRefused != flood-perSource || st.TCPConns != perSource {
		t.Fatalf("Stats = %+v, want %d refused, %d held", st, flood-perSource, perSource)
	}
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second,
		Dialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}}
	const tries = 40
	for i := range tries {
		r, _, err := c.Exchange(query(nameRef, dns.TypeTXT, 0), f.tcp)
		if err != nil || len(r.Answer) != 1 {
			t.Fatalf("query %d of %d from 127.0.0.2 during the flood: %v %v", i+1, tries, err, r)
		}
	}
	select {
	case <-closed:
		t.Error("a connection within the per-source limit was closed before its read timeout")
	default:
	}
}

func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", local, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
