//go:build !race

package tokenbucket

import "testing"

func TestTakeKnownKeyAllocs(t *testing.T) {
	tb := New(Config{Rate: 1000, Burst: 10}, func(k [16]byte) uint64 { return uint64(k[15]) })
	k := [16]byte{15: 7}
	tb.Take(k, 0)
	now := int64(0)
	if n := testing.AllocsPerRun(1000, func() {
		now += 1e6
		tb.Take(k, now)
	}); n != 0 {
		t.Errorf("Take on a known key: %v allocations, want 0", n)
	}
}
