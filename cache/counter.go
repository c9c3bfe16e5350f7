package cache

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/internal/unsafeconv"
)

// DefaultCounterBytes bounds a Counter's memory when NewCounter is given 0.
const DefaultCounterBytes = 8 << 20

// counterShards spreads keys over independently locked maps, so that
// resolvers on different cores rarely touch the same lock word (practice 7).
const counterShards = 256

// RoomWait is how long Count (through ref) waits for a flush to make room in a full table
// before it gives the event up as dropped: longer than a healthy flush takes
// to drain the table (tens of milliseconds), so that only a flusher that is
// stuck (a database that does not answer) costs counts.
const RoomWait = 2 * time.Second

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
// A key counted once and then not again for long (a miss the cache did not
// admit) gets no counter (CountOnce): it is appended to its shard's log,
// which the next Drain reports and empties.
//
// Memory is bounded in bytes (NewCounter): each key is charged its copy, its
// counter and its slots in the shard's maps, at the allocator's size classes
// (Bytes). When the table reaches half its bound it asks its flusher for an
// early Drain (AttachFlusher); a Drain empties every shard holding more than
// an even share of a quarter of the bound, maps included, instead of keeping
// its keys for the next period. A key that would take the table past its
// bound waits (up to RoomWait) for that Drain rather than going uncounted; only
// without a flusher, or when none comes in time (then until the next Drain,
// without waiting), is the event dropped (Dropped).
// It is safe for concurrent use.
type Counter struct {
	shards [counterShards]counterShard

	limit int64        // the bound in bytes
	bytes atomic.Int64 // the shards' bytes, summed

	flush    chan struct{}                 // cap 1: a value when the table is past half its bound
	flushers atomic.Int32                  // attached flushers (AttachFlusher)
	waiting  atomic.Int32                  // refs waiting for room
	room     atomic.Pointer[chan struct{}] // closed (and replaced) when a drain frees bytes while someone waits
	stalled  atomic.Bool                   // a wait for room timed out; cleared by the next drain
	asked    atomic.Uint64                 // early flushes asked for
	waits    atomic.Uint64                 // refs that waited for room
}

type counterMap = map[string]*atomic.Uint64

// paddedCounter gives each key's counter a cache line of its own, so that
// two popular identifiers counted on different cores do not contend. The
// line's rest holds the key's copy when it fits (most storage keys do), so
// that registering a key is one allocation; every look-up of the key reads
// the line anyway, to add to n.
type paddedCounter struct {
	n   atomic.Uint64
	key [56]byte
}

// counterRefBytes is the heap one key's counter occupies. A holder of a
// counter from ref (a cache entry, Entry.CountHit) keeps it alive after the
// Counter forgot it, so it charges this much too.
const counterRefBytes = 64

// deadBit is set in a counter Drain has forgotten: whoever adds to a counter
// it keeps (see ref) and sees deadBit in the result must get a new one.
const deadBit = 1 << 63

type counterShard struct {
	read    atomic.Pointer[counterMap] // immutable; replaced by Drain
	mu      sync.Mutex
	dirty   counterMap // keys new since the last Drain, guarded by mu
	retired counterMap // idle at the last Drain, guarded by mu
	spare   counterMap // empty; the next Drain's retired map, guarded by mu
	dropped atomic.Uint64

	// once is the keys CountOnce counted since the last Drain, each after
	// its length (a uvarint), guarded by mu. Its capacity is charged in
	// bytes (keyBytes does not include it).
	once  []byte
	onceN int // the keys in once

	// Memory, guarded by mu. A Go map keeps the slots it grew to after
	// clear, so each map is charged for the most keys it has held since it
	// was made (its peak); keyBytes is the keys' copies and counters.
	keyBytes                                 int64
	readPeak, dirtyPeak, retiredPeak, spare0 int
	bytes                                    int64 // keyBytes + the maps' slots: the shard's part of Counter.bytes

	_ [64]byte // keep neighbouring shards apart
}

// NewCounter returns a Counter whose table stays within maxBytes (if
// maxBytes <= 0, DefaultCounterBytes).
func NewCounter(maxBytes int64) *Counter {
	if maxBytes <= 0 {
		maxBytes = DefaultCounterBytes
	}
	c := &Counter{limit: maxBytes, flush: make(chan struct{}, 1)}
	room := make(chan struct{})
	c.room.Store(&room)
	var empty counterMap
	for i := range c.shards {
		s := &c.shards[i]
		s.read.Store(&empty)
		s.dirty, s.retired, s.spare = counterMap{}, counterMap{}, counterMap{}
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
		p := c.ref(key)
		if p == nil {
			c.drop(key)
			return
		}
		if p.Add(1)&deadBit == 0 {
			return
		}
	}
}

