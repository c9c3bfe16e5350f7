package shed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pidnode/internal/connlimit"
)

func TestTemporary(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", err)}
	}
	tests := []struct {
		err  error
		want bool
	}{
		{op(syscall.EMFILE), true},
		{op(syscall.ENFILE), true},
		{op(syscall.ENOBUFS), true},
		{op(syscall.ECONNABORTED), true},
		{op(syscall.ENOMEM), true},
		{fmt.Errorf("wrapped: %w", op(syscall.EMFILE)), true},
		{op(os.ErrDeadlineExceeded), true},
		{&net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}, false},
		{op(syscall.EINVAL), false},
		{io.EOF, false},
		{nil, false},
	}
	for _, tc := range tests {
		if got := Temporary(tc.err); got != tc.want {
			t.Errorf("Temporary(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestBudget(t *testing.T) {
	b, err := NewBudget(BudgetConfig{Descriptors: 256})
	if err != nil {
		t.Fatal(err)
	}
	// 256 − 64 for files = 192 connections, 12 of them reserved.
	if b.Limit() != 192 || b.Reserve() != 12 || b.Cap(Public) != 180 || b.Cap(Admin) != 192 {
		t.Errorf("budget for 256 descriptors: limit %d reserve %d caps %d/%d", b.Limit(), b.Reserve(), b.Cap(Public), b.Cap(Admin))
	}
	for i := 0; i < 180; i++ {
		if !b.acquire(Public) {
			t.Fatalf("public slot %d refused", i)
		}
	}
	if b.acquire(Public) {
		t.Error("public slot beyond the reserve given")
	}
	for i := 0; i < 12; i++ {
		if !b.acquire(Admin) {
			t.Fatalf("admin slot %d of the reserve refused", i)
		}
	}
	if b.acquire(Admin) {
		t.Error("admin slot beyond the limit given")
	}
	b.release()
	if b.acquire(Public) || !b.acquire(Admin) {
		t.Error("after one release: want the slot for admin only")
	}
	for _, c := range []BudgetConfig{{}, {Descriptors: -1}, {Descriptors: 64}, {Descriptors: 100, Files: 90, Reserve: 10}, {Descriptors: 100, Reserve: -1}} {
		var ce *ConfigError
		if _, err := NewBudget(c); !errors.Is(err, ErrBadConfig) || !errors.As(err, &ce) {
			t.Errorf("NewBudget(%+v) = %v, want a *ConfigError wrapping ErrBadConfig", c, err)
		}
	}
}

// serve accepts on a Wrap of a loopback listener and sends every accepted
// connection to the returned channel.
func serve(t *testing.T, cfg Config) (*Listener, <-chan net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(inner, cfg)
	t.Cleanup(func() { l.Close() })
	ch := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(ch)
				return
			}
			t.Cleanup(func() { c.Close() })
			ch <- c
		}
	}()
	return l, ch
}

// dialFrom connects to l from local address src (127.0.0.0/8).
func dialFrom(t *testing.T, l net.Listener, src string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantClosed checks that the server closed c without serving it.
func wantClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("%s: read %v, want the connection closed by the server", what, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func accepted(t *testing.T, ch <-chan net.Conn, what string) net.Conn {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not accepted", what)
		return nil
	}
}

// TestBudgetReserve: with the public part of the budget used up, a public
// listener closes new connections at once while an admin listener still
// accepts; closing a public connection frees its slot.
func TestBudgetReserve(t *testing.T) {
	b, err := NewBudget(BudgetConfig{Descriptors: 4, Files: 1, Reserve: 1}) // 3 slots, 2 public
	if err != nil {
		t.Fatal(err)
	}
	pub, pubC := serve(t, Config{Name: "resolver", Budget: b})
	adm, admC := serve(t, Config{Name: "admin", Class: Admin, Budget: b})
	dialFrom(t, pub, "127.0.0.1")
	dialFrom(t, pub, "127.0.0.1")
	first := accepted(t, pubC, "public 1")
	accepted(t, pubC, "public 2")
	wantClosed(t, dialFrom(t, pub, "127.0.0.1"), "public connection beyond the budget")
	dialFrom(t, adm, "127.0.0.1")
	admin := accepted(t, admC, "admin in the reserve")
	wantClosed(t, dialFrom(t, adm, "127.0.0.1"), "admin connection beyond the limit")
	// The public part counts every connection held: with the admin one
	// open, freeing one public slot is not enough.
	first.Close()
	wantClosed(t, dialFrom(t, pub, "127.0.0.1"), "public connection while the admin one holds the reserve")
	admin.Close()
	dialFrom(t, pub, "127.0.0.1")
	accepted(t, pubC, "public after two closes")
	if s := pub.Stats(); s.Held != 2 || s.Refused[ReasonBudget] != 2 {
		t.Errorf("public stats %+v, want 2 held, 2 refused for the budget", s)
	}
	if s := adm.Stats(); s.Held != 0 || s.Refused[ReasonBudget] != 1 {
		t.Errorf("admin stats %+v, want 0 held, 1 refused for the budget", s)
	}
	if b.Held() != 2 {
		t.Errorf("budget holds %d, want 2", b.Held())
	}
}

// TestPerSource: beyond its per-source limit a source's connections are
// closed at accept while another source's are served, and the refused ones
// give their budget slot back.
func TestPerSource(t *testing.T) {
	b, _ := NewBudget(BudgetConfig{Descriptors: 1000})
	lim, _ := connlimit.New(connlimit.Config{Max: 100, PerSource: 2})
	l, ch := serve(t, Config{Name: "resolver", Budget: b, Limiter: lim})
	dialFrom(t, l, "127.0.0.1")
	dialFrom(t, l, "127.0.0.1")
	accepted(t, ch, "first")
	accepted(t, ch, "second")
	wantClosed(t, dialFrom(t, l, "127.0.0.1"), "third connection of one source")
	dialFrom(t, l, "127.0.0.2")
	accepted(t, ch, "another source")
	if s := l.Stats(); s.Held != 3 || s.Refused[ReasonPerSource] != 1 || b.Held() != 3 {
		t.Errorf("stats %+v, budget %d held; want 3 held, 1 refused per source", s, b.Held())
	}
}

// failing is a listener whose Accept fails with err n times before it
// accepts for real (a net.Listener of the standard library, not of pidnode).
type failing struct {
	net.Listener
	n      int
	err    error
	closed atomic.Bool
}

func (f *failing) Close() error {
	f.closed.Store(true)
	return f.Listener.Close()
}

func (f *failing) Accept() (net.Conn, error) {
	if f.closed.Load() {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}
	}
	if f.n > 0 {
		f.n--
		return nil, f.err
	}
	return f.Listener.Accept()
}

