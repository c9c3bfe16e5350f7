package hdldns

import (
	"net/netip"

	"pidnode/internal/tokenbucket"
)

// Response-rate limiting for UDP, after BIND's RRL: a token bucket per source
// prefix (internal/tokenbucket). Memory is bounded by the table size; when it
// is full, prefixes whose bucket is full again are forgotten first.
// Forgetting a prefix only ever gives it a full bucket. Every slip-th
// response refused in a row is slipped (a minimal TC=1 reply) rather than
// dropped.

type rrlAction uint8

const (
	rrlAllow rrlAction = iota
	rrlDrop
	rrlSlip
)

type rrlKey [16]byte

type limiter struct {
	t      *tokenbucket.Table[rrlKey]
	slip   uint32
	v4bits int
	v6bits int
}

func newLimiter(rate, burst, slip, table, v4bits, v6bits int) *limiter {
	if burst <= 0 {
		burst = rate
	}
	l := &limiter{
		t:      tokenbucket.New(tokenbucket.Config{Rate: float64(rate), Burst: float64(burst), Size: table}, hashRRLKey),
		v4bits: v4bits,
		v6bits: v6bits,
	}
	if slip > 0 {
		l.slip = uint32(slip)
	}
	return l
}

// hashRRLKey is FNV-1a over the key.
func hashRRLKey(k rrlKey) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range k {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return h
}

// key is the source prefix as 16 bytes (IPv4 in its IPv4-mapped form).
func (l *limiter) key(a netip.Addr) rrlKey {
	a = a.Unmap()
	bits := l.v6bits
	if a.Is4() {
		bits = l.v4bits
	}
	p, err := a.Prefix(bits)
	if err != nil { // an invalid or zoned address: key it whole
		return rrlKey(a.As16())
	}
	return rrlKey(p.Addr().As16()) // IPv4 comes out IPv4-mapped: no clash with IPv6
}

// check charges one response to src's prefix at now (unix nanos).
func (l *limiter) check(src netip.Addr, now int64) rrlAction {
	r := l.t.Take(l.key(src), now)
	switch {
	case r.OK:
		return rrlAllow
	case l.slip > 0 && r.Refused%l.slip == 0:
		return rrlSlip
	}
	return rrlDrop
}

// len returns the number of tracked prefixes.
func (l *limiter) len() int { return l.t.Len() }
