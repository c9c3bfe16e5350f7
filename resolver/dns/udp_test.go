package hdldns_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
	hdldns "pidnode/resolver/dns"
)

// plainPacketConn hides the *net.UDPConn, so ServeUDP serves it through
// miekg/dns's own server: the reference the UDP loop is held to.
type plainPacketConn struct{ net.PacketConn }

// serveUDP starts srv on pc and stops it when the test ends.
func serveUDP(t *testing.T, srv *hdldns.Server, pc net.PacketConn) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- srv.ServeUDP(pc) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, hdldns.ErrServerClosed) {
			t.Errorf("ServeUDP returned %v, want ErrServerClosed", err)
		}
	})
}

// exchangeRaw sends b to addr from a fresh socket and returns the reply, or
// nil if none came within wait.
func exchangeRaw(t *testing.T, addr string, b []byte, wait time.Duration) (reply []byte, from net.Addr) {
	t.Helper()
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: to.IP})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(b, to); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 65536)
	n, from, err := c.ReadFrom(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil
		}
		t.Fatal(err)
	}
	return buf[:n], from
}

// udpCases are datagrams for TestUDPLoopMatchesMiekg: the answers of every
// kind, and the requests miekg's server rejects or ignores before any handler.
func udpCases(t *testing.T) (names []string, packets [][]byte) {
	add := func(name string, b []byte) {
		names = append(names, name)
		packets = append(packets, b)
	}
	pack := func(m *dns.Msg) []byte {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	qs := []struct {
		name  string
		qtype uint16
		edns  uint16
	}{
		{nameRef, dns.TypeTXT, 0},
		{nameRef, dns.TypeURI, 1232},
		{"4xj2-9mpa-c.k7q.SVC.hdl.example.org.", dns.TypeTXT, 4096},
		{nameDNS, dns.TypeA, 1232},
		{nameDNS, dns.TypeTXT, 512},
		{"ALIAS0001.DNS.svc." + zoneTest, dns.TypeAAAA, 0},
		{nameObs, dns.TypeTXT, 0},
		{"hx--a-20b-2fc.legacy." + zoneTest, dns.TypeTXT, 0},
		{`v1\.2.doc.` + zoneTest, dns.TypeURI, 0},
		{"NOSUCHID0.K7Q.svc." + zoneTest, dns.TypeTXT, 1232},
		{zoneTest, dns.TypeSOA, 0},
		{zoneTest, dns.TypeNS, 1232},
		{zoneTest, dns.TypeAXFR, 0},
		{nameLong, dns.TypeTXT, 0},
		{nameLong, dns.TypeTXT, 1232},
		{nameMany, dns.TypeTXT, 1232},
		{"www.example.com.", dns.TypeA, 0},
		{`we\@ird\032\255.` + zoneTest, dns.TypeTXT, 0},
	}
	for i, q := range qs {
		m := query(q.name, q.qtype, q.edns)
		m.Id = uint16(0x2000 + i)
		add(q.name+" "+dns.TypeToString[q.qtype], pack(m))
	}
	m := query(nameRef, dns.TypeTXT, 1232)
	m.IsEdns0().SetVersion(1)
	add("EDNS version 1", pack(m))
	m = query(nameRef, dns.TypeTXT, 1232)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
	add("EDNS cookie", pack(m))
	m = query(nameRef, dns.TypeTXT, 1232)
	m.SetEdns0(512, true) // a second OPT
	add("two OPTs", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Extra = append(m.Extra, &dns.A{Hdr: dns.RR_Header{Name: nameRef, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(192, 0, 2, 1)})
	m.Compress = true
	add("compressed additional", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Opcode = dns.OpcodeNotify
	add("NOTIFY", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Opcode = dns.OpcodeUpdate
	add("UPDATE", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Question = append(m.Question, m.Question[0])
	add("two questions", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Question = nil
	add("no question", pack(m))
	m = query(nameRef, dns.TypeTXT, 0)
	m.Response = true
	add("a response", pack(m))
	b := pack(query(nameRef, dns.TypeTXT, 1232))
	add("cut in the question", b[:20])
	add("cut in the OPT", b[:len(b)-3])
	add("short of a header", b[:11])
	return names, packets
}

// TestUDPLoopMatchesMiekg: ServeUDP on a *net.UDPConn (its own loop, udp.go)
// sends exactly what miekg/dns's server sends for the same datagram, or
// nothing when that sends nothing, on a socket bound to one address and on
// one bound to the wildcard address (which answers from the address asked).
func TestUDPLoopMatchesMiekg(t *testing.T) {
	fx := newOffline(t, nil)
	loadAnswerData(t, fx)
	loadBigData(t, fx)
	listen := func(addr string) net.PacketConn {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return pc
	}
	ref := listen("127.0.0.1:0")
	serveUDP(t, fx.srv, plainPacketConn{ref})
	loop := listen("127.0.0.1:0")
	serveUDP(t, fx.srv, loop)
	targets := []string{loop.LocalAddr().String()}
	if pc, err := net.ListenPacket("udp4", "0.0.0.0:0"); err == nil {
		serveUDP(t, fx.srv, pc)
		targets = append(targets, net.JoinHostPort("127.0.0.1", portOf(pc.LocalAddr())))
	}
	if pc, err := net.ListenPacket("udp6", "[::1]:0"); err == nil { // an AF_INET6 socket
		serveUDP(t, fx.srv, pc)
		targets = append(targets, pc.LocalAddr().String())
	}
	names, packets := udpCases(t)
	for i, b := range packets {
		// A datagram that is answered is waited for as long as a loaded
		// machine may need (the wait ends with the reply); for one that must
		// not be, a short wait shows silence: a reply later than that would
		// escape the check, but no slowness can fail it.
		silent := names[i] == "a response" || names[i] == "short of a header"
		wait := 10 * time.Second
		if silent {
			wait = 300 * time.Millisecond
		}
		want, _ := exchangeRaw(t, ref.LocalAddr().String(), b, wait)
		if silent != (want == nil) {
			t.Fatalf("%s: miekg's server replied %x", names[i], want)
		}
		for _, addr := range targets {
			got, from := exchangeRaw(t, addr, b, wait)
			if !bytes.Equal(got, want) {
				t.Errorf("%s to %s:\n got % x\nwant % x", names[i], addr, got, want)
			}
			if from != nil && from.String() != addr {
				t.Errorf("%s to %s: reply from %s", names[i], addr, from)
			}
		}
	}
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// TestUDPLoopAllocs: a cached TXT answer over the UDP loop allocates nothing
// at all, socket reads and writes included (the client side below does not
// allocate either).
func TestUDPLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	fx := newOffline(t, nil)
	loadAnswerData(t, fx)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveUDP(t, fx.srv, pc)
	c, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, edns := range []uint16{0, 1232} {
		q, err := query(nameRef, dns.TypeTXT, edns).Pack()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		ask := func() {
			if _, err := c.Write(q); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		for range 10 {
			ask() // fill the cache, the pools and the workers
		}
		if n := testing.AllocsPerRun(500, ask); n != 0 {
			t.Errorf("EDNS %d: %.2f allocations per query, want 0", edns, n)
		}
	}
}

// TestUDPLoopStopsOnClose: a socket closed under the loop (not by Shutdown)
// ends ServeUDP with an error, as miekg's server does.
func TestUDPLoopStopsOnClose(t *testing.T) {
	fx := newOffline(t, nil)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fx.srv.ServeUDP(pc) }()
	time.Sleep(50 * time.Millisecond)
	pc.Close()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, hdldns.ErrServerClosed) {
			t.Errorf("ServeUDP = %v, want the read error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeUDP did not return after its socket closed")
	}
}

// blockingSource is a cache Source whose loads wait until release is closed.
type blockingSource struct {
	loading chan struct{} // receives once per load
	release chan struct{}
}

func (s *blockingSource) Load(key string) (handlev.Record, bool, error) {
	s.loading <- struct{}{}
	<-s.release
	v := val(handlev.TypeURL, urlRef, 60)
	v.Perm = handlev.PermDefault // publicly readable, as f.put stores values
	return handlev.Record{Handle: "21.T12345/svc/K7Q/4XJ29MPAC", Values: []handlev.Value{v}}, true, nil
}

// TestUDPLoopShutdownAnswersInFlight: Shutdown stops reading but lets a
// worker finish the query it holds (here one waiting on a store read), as
// miekg's server does, and returns once it has.
func TestUDPLoopShutdownAnswersInFlight(t *testing.T) {
	src := &blockingSource{loading: make(chan struct{}, 4), release: make(chan struct{})}
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: prefProd, TestPrefix: prefTest})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(cache.Config{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := hdldns.New(hdldns.Config{Cache: c, Namer: namer, Zones: []hdldns.Zone{{Name: zoneTest, Prefix: prefTest}}})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeUDP(pc) }()
	q, err := query(nameRef, dns.TypeTXT, 0).Pack()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Write(q); err != nil {
		t.Fatal(err)
	}
	reply := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 4096)
		cl.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _ := cl.Read(buf)
		reply <- buf[:n]
	}()
	select {
	case <-src.loading: // a worker holds the query
	case <-time.After(5 * time.Second):
		t.Fatal("the query never reached the store")
	}
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a query in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(src.release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	r := new(dns.Msg)
	if b := <-reply; r.Unpack(b) != nil || len(r.Answer) != 1 {
		t.Fatalf("in-flight query got %v", r)
	}
	if err := <-served; !errors.Is(err, hdldns.ErrServerClosed) {
		t.Errorf("ServeUDP = %v, want ErrServerClosed", err)
	}
}
