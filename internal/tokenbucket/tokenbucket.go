package tokenbucket

import (
	"math"
	"sync"
	"time"
)

// DefaultSize is the bound on keys tracked when Config.Size is zero.
const DefaultSize = 1 << 16

const shards = 64

// maxSpan bounds the interval and the burst tolerance (about 73 years), so
// that now plus either never overflows an int64 for any date this side of
// 2200.
const maxSpan = 1 << 61

// Config describes a Table.
type Config struct {
	// Rate is the sustained rate, in tokens per second. A Rate that is not
	// positive (or NaN) refills nothing: each key gets its burst, once.
	Rate float64
	// Burst is the bucket size: how many takes a key with a full bucket may
	// make at once. Values below 1 are taken as 1.
	Burst float64
	// Size bounds the keys tracked; if zero, DefaultSize is used. The bound
	// is split over 64 shards, so it is rounded down to a multiple of 64
	// (and at least 64).
	Size int
}

// Result is the answer of Take.
type Result struct {
	// OK reports whether a token was taken.
	OK bool
	// Wait is, when !OK, how long until the key has a token again (> 0);
	// zero when OK. A Retry-After header rounds it up to whole seconds.
	Wait time.Duration
	// Refused counts the key's refusals in a row, this one included; zero
	// when OK. Response-rate limiting uses it for its slip cadence.
	Refused uint32
}

// Table is a bounded set of token buckets keyed by K.
type Table[K comparable] struct {
	interval int64 // nanoseconds per token
	tol      int64 // burst × interval: how far the arrival time may run ahead of now
	rate     float64
	perShard int
	hash     func(K) uint64
	shards   [shards]shard[K]
}

type entry struct {
	tat     int64 // unix nanoseconds at which the bucket is full again
	refused uint32
}

type shard[K comparable] struct {
	mu sync.Mutex
	m  map[K]entry
	_  [40]byte // keep shards on separate cache lines
}

// New returns a table for cfg. hash spreads keys over the shards: any
// deterministic function of the key that differs between most keys (Take
// multiplies it by a large odd constant and uses the top bits).
func New[K comparable](cfg Config, hash func(K) uint64) *Table[K] {
	burst := cfg.Burst
	if !(burst >= 1) {
		burst = 1
	}
	burst = math.Min(burst, maxSpan)
	// The tolerance (burst × interval) stays within maxSpan; that bounds the
	// interval only for rates below a token per decades.
	interval := float64(maxSpan) / burst
	if cfg.Rate > 0 {
		interval = math.Min(float64(time.Second)/cfg.Rate, interval)
	}
	size := cfg.Size
	if size <= 0 {
		size = DefaultSize
	}
	iv := max(int64(interval), 1) // whole nanoseconds: tokens are counted in intervals
	t := &Table[K]{
		interval: iv,
		tol:      int64(math.Min(float64(iv)*burst, maxSpan)),
		rate:     cfg.Rate,
		perShard: max(1, size/shards),
		hash:     hash,
	}
	for i := range t.shards {
		t.shards[i].m = make(map[K]entry)
	}
	return t
}

// Rate returns Config.Rate.
func (t *Table[K]) Rate() float64 { return t.rate }

// Take takes one token from k's bucket at now (unix nanoseconds). A key not
// in the table starts with a full bucket.
func (t *Table[K]) Take(k K, now int64) Result {
	sh := &t.shards[(t.hash(k)*0x9e3779b97f4a7c15)>>58] // top 6 bits: 64 shards
	sh.mu.Lock()
	e, ok := sh.m[k]
	if !ok {
		if len(sh.m) >= t.perShard {
			sh.makeRoom(now, t.perShard)
		}
		e.tat = now
	}
	tat := max(e.tat, now)
	var r Result
	if next := tat + t.interval; next-now <= t.tol {
		e.tat, e.refused = next, 0
		r.OK = true
	} else {
		e.tat = tat
		e.refused++
		r.Refused = e.refused
		r.Wait = time.Duration(next - t.tol - now)
	}
	sh.m[k] = e
	sh.mu.Unlock()
	return r
}

// makeRoom forgets the keys whose bucket is full again, then arbitrary keys
// until an eighth of the shard is free. The caller holds sh.mu.
func (sh *shard[K]) makeRoom(now int64, perShard int) {
	for k, e := range sh.m {
		if e.tat <= now {
			delete(sh.m, k)
		}
	}
	keep := perShard - max(1, perShard/8)
	for k := range sh.m {
		if len(sh.m) <= keep {
			break
		}
		delete(sh.m, k)
	}
}

// Len returns the number of keys tracked now.
func (t *Table[K]) Len() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