// CountOnce adds one event for key without registering a counter for it: for
// a key unlikely to be counted again before the next Drain, such as a record
// the cache did not admit (Entry.CountHit). A counter would cost a map insert
// now and work in each of the next three drains, which a one-off key never
// repays; CountOnce appends the key to its shard's log, and the next Drain
// reports it with n = 1, so a Drain may report a key more than once. Like
// Count it does not retain key, and in a full table it waits for room as ref
// does, then drops the event.
func (c *Counter) CountOnce(key string) {
	if c == nil {
		return
	}
	s := &c.shards[shardOf(key)]
	var lenBuf [binary.MaxVarintLen64]byte
	klen := lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(key)))]
	need := len(klen) + len(key)
	for {
		s.mu.Lock()
		ask := false // the table grew past half its bound
		if len(s.once)+need > cap(s.once) {
			// Grow to the allocator's size class, which is what the heap holds.
			grown := int(AllocSize(max(2*cap(s.once), len(s.once)+need, onceMinBytes)))
			cost := int64(grown) - AllocSize(cap(s.once))
			total, ok := c.reserve(cost)
			if !ok {
				s.mu.Unlock()
				if cost > c.limit || !c.waitRoom(cost) {
					s.dropped.Add(1)
					return
				}
				continue
			}
			s.once = append(make([]byte, 0, grown), s.once...)
			s.bytes += cost
			ask = total >= c.limit/2
		}
		s.once = append(append(s.once, klen...), key...)
		s.onceN++
		s.mu.Unlock()
		if ask {
			c.askFlush()
		}
		return
	}
}

// onceMinBytes is the smallest log CountOnce allocates for a shard.
const onceMinBytes = 512

// own returns the table's copy of key: in pc's spare bytes if it fits, else
// a copy of its own.
func (pc *paddedCounter) own(key string) string {
	if len(key) > len(pc.key) {
		return strings.Clone(key)
	}
	copy(pc.key[:], key)
	// pc.key is written only here, before the string is published, and pc
	// lives as long as the string does (it points into pc).
	return unsafeconv.String(pc.key[:len(key)])
}

// keyBytes is what one key costs besides its map slots: its copy (none when
// it fits in its counter's line), its counter, and keySlack: the free slots
// the maps' smaller arrays leave in shared spans once a map has grown past
// them (TestCounterAccountingMatchesHeap checks the sum against the heap).
func keyBytes(key string) int64 {
	n := int64(counterRefBytes + keySlack)
	if len(key) > len(paddedCounter{}.key) {
		n += AllocSize(len(key))
	}
	return n
}

const keySlack = 8

// drop records an event for key that found no room in the table (ref
// returned nil): it is counted in Dropped, not waited for again.
func (c *Counter) drop(key string) { c.shards[shardOf(key)].dropped.Add(1) }

// ref returns key's current counter, creating it, so that a caller can keep
// it (in a cache entry's view, say) and count with a bare p.Add(1), no
// look-up. If an Add returns a value with deadBit set, Drain has forgotten the
// counter and that event was not counted: call ref again and add to the new
// one. ref takes the shard lock. When the table is full it waits for a flush
// (see Counter); it returns nil when none made room (then drop the event).
func (c *Counter) ref(key string) *atomic.Uint64 {
	if c == nil {
		return nil
	}
	s := &c.shards[shardOf(key)]
	for {
		s.mu.Lock()
		// Drain may have published the key since the lock-free look-up.
		p := (*s.read.Load())[key]
		if p == nil {
			p = s.dirty[key]
		}
		if p == nil {
			p = s.retired[key]
		}
		if p != nil {
			s.mu.Unlock()
			return p
		}
		kb := keyBytes(key)
		cost := kb
		if n := len(s.dirty) + 1; n > s.dirtyPeak {
			cost += mapBytes(n) - mapBytes(s.dirtyPeak)
		}
		if total, ok := c.reserve(cost); ok {
			pc := new(paddedCounter)
			p = &pc.n
			s.dirty[pc.own(key)] = p
			s.dirtyPeak = max(s.dirtyPeak, len(s.dirty))
			s.keyBytes += kb
			s.bytes += cost
			s.mu.Unlock()
			if total >= c.limit/2 {
				c.askFlush()
			}
			return p
		}
		s.mu.Unlock()
		if cost > c.limit || !c.waitRoom(cost) {
			return nil
		}
	}
}

// reserve adds cost to the table's bytes if that keeps them within the
// bound, and returns the new total. (A compare-and-swap rather than an add
// and a take-back: the total is never seen past the bound.)
func (c *Counter) reserve(cost int64) (int64, bool) {
	for {
		cur := c.bytes.Load()
		if cur+cost > c.limit {
			return cur, false
		}
		if c.bytes.CompareAndSwap(cur, cur+cost) {
			return cur + cost, true
		}
	}
}

