package hdl_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// dialFrom opens a TCP connection to addr from the loopback address local
// (the whole of 127/8 is loopback on Linux, so each is another source).
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

// TestIdleFloodDoesNotLockOthersOut holds idle TCP connections from several
// loopback sources, far more than the listener's MaxConns together, and
// checks that (a) the ones beyond each source's share are closed at once
// (well before the header timeout, which is long here so that only the
// limits can close them), and (b) another source's resolutions all succeed
// while the flood is held.
func TestIdleFloodDoesNotLockOthersOut(t *testing.T) {
	const (
		maxConns  = 32
		perSource = 8
		flood     = perSource + 8 // per flooding source
		header    = time.Minute
	)
	n := startNodeWith(t, func(c *hdl.Config) {
		c.MaxConns, c.MaxConnsPerSource = maxConns, perSource
		c.HeaderTimeout, c.ReadTimeout = header, header
	}, records()...)
	// Five heavy sources want 80 connections of 32. With the defaults
	// (high-water 24, heavy at 2), three get 8 each and the last two 2 each.
	sources := []string{"127.0.0.1", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"}
	var conns []net.Conn
	for _, src := range sources {
		for range flood {
			conns = append(conns, dialFrom(t, src, n.addr))
		}
	}
	const wantHeld = 3*perSource + 2*2
	// (a) Exactly the refused ones are closed, each long before HeaderTimeout.
	closed := make(chan bool, len(conns))
	for _, c := range conns {
		go func() {
			c.SetReadDeadline(time.Now().Add(header / 4))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			closed <- !(errors.As(err, &ne) && ne.Timeout())
		}()
	}
	deadline := time.Now().Add(header / 4)
	for n.srv.Stats().ConnsRefused < uint64(len(conns)-wantHeld) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := n.srv.Stats(); st.ConnsRefused != uint64(len(conns)-wantHeld) || st.Conns != wantHeld {
		t.Fatalf("Stats = %+v, want %d refused and %d held", st, len(conns)-wantHeld, wantHeld)
	}
	for range len(conns) - wantHeld {
		if !<-closed {
			t.Fatal("a connection over the limits was left open until its read deadline")
		}
	}
	// (b) Another source resolves, every time, while the flood is held. Each
	// resolution waits until the server has let go of the previous one's
	// connection: the client may read a reply and dial again before the
	// server's goroutine releases the slot, and a source still holding
	// Heavy connections above the high-water mark is refused by design.
	c := n.client(false)
	c.LocalIP = net.ParseIP("127.0.0.2")
	const tries = 40
	for i := range tries {
		for wait := time.Now().Add(5 * time.Second); n.srv.Stats().Conns > wantHeld && time.Now().Before(wait); {
			time.Sleep(time.Millisecond)
		}
		rep, err := c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, 0)
		if err != nil || rep.Header.ResponseCode != hsmsg.RCSuccess {
			t.Fatalf("resolution %d of %d from 127.0.0.2 during the flood: %v (%+v)", i+1, tries, err, rep)
		}
	}
	if st := n.srv.Stats(); st.Conns < wantHeld {
		t.Errorf("the flood was not held throughout: %d connections left", st.Conns)
	}
	// The held flood connections are still open: none of them read anything.
	select {
	case v := <-closed:
		t.Errorf("a held connection was closed (closed=%v) before its header timeout", v)
	default:
	}
}

// TestHeaderTimeout: a connection that sends nothing is closed after
// HeaderTimeout, not the (longer) ReadTimeout.
func TestHeaderTimeout(t *testing.T) {
	const header, read = 200 * time.Millisecond, time.Minute
	n := startNodeWith(t, func(c *hdl.Config) { c.HeaderTimeout, c.ReadTimeout = header, read })
	c := dialFrom(t, "127.0.0.1", n.addr)
	c.SetReadDeadline(time.Now().Add(read / 2))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("an empty connection got an answer")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("an idle connection was held past half its read timeout (header timeout %v)", header)
	}
}
