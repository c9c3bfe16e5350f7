package cache

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultCounterKeys bounds the distinct keys a Counter holds between drains.
const DefaultCounterKeys = 1 << 20

// counterShards spreads keys over independently locked maps, so that
// resolvers on different cores rarely touch the same lock word (practice 7).
const counterShards = 256

// Counter counts events per key (resolutions per storage key, issue 4) for a
// periodic flusher: the hot path only adds to an in-memory counter, and Drain
// hands the accumulated counts over in one batch.
//
// Count of a key seen since the previous Drain allocates nothing and takes one
// shard's read lock; the first Count of a key allocates its counter. Memory is
// bounded: beyond MaxKeys/256 distinct keys per shard new keys are not counted
// (Dropped says how many events were lost that way). Keys idle for a whole
// drain period are forgotten at the next Drain. It is safe for concurrent use.
type Counter struct {
	shards   [counterShards]counterShard
	seed     maphash.Seed
	perShard int
}

type counterShard struct {
	mu      sync.RWMutex
	m       map[string]*atomic.Uint64
	dropped atomic.Uint64
	_       [64]byte // keep neighbouring shards' lock words apart
}

// NewCounter returns a Counter holding at most maxKeys distinct keys between
// drains (if maxKeys <= 0, DefaultCounterKeys).
func NewCounter(maxKeys int) *Counter {
	if maxKeys <= 0 {
		maxKeys = DefaultCounterKeys
	}
	c := &Counter{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/counterShards)}
	for i := range c.shards {
		c.shards[i].m = map[string]*atomic.Uint64{}
	}
	return c
}

// Count adds one event for key. It does not retain key (the first Count of a
// key copies it), so key may point into a reused buffer. A nil Counter counts
// nothing.
func (c *Counter) Count(key string) {
	if c == nil {
		return
	}
	s := &c.shards[maphash.String(c.seed, key)&(counterShards-1)]
	s.mu.RLock()
	if p := s.m[key]; p != nil {
		// Added under the read lock so Drain (write lock) never forgets a
		// counter between our lookup and our add.
		p.Add(1)
		s.mu.RUnlock()
		return
	}
	s.mu.RUnlock()
	s.mu.Lock()
	p := s.m[key]
	if p == nil {
		if len(s.m) >= c.perShard {
			s.mu.Unlock()
			s.dropped.Add(1)
			return
		}
		p = new(atomic.Uint64)
		s.m[strings.Clone(key)] = p
	}
	p.Add(1)
	s.mu.Unlock()
}

// Drain calls fn for every key counted since the previous Drain, with the
// number of events, and resets the counts. fn runs with a shard locked: it
// must be quick and must not call Count.
func (c *Counter) Drain(fn func(key string, n uint64)) {
	if c == nil {
		return
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, p := range s.m {
			n := p.Swap(0)
			if n == 0 {
				delete(s.m, k) // idle for a whole period: forget it
				continue
			}
			fn(k, n)
		}
		s.mu.Unlock()
	}
}

// Dropped returns how many events were not counted because the key table was
// full (since the Counter was made).
func (c *Counter) Dropped() uint64 {
	if c == nil {
		return 0
	}
	var n uint64
	for i := range c.shards {
		n += c.shards[i].dropped.Load()
	}
	return n
}

// Keys returns the number of distinct keys currently held.
func (c *Counter) Keys() int {
	if c == nil {
		return 0
	}
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