// askFlush asks the flusher for an early Drain, if it has not been asked yet.
func (c *Counter) askFlush() {
	select {
	case c.flush <- struct{}{}:
		c.asked.Add(1)
	default:
	}
}

// waitRoom asks for a flush and waits until a drain leaves room for cost
// bytes, at most RoomWait. It reports false at once without a flusher.
func (c *Counter) waitRoom(cost int64) bool {
	c.askFlush()
	if c.flushers.Load() == 0 || c.stalled.Load() {
		return false
	}
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	// The channel is loaded after waiting is raised and before the bytes
	// are read again: a drain that frees bytes after this read sees the
	// waiter and closes this channel (or a later one, after we loaded it,
	// but then the read below already sees the freed bytes).
	room := *c.room.Load()
	if c.bytes.Load()+cost <= c.limit {
		return true
	}
	c.waits.Add(1)
	t := time.NewTimer(RoomWait)
	defer t.Stop()
	select {
	case <-room:
		return true
	case <-t.C:
		// The flusher is stuck (its database does not answer): until it
		// drains again, refs drop rather than each wait this long.
		c.stalled.Store(true)
		return false
	}
}

// AttachFlusher registers a flusher: the returned channel receives a value
// when the table has grown to half its bound, and the flusher should then
// Drain (as well as on its own schedule). While a flusher is attached, ref
// waits for room at the bound instead of dropping. detach ends that; waiting
// refs then give up.
func (c *Counter) AttachFlusher() (early <-chan struct{}, detach func()) {
	c.flushers.Add(1)
	var once sync.Once
	return c.flush, func() {
		once.Do(func() {
			c.flushers.Add(-1)
			c.wake()
		})
	}
}

// wake releases every ref waiting for room.
func (c *Counter) wake() {
	room := make(chan struct{})
	close(*c.room.Swap(&room))
}

// Drain calls fn for every key counted since the previous Drain, with the
// number of events, and resets the counts. A key counted through CountOnce
// comes once per such event, besides its counter's total if it has one. fn
// runs with a shard locked: it must be quick, must not call Count, and must
// not keep key after it returns.
func (c *Counter) Drain(fn func(key string, n uint64)) { c.DrainPart(0, 1, fn) }

// DrainPart is Drain for part i of parts (0 <= i < parts; parts at most 256):
// draining each part once, in any order, is one Drain. A flusher that drains
// in parts can let other goroutines run in between (with GOMAXPROCS 1, the
// resolvers wait while a Drain of tens of thousands of keys runs).
func (c *Counter) DrainPart(i, parts int, fn func(key string, n uint64)) {
	if c == nil || parts <= 0 || i < 0 || i >= parts {
		return
	}
	c.stalled.Store(false)
	freed := false
	for j := i * counterShards / parts; j < (i+1)*counterShards/parts; j++ {
		if c.shards[j].drain(c, fn) {
			freed = true
		}
	}
	if freed && c.waiting.Load() > 0 {
		c.wake()
	}
}

// drain drains the shard and reports whether its bytes went down.
func (s *counterShard) drain(c *Counter, fn func(key string, n uint64)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.read.Load()
	full := s.bytes > c.limit/(4*counterShards)
	keyed := len(old)+len(s.dirty)+len(s.retired) > 0
	if !keyed && cap(s.once) == 0 && !full {
		return false
	}
	before := s.bytes
	s.drainOnce(fn, full)
	if keyed || full {
		// The steady drain makes a new read-only map while the emptied ones
		// keep their slots: it must have room for that map in the bound, or
		// the shard is emptied instead.
		if hint := len(old) + len(s.dirty) + len(s.retired); !full && mapBytes(hint) > s.readBytes() {
			_, full = c.reserve(mapBytes(hint) - s.readBytes())
			full = !full
			if !full {
				before += mapBytes(hint) - s.readBytes()
				s.readPeak = hint
			}
		}
		if full {
			s.forgetAll(old, fn)
		} else {
			s.keepCounted(old, fn)
		}
	}
	s.bytes = s.keyBytes + mapBytes(s.readPeak) + mapBytes(s.dirtyPeak) + mapBytes(s.retiredPeak) + mapBytes(s.spare0) + AllocSize(cap(s.once))
	c.bytes.Add(s.bytes - before)
	return s.bytes < before
}

// drainOnce reports each key of the CountOnce log with n = 1 and empties the
// log. It keeps the log's array for the next period unless the shard is past
// its share (full) or the period used less than a quarter of it.
func (s *counterShard) drainOnce(fn func(key string, n uint64), full bool) {
	for b := s.once; len(b) > 0; {
		n, w := binary.Uvarint(b)
		fn(unsafeconv.String(b[w:w+int(n)]), 1)
		b = b[w+int(n):]
	}
	if full || len(s.once) < cap(s.once)/4 {
		s.once = nil
	} else {
		s.once = s.once[:0]
	}
	s.onceN = 0
}

