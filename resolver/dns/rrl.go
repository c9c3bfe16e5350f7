package hdldns

import (
	"net/netip"
	"sync"
	"time"
)

// Response-rate limiting for UDP, after BIND's RRL: a token bucket per source
// prefix, kept as a GCRA "theoretical arrival time" (one int64 per prefix).
// Memory is bounded: each shard holds at most max entries; when a new prefix
// arrives at a full shard, entries whose bucket is full again (idle ones) are
// swept, and if that frees too little, arbitrary entries are dropped until the
// shard is half full. Forgetting a prefix only ever gives it a full bucket.

type rrlAction uint8

const (
	rrlAllow rrlAction = iota
	rrlDrop
	rrlSlip
)

const rrlShards = 64

type rrlKey [16]byte

type rrlEntry struct {
	tat   int64  // unix nanos at which the bucket is full again
	drops uint32 // responses dropped or slipped, for the slip cadence
}

type rrlShard struct {
	mu sync.Mutex
	m  map[rrlKey]rrlEntry
	_  [40]byte // keep shards on separate cache lines
}

type limiter struct {
	interval int64 // nanoseconds per response
	tol      int64 // burst tolerance: burst × interval
	slip     uint32
	v4bits   int
	v6bits   int
	max      int // entries per shard
	shards   [rrlShards]rrlShard
}

func newLimiter(rate, burst, slip, table, v4bits, v6bits int) *limiter {
	if burst <= 0 {
		burst = rate
	}
	l := &limiter{
		interval: int64(time.Second) / int64(rate),
		v4bits:   v4bits,
		v6bits:   v6bits,
		max:      max(table/rrlShards, 1),
	}
	if l.interval <= 0 {
		l.interval = 1
	}
	l.tol = l.interval * int64(burst)
	if slip > 0 {
		l.slip = uint32(slip)
	}
	for i := range l.shards {
		l.shards[i].m = make(map[rrlKey]rrlEntry)
	}
	return l
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
	k := l.key(src)
	h := uint32(2166136261) // FNV-1a
	for _, b := range k {
		h = (h ^ uint32(b)) * 16777619
	}
	sh := &l.shards[h%rrlShards]
	sh.mu.Lock()
	e, ok := sh.m[k]
	if !ok {
		if len(sh.m) >= l.max {
			sh.sweep(now, l.max)
		}
		e.tat = now
	}
	tat := max(e.tat, now)
	act := rrlAllow
	if next := tat + l.interval; next-now <= l.tol {
		e.tat = next
		e.drops = 0
	} else {
		e.tat = tat
		e.drops++
		act = rrlDrop
		if l.slip > 0 && e.drops%l.slip == 0 {
			act = rrlSlip
		}
	}
	sh.m[k] = e
	sh.mu.Unlock()
	return act
}

// sweep frees room in a full shard; the caller holds sh.mu.
func (sh *rrlShard) sweep(now int64, max int) {
	for k, e := range sh.m {
		if e.tat <= now {
			delete(sh.m, k)
		}
	}
	for k := range sh.m {
		if len(sh.m) <= max/2 {
			break
		}
		delete(sh.m, k)
	}
}

// len returns the number of tracked prefixes (tests).
func (l *limiter) len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
