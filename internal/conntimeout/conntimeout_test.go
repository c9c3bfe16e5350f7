package conntimeout

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// serve wraps a loopback listener with cfg and hands each accepted connection
// to handle in its own goroutine.
func serve(t *testing.T, cfg Config, handle func(net.Conn)) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, cfg)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return l, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// result is what a server-side call ended with, and when.
type result struct {
	err   error
	after time.Duration
}

// isTimeout: the error a deadline gives, as servers test for it.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// wait returns the server's result, failing the test if none comes: a limit
// that never fires would otherwise hang it.
func wait(t *testing.T, got <-chan result) result {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the server's call is still blocked 30 s later: no limit ended it")
		return result{}
	}
}

// slack is how late a limit may fire on a loaded test machine: two ticks by
// design, plus scheduling.
const slack = 3 * time.Second

// TestReadLimitFromAccept: a client that sends its request one byte at a
// time, never finishing, is cut off at Read after the accept, although every
// single read returns quickly; never before.
func TestReadLimitFromAccept(t *testing.T) {
	const read = 300 * time.Millisecond
	got := make(chan result, 1)
	_, addr := serve(t, Config{Read: read, Idle: time.Hour, Write: time.Hour}, func(c net.Conn) {
		start := time.Now()
		buf := make([]byte, 64)
		for {
			if _, err := c.Read(buf); err != nil {
				got <- result{err, time.Since(start)}
				return
			}
		}
	})
	start := time.Now()
	c := dial(t, addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write([]byte("G")); err != nil {
					return
				}
			}
		}
	}()
	r := wait(t, got)
	if !isTimeout(r.err) {
		t.Fatalf("read ended with %v, want a timeout", r.err)
	}
	if el := time.Since(start); el < read {
		t.Errorf("cut off %v after the dial, before Read %v", el, read)
	}
	if r.after > read+slack {
		t.Errorf("cut off %v after the accept, Read is %v", r.after, read)
	}
}

// wantCut checks that a server call blocked in a phase whose limit is limit
// ended with a timeout, after at least limit (measured from before the phase
// began) and not much later.
func wantCut(t *testing.T, what string, r result, limit time.Duration) {
	t.Helper()
	if !isTimeout(r.err) {
		t.Fatalf("%s ended with %v, want a timeout", what, r.err)
	}
	if r.after < limit || r.after > limit+slack {
		t.Errorf("%s cut off after %v, its limit is %v", what, r.after, limit)
	}
}

// exchange sends "q\n" and reads the one-line answer.
func exchange(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("q\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "a\n" {
		t.Fatalf("answer %q %v", line, err)
	}
}

// lineServer answers each line "q" with "a" until a read fails, then reports
// that read's error and how long the connection was idle before it.
func lineServer(got chan<- result) func(net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		var answered time.Time
		for {
			if _, err := br.ReadString('\n'); err != nil {
				got <- result{err, time.Since(answered)}
				return
			}
			if _, err := c.Write([]byte("a\n")); err != nil {
				got <- result{err, 0}
				return
			}
			answered = time.Now()
		}
	}
}

// TestIdleLimit: after an answer, a connection with nothing more to say is
// cut off at Idle (Read is long), and a connection idle for less than Idle
// carries another request though Read is shorter than its idle time: the
// idle wait is not the request's read.
func TestIdleLimit(t *testing.T) {
	const idle = 300 * time.Millisecond
	got := make(chan result, 2)
	_, addr := serve(t, Config{Read: time.Hour, Idle: idle, Write: time.Hour}, lineServer(got))
	c := dial(t, addr)
	br := bufio.NewReader(c)
	exchange(t, c, br)
	wantCut(t, "idle read", wait(t, got), idle)

	const read = 100 * time.Millisecond
	_, addr = serve(t, Config{Read: read, Idle: time.Hour, Write: time.Hour}, lineServer(got))
	c = dial(t, addr)
	br = bufio.NewReader(c)
	exchange(t, c, br)
	time.Sleep(5 * read)
	exchange(t, c, br)
	exchange(t, c, br)
}

// TestWriteLimit: a client that stops reading leaves the server's write
// blocked on a full socket; the write is cut off at Write.
func TestWriteLimit(t *testing.T) {
	const write = 300 * time.Millisecond
	got := make(chan result, 1)
	_, addr := serve(t, Config{Read: time.Hour, Idle: time.Hour, Write: write}, func(c net.Conn) {
		buf := make([]byte, 1<<20)
		start := time.Now()
		for {
			if _, err := c.Write(buf); err != nil {
				got <- result{err, time.Since(start)}
				return
			}
		}
	})
	dial(t, addr) // never reads
	wantCut(t, "write", wait(t, got), write)
}

// TestNoLimit: with no limits a connection waits as long as its client, and
// nothing sweeps.
func TestNoLimit(t *testing.T) {
	got := make(chan result, 1)
	l, addr := serve(t, Config{Tick: MinTick}, lineServer(got))
	c := dial(t, addr)
	br := bufio.NewReader(c)
	time.Sleep(100 * time.Millisecond)
	exchange(t, c, br)
	if e := l.epoch.Load(); e != 0 {
		t.Errorf("%d sweeps with no limit set", e)
	}
	select {
	case r := <-got:
		t.Fatalf("connection ended: %v", r.err)
	default:
	}
}