func (s *counterShard) readBytes() int64 { return mapBytes(s.readPeak) }

// keepCounted is the steady drain: the keys counted since the last drain stay
// (in the next read-only map), idle ones are retired, and keys idle for two
// periods are forgotten.
func (s *counterShard) keepCounted(old counterMap, fn func(key string, n uint64)) {
	hint := len(old) + len(s.dirty) + len(s.retired)
	next := make(counterMap, hint)
	// s.spare is the map retired two drains ago, emptied: the idle keys of
	// this drain go there, so a steady drain allocates only next.
	retired, retiredPeak := s.spare, s.spare0
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
	retiredPeak = max(retiredPeak, len(retired))
	// Idle for two periods: forgotten. Marking the counter dead (only if
	// still zero) sends a Count that holds it from an old map to the slow
	// path, which makes a new counter: no event is lost.
	for k, p := range s.retired {
		if p.CompareAndSwap(0, deadBit) {
			s.keyBytes -= keyBytes(k)
			continue
		}
		fn(k, p.Swap(0))
		next[k] = p
	}
	s.read.Store(&next)
	s.readPeak = hint
	// dirty and the old retired map are only used under mu: empty them for
	// reuse rather than allocating new ones (they keep their peaks).
	clear(s.dirty)
	clear(s.retired)
	s.spare, s.spare0 = s.retired, s.retiredPeak
	s.retired, s.retiredPeak = retired, retiredPeak
}

// forgetAll hands over every count and forgets every key, and drops the maps
// for empty ones, so that the shard's memory goes back to the allocator. A
// Count or ref caller holding a forgotten counter finds deadBit and makes a
// new one: no event is lost.
func (s *counterShard) forgetAll(old counterMap, fn func(key string, n uint64)) {
	for _, m := range [...]counterMap{old, s.dirty, s.retired} {
		for k, p := range m {
			if n := p.Swap(deadBit); n > 0 {
				fn(k, n)
			}
		}
	}
	var empty counterMap
	s.read.Store(&empty)
	s.dirty, s.retired, s.spare = counterMap{}, counterMap{}, counterMap{}
	s.keyBytes, s.readPeak, s.dirtyPeak, s.retiredPeak, s.spare0 = 0, 0, 0, 0, 0
}

// Go's maps (Swiss tables) keep 8 slots a group, each slot here a string
// header and a pointer, plus a control word: 200 bytes a group. A table
// doubles when it is 7/8 full, up to 1024 slots; beyond that the map splits
// tables, each between 7/16 and 7/8 full.
const (
	mapGroupBytes = 8 + 8*(16+8)
	mapHeader     = 48 // the map itself
	mapTable      = 48 // a table (and its directory slot) once it has more than one group
	mapTableSlots = 1024
)

// mapBytes is the heap a counterMap that has held n keys occupies: its
// header and its slot groups, for a split map as if every table were at the
// least full it can be.
func mapBytes(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 8:
		return mapHeader + AllocSize(mapGroupBytes)
	}
	slots := 8
	for slots*7/8 < n && slots < mapTableSlots {
		slots *= 2
	}
	if slots*7/8 >= n {
		return mapHeader + mapTable + AllocSize(slots/8*mapGroupBytes)
	}
	tables := (n + mapTableSlots*7/16 - 1) / (mapTableSlots * 7 / 16)
	return mapHeader + AllocSize(8*tables) + int64(tables)*(mapTable+AllocSize(mapTableSlots/8*mapGroupBytes))
}

// Dropped returns how many events were not counted because the key table was
// full and no flush made room in time (since the Counter was made).
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

// Keys returns the number of keys currently held: those with a counter, and
// each event of a CountOnce log (a key logged twice counts twice).
func (c *Counter) Keys() int {
	if c == nil {
		return 0
	}
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(*s.read.Load()) + len(s.dirty) + len(s.retired) + s.onceN
		s.mu.Unlock()
	}
	return n
}

// CounterUsage is a snapshot of a Counter's memory and of how often it had to
// be flushed early.
type CounterUsage struct {
	Bytes      int64  // what the table holds now (keys, counters, map slots)
	Limit      int64  // its bound (NewCounter)
	EarlyAsked uint64 // early flushes asked for, the table being at half its bound
	Waits      uint64 // new keys that waited for a flush to make room
	Flushers   int    // flushers attached (AttachFlusher)
}

// Usage returns the table's memory and early-flush counts.
func (c *Counter) Usage() CounterUsage {
	if c == nil {
		return CounterUsage{}
	}
	return CounterUsage{Bytes: c.bytes.Load(), Limit: c.limit, EarlyAsked: c.asked.Load(), Waits: c.waits.Load(), Flushers: int(c.flushers.Load())}
}
