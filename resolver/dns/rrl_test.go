package hdldns

import (
	"net/netip"
	"testing"
	"time"
)

func TestLimiterPrefixes(t *testing.T) {
	l := newLimiter(1, 2, -1, 1024, 24, 56)
	now := int64(time.Hour)
	tests := []struct {
		name string
		src  string
		want rrlAction
	}{
		{"first of 10.0.0.0/24", "10.0.0.1", rrlAllow},
		{"same /24, burst 2", "10.0.0.200", rrlAllow},
		{"same /24 over the limit, slip off", "10.0.0.7", rrlDrop},
		{"IPv4-mapped is the same prefix", "::ffff:10.0.0.9", rrlDrop},
		{"next /24 has its own bucket", "10.0.1.1", rrlAllow},
		{"IPv6 first", "2001:db8:0:100::1", rrlAllow},
		{"same /56", "2001:db8:0:1ff::2", rrlAllow},
		{"same /56 over the limit", "2001:db8:0:1aa::3", rrlDrop},
		{"next /56", "2001:db8:0:200::1", rrlAllow},
	}
	for _, tt := range tests {
		if got := l.check(netip.MustParseAddr(tt.src), now); got != tt.want {
			t.Errorf("%s: check(%s) = %d, want %d", tt.name, tt.src, got, tt.want)
		}
	}
	// One second later one more token is there.
	if got := l.check(netip.MustParseAddr("10.0.0.1"), now+int64(time.Second)); got != rrlAllow {
		t.Errorf("after 1s: check = %d, want allow", got)
	}
}

func TestLimiterSlip(t *testing.T) {
	l := newLimiter(1, 1, 3, 1024, 24, 56)
	src := netip.MustParseAddr("192.0.2.1")
	var got []rrlAction
	for range 7 {
		got = append(got, l.check(src, 0))
	}
	want := []rrlAction{rrlAllow, rrlDrop, rrlDrop, rrlSlip, rrlDrop, rrlDrop, rrlSlip}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("actions %v, want %v", got, want)
		}
	}
}

// TestLimiterBounded: a flood from many spoofed prefixes never grows the table
// past its size.
func TestLimiterBounded(t *testing.T) {
	const table = 64 * 8
	l := newLimiter(10, 10, 2, table, 24, 56)
	for i := range 100000 {
		a := netip.AddrFrom4([4]byte{byte(i >> 16), byte(i >> 8), byte(i), 1})
		l.check(a, int64(i)) // the clock barely moves: nothing is idle
	}
	if n := l.len(); n > table {
		t.Errorf("table holds %d prefixes, limit %d", n, table)
	}
}