// TestDeadlinesOwnedByListener: a caller may clear a deadline (which it
// never has) but not set one.
func TestDeadlinesOwnedByListener(t *testing.T) {
	conns := make(chan net.Conn, 1)
	_, addr := serve(t, Config{Read: time.Hour}, func(c net.Conn) { conns <- c })
	dial(t, addr)
	c := <-conns
	defer c.Close()
	for name, set := range map[string]func(time.Time) error{"SetDeadline": c.SetDeadline, "SetReadDeadline": c.SetReadDeadline, "SetWriteDeadline": c.SetWriteDeadline} {
		if err := set(time.Time{}); err != nil {
			t.Errorf("%s(zero) = %v, want nil", name, err)
		}
		if err := set(time.Now().Add(time.Second)); !errors.Is(err, ErrDeadlines) {
			t.Errorf("%s(t) = %v, want ErrDeadlines", name, err)
		}
	}
}

// TestCloseForgets: closed connections leave the sweeper's table, and the
// sweeper stops once the listener and its last connection are closed.
func TestCloseForgets(t *testing.T) {
	conns := make(chan net.Conn, 8)
	l, addr := serve(t, Config{Read: time.Hour, Tick: MinTick}, func(c net.Conn) { conns <- c })
	var server []net.Conn
	for range 5 {
		dial(t, addr)
		server = append(server, <-conns)
	}
	held := func() []*conn {
		l.mu.Lock()
		defer l.mu.Unlock()
		return append([]*conn(nil), l.conns...)
	}
	if n := len(held()); n != 5 {
		t.Fatalf("%d connections in the table, want 5", n)
	}
	for _, c := range server[:4] {
		c.Close()
		c.Close() // twice: forgotten once
	}
	// The last one accepted, moved into the first closed one's slot, is
	// the one left, at the index it records.
	if h := held(); len(h) != 1 || h[0] != server[4] || h[0].idx != 0 {
		t.Fatalf("table after 4 closes: %v, want only the fifth connection at index 0", h)
	}
	l.Close()
	server[4].Close()
	// The sweeper returns on its next tick; a test cannot see a goroutine
	// end, but it can see the epoch stop moving.
	deadline := time.Now().Add(10 * time.Second)
	for {
		e := l.epoch.Load()
		time.Sleep(20 * MinTick)
		if l.epoch.Load() == e {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper still runs after Close and the last connection closed")
		}
	}
}

// TestTLS: a TLS listener's connections still answer for their handshake and
// state (servers look for these to tell TLS), and the limits apply beneath
// the TLS layer.
func TestTLS(t *testing.T) {
	cert := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const idle = 300 * time.Millisecond
	l := Wrap(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), Config{Read: time.Hour, Idle: idle, Write: time.Hour})
	defer l.Close()
	got := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- result{err, 0}
			return
		}
		tc, ok := c.(interface {
			Handshake() error
			ConnectionState() tls.ConnectionState
		})
		if !ok {
			got <- result{errors.New("accepted connection does not show its TLS state"), 0}
			return
		}
		if err := tc.Handshake(); err != nil {
			got <- result{err, 0}
			return
		}
		if !tc.ConnectionState().HandshakeComplete {
			got <- result{errors.New("handshake not complete"), 0}
			return
		}
		lineServer(got)(c)
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test's own certificate
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	exchange(t, c, br)
	wantCut(t, "idle TLS read", wait(t, got), idle)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := br.ReadByte(); err != io.EOF {
		t.Errorf("client read %q %v after the server's timeout, want EOF", b, err)
	}
}

// selfSigned is a certificate for 127.0.0.1 made for the test.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// socketConn is a stand-in socket whose reads and writes cost nothing, so
// that BenchmarkSweptRequest measures the bookkeeping alone.
type socketConn struct{ net.Conn }

func (socketConn) Read(p []byte) (int, error)  { return 1, nil }
func (socketConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkSweptRequest is what a keep-alive request costs a connection of
// this package: a read that ends the idle wait and a write, each one store
// and one swap of its state word.
//
//	go test ./internal/conntimeout -run '^$' -bench Request
func BenchmarkSweptRequest(b *testing.B) {
	l := Wrap(nil, Config{Read: time.Second})
	c := &conn{Conn: socketConn{}, l: l}
	buf := make([]byte, 1)
	for b.Loop() {
		c.Read(buf)
		c.Write(buf)
	}
}

// BenchmarkDeadlineRequest is what the same request costs with deadlines
// set per request as fasthttp's timeouts set them (idle, read, write; a
// clock reading each) on a real loopback socket.
func BenchmarkDeadlineRequest(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c) //nolint:errcheck // until the benchmark closes its end
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for b.Loop() {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	}
}

// TestHandshakeLimit: a client that connects to a TLS listener and sends
// nothing holds the server's Handshake (fasthttp calls it before any read)
// only for the Handshake limit, although Read is an hour.
func TestHandshakeLimit(t *testing.T) {
	cert := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const hs = 300 * time.Millisecond
	l := Wrap(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), Config{Read: time.Hour, Idle: time.Hour, Write: time.Hour, Handshake: hs})
	defer l.Close()
	got := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- result{err, 0}
			return
		}
		defer c.Close()
		start := time.Now()
		err = c.(interface{ Handshake() error }).Handshake()
		got <- result{err, time.Since(start)}
	}()
	start := time.Now()
	c := dial(t, ln.Addr().String())
	wantCut(t, "silent TLS handshake", wait(t, got), hs)
	if el := time.Since(start); el < hs {
		t.Errorf("handshake cut off %v after the dial, before its limit %v", el, hs)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("client read %v after the server's timeout, want EOF", err)
	}
}
