package cache

import (
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultCounterKeys bounds the distinct keys a Counter holds between drains.
const DefaultCounterKeys = 1 << 20

// counterShards spreads keys over independently locked maps, so that
// resolvers on different cores rarely touch the same lock word (practice 7).
const counterShards = 256

// Counter counts events per key (resolutions per storage key) for a
// periodic flusher: the hot path only adds to an in-memory counter, and Drain
// hands the accumulated counts over in one batch.
//
// Count of a key already known at the previous Drain takes no lock and
// allocates nothing: an atomic load of the shard's read-only map, a map
// lookup and an atomic add. Keys new since the previous Drain take the
// shard's mutex (and the first Count of a key allocates its counter); Drain
// publishes them in a fresh read-only map. Keys with no events for a whole
// period are retired, and forgotten one period later.
//
// No event is lost to a concurrent Drain.
//
// Memory is bounded: beyond maxKeys/256 distinct keys per shard, new keys are
// not counted (Dropped says how many events were lost that way). It is safe
// for concurrent use.
type Counter struct {
	shards   [counterShards]counterShard
	perShard int
}

type counterMap = map[string]*atomic.Uint64

// paddedCounter gives each key's counter a cache line of its own, so that
// two popular identifiers counted on different cores do not contend.
type paddedCounter struct {
	n atomic.Uint64
	_ [56]byte
}

// DeadBit is set in a counter Drain has forgotten: whoever adds to a counter
// it keeps (see Ref) and sees DeadBit in the result must get a new one.
const DeadBit = 1 << 63

const deadBit = DeadBit

type counterShard struct {
	read    atomic.Pointer[counterMap] // immutable; replaced by Drain
	mu      sync.Mutex
	dirty   counterMap // keys new since the last Drain, guarded by mu
	retired counterMap // idle at the last Drain, guarded by mu
	spare   counterMap // empty; the next Drain's retired map, guarded by mu
	dropped atomic.Uint64
	_       [64]byte // keep neighbouring shards apart
}

// NewCounter returns a Counter holding at most maxKeys distinct keys (if
// maxKeys <= 0, DefaultCounterKeys).
func NewCounter(maxKeys int) *Counter {
	if maxKeys <= 0 {
		maxKeys = DefaultCounterKeys
	}
	c := &Counter{perShard: max(1, maxKeys/counterShards)}
	for i := range c.shards {
		m := counterMap{}
		c.shards[i].read.Store(&m)
		c.shards[i].dirty = counterMap{}
		c.shards[i].retired = counterMap{}
		c.shards[i].spare = counterMap{}
	}
	return c
}

// shardOf picks a shard from the end of the key (storage keys share long
// prefixes and differ in their ids) and its length; cheap, not a full hash.
func shardOf(key string) uint64 {
	var x uint64
	n := len(key)
	for i := max(0, n-8); i < n; i++ {
		x = x<<8 | uint64(key[i])
	}
	x ^= uint64(n) << 56
	return (x * 0x9e3779b97f4a7c15) >> (64 - 8) // top 8 bits: 256 shards
}

// Count adds one event for key. It does not retain key (the first Count of a
// key copies it), so key may point into a reused buffer. A nil Counter counts
// nothing.
func (c *Counter) Count(key string) {
	if c == nil {
		return
	}
	s := &c.shards[shardOf(key)]
	if p := (*s.read.Load())[key]; p != nil && p.Add(1)&deadBit == 0 {
		return
	}
	// New key, or a counter Drain has forgotten since we loaded the map.
	for {
		p := c.Ref(key)
		if p == nil {
			s.dropped.Add(1)
			return
		}
		if p.Add(1)&deadBit == 0 {
			return
		}
	}
}

// Ref returns key's current counter, creating it, so that a caller can keep
// it (in a cache entry's view, say) and count with a bare p.Add(1), no
// look-up. If an Add returns a value with DeadBit set, Drain has forgotten the
// counter and that event was not counted: call Ref again and add to the new
// one. Ref returns nil when the table is full (then Count the key, which
// records the event as dropped). Ref takes the shard lock.
func (c *Counter) Ref(key string) *atomic.Uint64 {
	if c == nil {
		return nil
	}
	s := &c.shards[shardOf(key)]
	s.mu.Lock()
	// Drain may have published the key since the lock-free look-up.
	p := (*s.read.Load())[key]
	if p == nil {
		p = s.dirty[key]
	}
	if p == nil {
		p = s.retired[key]
	}
	if p == nil {
		if len(s.dirty)+len(*s.read.Load())+len(s.retired) >= c.perShard {
			s.mu.Unlock()
			return nil
		}
		p = &new(paddedCounter).n
		s.dirty[strings.Clone(key)] = p
	}
	s.mu.Unlock()
	return p
}

// Drain calls fn for every key counted since the previous Drain, with the
// number of events, and resets the counts. fn runs with a shard locked: it
// must be quick and must not call Count.
func (c *Counter) Drain(fn func(key string, n uint64)) { c.DrainPart(0, 1, fn) }

// DrainPart is Drain for part i of parts (0 <= i < parts; parts at most 256):
// draining each part once, in any order, is one Drain. A flusher that drains
// in parts can let other goroutines run in between (with GOMAXPROCS 1, the
// resolvers wait while a Drain of tens of thousands of keys runs).
func (c *Counter) DrainPart(i, parts int, fn func(key string, n uint64)) {
	if c == nil || parts <= 0 || i < 0 || i >= parts {
		return
	}
	for j := i * counterShards / parts; j < (i+1)*counterShards/parts; j++ {
		c.shards[j].drain(fn)
	}
}

func (s *counterShard) drain(fn func(key string, n uint64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.read.Load()
	if len(old)+len(s.dirty)+len(s.retired) == 0 {
		return
	}
	next := make(counterMap, len(old)+len(s.dirty))
	// s.spare is the map retired two drains ago, emptied: the idle keys of
	// this drain go there, so a steady drain allocates only next.
	retired := s.spare
	for _, m := range [...]counterMap{old, s.dirty} {
		for k, p := range m {
			if n := p.Swap(0); n > 0 {
				fn(k, n)
				next[k] = p
			} else {
				retired[k] = p
			}
		}
	}
	// Idle for two periods: forgotten. Marking the counter dead (only if
	// still zero) sends a Count that holds it from an old map to the slow
	// path, which makes a new counter: no event is lost.
	for k, p := range s.retired {
		if p.CompareAndSwap(0, deadBit) {
			continue
		}
		fn(k, p.Swap(0))
		next[k] = p
	}
	s.read.Store(&next)
	// dirty and the old retired map are only used under mu: empty them for
	// reuse rather than allocating new ones.
	clear(s.dirty)
	clear(s.retired)
	s.spare = s.retired
	s.retired = retired
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
		s.mu.Lock()
		n += len(*s.read.Load()) + len(s.dirty) + len(s.retired)
		s.mu.Unlock()
	}
	return n
}