// TestRetry: temporary accept errors are retried after pauses of 5 ms
// doubling (never returned), and counted; a permanent one ends Accept.
func TestRetry(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	f := &failing{Listener: inner, n: 4, err: emfile}
	var log bytes.Buffer
	l := Wrap(f, Config{Name: "hdl", Logger: slog.New(slog.NewTextHandler(&log, nil)), LogEvery: time.Hour})
	c := dialFrom(t, l, "127.0.0.1")
	defer c.Close()
	start := time.Now()
	got, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after 4 EMFILE = %v, want the connection", err)
	}
	got.Close()
	if el := time.Since(start); el < (5+10+20+40)*time.Millisecond {
		t.Errorf("4 retries took %v, want the pauses 5, 10, 20, 40 ms", el)
	}
	if s := l.Stats(); s.Retries != 4 {
		t.Errorf("Retries = %d, want 4", s.Retries)
	}
	if lines := strings.Count(log.String(), "accept failed"); lines != 1 || !strings.Contains(log.String(), "too many open files") {
		t.Errorf("log has %d accept lines, want 1 (one per LogEvery) naming the error:\n%s", lines, log.String())
	}
	f.n, f.err = 1, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EINVAL)}
	if _, err := l.Accept(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Accept with EINVAL = %v, want it returned", err)
	}
	inner.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener = %v, want net.ErrClosed", err)
	}
}

// TestSpareSheds: out of descriptors, the spare is let go for one accept and
// the connection waiting in the backlog is closed at once.
func TestSpareSheds(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	sp, err := NewSpare()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	f := &failing{Listener: inner, n: 1, err: emfile}
	l := Wrap(f, Config{Name: "resolver", Spare: sp})
	waiting := dialFrom(t, l, "127.0.0.1")
	served := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			served <- c
		}
	}()
	wantClosed(t, waiting, "connection in the backlog while out of descriptors")
	next := dialFrom(t, l, "127.0.0.1")
	defer next.Close()
	select {
	case c := <-served:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the connection after the shed one was not accepted")
	}
	if s := l.Stats(); s.Refused[ReasonDescriptors] != 1 || s.Retries != 1 {
		t.Errorf("stats %+v, want 1 shed, 1 retry", s)
	}
	if sp.f == nil {
		t.Error("spare not opened again")
	}
}

// TestCloseEndsPause: closing the listener while Accept pauses between
// retries ends Accept at once with the closed listener's error.
func TestCloseEndsPause(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	l := Wrap(&failing{Listener: inner, n: 1 << 30, err: emfile}, Config{Name: "resolver"})
	got := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		got <- err
	}()
	for l.Stats().Retries < 9 { // the pause is now over a second
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	l.Close()
	select {
	case err := <-got:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
		}
		if el := time.Since(start); el > 500*time.Millisecond {
			t.Errorf("Accept returned %v after Close", el)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still pausing 5 s after Close")
	}
}
