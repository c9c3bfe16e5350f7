package connlimit

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyOf(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"192.0.2.1", "::ffff:192.0.2.1", true},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2:bbbb::2", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"fe80::1%eth0", "fe80::2%eth1", true},
		{"::ffff:0:0", "0.0.0.0", true},
		{"::", "0.0.0.0", false},
	}
	for _, tc := range tests {
		ka, kb := KeyOf(netip.MustParseAddr(tc.a)), KeyOf(netip.MustParseAddr(tc.b))
		if (ka == kb) != tc.same {
			t.Errorf("KeyOf(%s) == KeyOf(%s) is %v, want %v", tc.a, tc.b, ka == kb, tc.same)
		}
	}
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestRules(t *testing.T) {
	l, err := New(Config{Max: 16, PerSource: 6, HighWater: 10, Heavy: 2})
	if err != nil {
		t.Fatal(err)
	}
	take := func(a string, want Reason) Key {
		t.Helper()
		k, r := l.Acquire(addr(a))
		if r != want {
			t.Fatalf("Acquire(%s) with %d held = %v, want %v", a, l.Stats().Held, r, want)
		}
		return k
	}
	var held []Key
	for range 6 {
		held = append(held, take("10.0.0.1", OK))
	}
	take("10.0.0.1", PerSource)
	for range 4 { // 10 held: the high-water mark
		held = append(held, take("10.0.0.2", OK))
	}
	take("10.0.0.2", Heavy)
	take("10.0.0.3", OK)
	take("10.0.0.3", OK)
	take("10.0.0.3", Heavy) // holds 2 = Heavy
	for _, a := range []string{"10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7"} {
		take(a, OK) // light sources still get in
	}
	take("10.0.0.8", Full)
	l.Release(held[0])
	take("10.0.0.8", OK)
	st := l.Stats()
	if st.Held != 16 || st.Sources != 8 || st.RefusedPerSource != 1 || st.RefusedHeavy != 2 || st.RefusedFull != 1 {
		t.Errorf("Stats = %+v", st)
	}
	for _, k := range held[1:] {
		l.Release(k)
	}
	l.Release(held[1]) // not held any more: ignored
	if st := l.Stats(); st.Held != 7 || st.Sources != 6 {
		t.Errorf("after releases: %+v, want 7 held by 6 sources", st)
	}
}

func TestDefaults(t *testing.T) {
	l, err := New(Config{Max: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Config(); c.PerSource != 64 || c.HighWater != 768 || c.Heavy != 16 {
		t.Errorf("defaults for 1024: %+v", c)
	}
	l, _ = New(Config{Max: 4})
	if c := l.Config(); c.PerSource != 4 || c.HighWater != 3 || c.Heavy != 1 {
		t.Errorf("defaults for 4: %+v", c)
	}
	for _, c := range []Config{{}, {Max: -1}, {Max: 1, PerSource: -1}, {Max: 1, Heavy: -1}, {Max: 1, HighWater: -1}} {
		var ce *ConfigError
		if _, err := New(c); !errors.Is(err, ErrBadConfig) || !errors.As(err, &ce) {
			t.Errorf("New(%+v) = %v, want a *ConfigError wrapping ErrBadConfig", c, err)
		}
	}
}

// TestListener dials a real listener: connections beyond the per-source limit
// are closed by Accept, and closing a served one frees its slot.
func TestListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := New(Config{Max: 8, PerSource: 2})
	var refusals atomic.Int32
	ln := Listener(inner, l, func(Reason) { refusals.Add(1) })
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", inner.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	dial()
	a1, a2 := <-accepted, <-accepted
	extra := dial()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("third connection from one source: read %v, want it closed", err)
	}
	a1.Close()
	a1.Close() // a second Close releases nothing more
	dial()
	<-accepted
	if st := l.Stats(); st.Held != 2 || st.RefusedPerSource != 1 || refusals.Load() != 1 {
		t.Errorf("Stats = %+v, %d refusals reported, want 2 held, 1 refused", st, refusals.Load())
	}
	a2.Close()
	if st := l.Stats(); st.Held != 1 {
		t.Errorf("Stats = %+v, want 1 held", st)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
