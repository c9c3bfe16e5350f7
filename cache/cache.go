package cache

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"pidnode/handlev"
	"pidnode/internal/unsafeconv"
)

// Defaults New uses for zero Config fields.
const (
	DefaultBytes       = 256 << 20
	DefaultEntries     = 100000
	DefaultShards      = 64
	DefaultNegativeTTL = 30 * time.Second

	maxShards = 1 << 16

	// NoEntryCap, as Config.Entries, bounds the cache by Bytes alone.
	NoEntryCap = math.MaxInt
)

// Source is what the cache reads through on a miss; the store implements it.
//
// Load returns the record stored under key, found=false if there is none, or an
// error (which the cache returns to the caller and does not cache). The returned
// Record must be owned by the caller: the cache publishes it to every reader and
// neither side may modify it afterwards. Load must be safe for concurrent use.
type Source interface {
	Load(key string) (rec handlev.Record, found bool, err error)
}

// DerivedSource is a Source that keeps, beside each record, what its writer
// derived from it (handlev.Derived); the cache then loads through
// LoadDerived and hands it to Render in Entry.Derived. derived is nil for a
// record stored without it, and is owned like rec.
type DerivedSource interface {
	Source
	LoadDerived(key string) (rec handlev.Record, derived handlev.Derived, found bool, err error)
}

// Config configures a Cache. Zero values select the documented defaults.
type Config struct {
	// Source is read on a miss. Required.
	Source Source

	// Bytes is the memory budget: the total of what the held entries are
	// charged (Entry.Bytes), split evenly across shards. A shard that goes over
	// its share evicts its least recently used entries until it is under again,
	// so an entry larger than a shard's share is returned but not kept.
	// If zero, DefaultBytes is used.
	Bytes int64

	// Entries caps the number of entries kept, split evenly across shards (at
	// least one per shard, so the cap is max(Entries, Shards)), whatever their
	// size. If zero, DefaultEntries is used; NoEntryCap leaves Bytes as the
	// only limit.
	Entries int

	// Shards is the number of independently locked LRUs, a power of two up to 65536.
	// golang-lru's Get takes an exclusive lock (it moves the entry to the front), so
	// one LRU would serialise every hit. If zero, DefaultShards is used.
	Shards int

	// NegativeTTL is how long a not-found answer is kept. If zero,
	// DefaultNegativeTTL is used.
	NegativeTTL time.Duration

	// MaxAge, if non-zero, is how long a found record is kept before it is loaded
	// again. Zero means found entries live until evicted or invalidated (every write
	// invalidates, docs/product.md §8).
	MaxAge time.Duration

	// Now is the clock TTLs are checked against on read. If nil, time.Now is used.
	Now func() time.Time

	// Alt maps a storage key to its other form (handlev.Namer.AppendAltKey: short ↔
	// full), appending to dst. On a miss for a key that is not found, the Alt key is
	// loaded; Invalidate removes both forms. If nil, there is no fallback.
	Alt func(dst, key []byte) ([]byte, bool)

	// Render, if set, builds a front-specific view of an entry once, when the entry
	// is built (also for not-found entries). It is called last, so it may read every
	// other field of e and call its methods; it must not modify e. Its result is
	// stored in Entry.View. It runs on every miss, so it should build only what most
	// requests need and leave the rest to be built on first use (as Entry does with
	// JSONBytes and WireBytes). It must pass what it allocates to e.Charge, and so
	// must every part of the view built later, so that the budget holds.
	Render func(e *Entry) any

	// AdmitAll adds every loaded entry, evicting the least recently used ones to
	// make room (a plain LRU). If false, a shard that is full adds an entry only
	// for a key missed before within its recent misses (admit.go): a one-off
	// miss is answered from an entry built for its callers alone and not kept,
	// so it neither pays for the insertion and an eviction nor pushes out an
	// entry that is being reused. While a shard has room, every entry is added.
	AdmitAll bool

	// MemoryBudget is the whole memory budget Bytes is a share of (the
	// caller's: the entries, what else it sizes from the budget, the
	// collector's room), for AppendMetrics only (pidnode_cache_budget_bytes).
	// If zero, Bytes is reported.
	MemoryBudget int64
}

// Entry is what the cache holds for one requested key. It is immutable once
// published: Get returns the same *Entry to every reader, concurrently, and nothing
// (caller, Source or cache) may modify it or the slices it refers to. The encodings
// (JSONBytes, WireBytes) are built on first use, once per entry, and are just as
// immutable once returned.
type Entry struct {
	// Key is the storage key the record was found under: the requested key, or its
	// Alt form if the fallback found it. For a not-found entry, the requested key.
	Key string

	// Found reports whether the record exists. If false, Record and Public
	// are zero and JSONBytes and WireBytes return nil.
	Found bool

	// Record is the whole record as stored, values without public read
	// included: for a front, only Public may be shown.
	Record handlev.Record
	Status handlev.Status // Record.Status(), the same as Public.Status

	// Public is what the public may see of Record (handlev.NewPublic),
	// decided once when the entry is built; every public front renders from
	// it. It shares Record's memory. Its Target is -1 for a not-found entry.
	Public handlev.Public

	// Derived is what the record's writer derived from it (DerivedSource),
	// nil if the Source keeps none for it: Render may use it instead of
	// parsing Record (handlev.Derived says how to check it applies).
	Derived handlev.Derived

	// View is Config.Render(e), or nil without a Render.
	View any

	ages   bool  // whether expiry applies (negative entries, or MaxAge set)
	expiry int64 // unix nanoseconds at and after which the entry is stale

	// size is every byte charged to the entry so far (Bytes). charged is the
	// part of it counted in s.bytes: notResident before the entry is published
	// and once it has left the LRU, so that a part built after an eviction is
	// not counted against a shard that no longer holds it.
	s       *shard
	size    atomic.Int64
	charged atomic.Int64

	// The encodings, built by the first caller that needs them: most misses are
	// plain redirects that need neither, and building both on every load would be a
	// large share of the miss path's CPU time.
	jsonOnce, wireOnce sync.Once
	json, wire         []byte

	// hits is the record's resolution counter (Counter.ref), set by the first
	// CountHit: every front counts through it with one atomic add.
	hits atomic.Pointer[atomic.Uint64]
}

// CountHit counts one resolution of e's record in c, the statistics every
// front feeds: one atomic add on the counter e keeps, looked up in c (by
// e.Key) only the first time and after c forgot it (an add that returns
// deadBit). An entry the cache does not hold (never admitted, or evicted)
// and that has no counter yet is counted with c.CountOnce instead. A nil c
// counts nothing; a full c counts the event as dropped. It allocates only
// when c registers the key or grows its log. The first counter taken is
// charged to the entry (counterRefBytes): the entry keeps it alive after c
// forgets it.
func (e *Entry) CountHit(c *Counter) {
	if c == nil {
		return
	}
	p := e.hits.Load()
	if p != nil && p.Add(1)&deadBit == 0 {
		return
	}
	if p == nil && !e.Resident() {
		// The cache does not hold the entry: it answers only the requests
		// that loaded it, and the key's next request, if any soon, loads
		// it again. A counter would outlive its use.
		c.CountOnce(e.Key)
		return
	}
	for {
		p := c.ref(e.Key)
		if p == nil {
			c.drop(e.Key) // table full, no flush made room
			return
		}
		if old := e.hits.Swap(p); old == nil {
			e.Charge(counterRefBytes)
		}
		if p.Add(1)&deadBit == 0 {
			return
		}
	}
}

// JSONBytes returns handlev.AppendValuesJSON(nil, Public.Values), the Handle
// JSON array of the values the public may see, or nil for a not-found entry. The first call builds it (concurrent
// first callers wait for that one build); every later call returns the same slice
// and allocates nothing. The slice is shared: callers must not modify it.
func (e *Entry) JSONBytes() []byte {
	if !e.Found {
		return nil
	}
	e.jsonOnce.Do(e.buildJSON)
	return e.json
}

// WireBytes returns handlev.AppendValues(nil, Public.Values), the RFC 3651 value
// count and the values the public may see, or nil for a not-found entry. Built once on first use and
// shared, like JSONBytes.
func (e *Entry) WireBytes() []byte {
	if !e.Found {
		return nil
	}
	e.wireOnce.Do(e.buildWire)
	return e.wire
}

func (e *Entry) buildJSON() {
	e.json = handlev.AppendValuesJSON(nil, e.Public.Values)
	e.Charge(SliceSize(e.json))
}

func (e *Entry) buildWire() {
	e.wire = handlev.AppendValues(nil, e.Public.Values)
	e.Charge(SliceSize(e.wire))
}

// notResident marks an entry whose bytes no shard counts.
const notResident = -1

// Resident reports whether the entry is in the cache: false for one the
// cache did not admit (it answers only the requests that loaded it) or
// that has left it. A front may skip building, for such an entry, parts
// that only pay off when the entry is read again.
func (e *Entry) Resident() bool { return e.charged.Load() >= 0 }

// Charge adds n bytes to what the entry holds: a part of its view built after
// the entry (Config.Render, and every part a front builds on first use, once).
// If the entry is in the cache, its shard's total grows by n and the shard
// evicts its least recently used entries if that puts it over its share of
// Config.Bytes. It is safe for concurrent use and allocates nothing.
func (e *Entry) Charge(n int64) {
	if n <= 0 {
		return
	}
	e.size.Add(n)
	for {
		old := e.charged.Load()
		if old < 0 {
			return
		}
		if e.charged.CompareAndSwap(old, old+n) {
			break
		}
	}
	if e.s.bytes.Add(n) > e.s.budget {
		e.s.mu.Lock()
		e.s.trim()
		e.s.mu.Unlock()
	}
}

// Bytes returns what the entry has been charged: itself, its keys, its
// record, its public view, the LRU's bookkeeping for it, and every part built
// so far (encodings, the front's view), each at its heap size.
func (e *Entry) Bytes() int64 { return e.size.Load() }

// Stats is a snapshot of a Cache's counters.
type Stats struct {
	Hits      uint64 // Gets answered from a fresh entry
	Misses    uint64 // Gets that went to the load path (absent or expired), coalesced or not
	Evictions uint64 // entries pushed out by capacity, in bytes or entries (not invalidations)
	Entries   int    // entries currently held (Len)
}

// Usage is a snapshot of a Cache's memory accounting and of why entries left.
type Usage struct {
	Bytes   int64 // charged bytes of the entries held (Entry.Bytes summed) and of the admission filters
	Budget  int64 // Config.Bytes
	Entries int   // entries held

	EvictedBytes   uint64 // evicted to keep under Budget
	EvictedEntries uint64 // evicted by the Config.Entries cap
	Invalidated    uint64 // removed by Invalidate or InvalidateAll
	Expired        uint64 // replaced on reload after their TTL (negative entries, MaxAge)
	NotAdmitted    uint64 // loaded into a full shard on a first miss and not kept (Config.AdmitAll)
}

// Cache is a sharded LRU of immutable entries. It is safe for concurrent use.
type Cache struct {
	shards   []shard
	mask     uint64
	seed     maphash.Seed
	capacity int
	budget   int64
	memory   int64 // Config.MemoryBudget

	src    Source
	dsrc   DerivedSource // src, if it is one
	now    func() time.Time
	negTTL int64
	maxAge int64
	alt    func(dst, key []byte) ([]byte, bool)
	render func(e *Entry) any

	admitAll bool
}

type shard struct {
	lru     *lru.Cache[string, *Entry]
	flights atomic.Pointer[singleflight.Group] // replaced by InvalidateAll

	hits, misses, evictions atomic.Uint64

	// bytes is the sum of the held entries' charges; budget its share of
	// Config.Bytes. The eviction counters are by cause (Usage).
	bytes                              atomic.Int64
	budget                             int64
	evictedBytes, invalidated, expired atomic.Uint64

	// cap is the shard's entry cap; dk decides admission once the shard is
	// full (admit.go), guarded by mu. Its bits are charged to bytes.
	cap         int
	dk          doorkeeper
	notAdmitted atomic.Uint64

	// mu orders publishing a loaded entry against invalidation; a hit never takes it.
	mu  sync.Mutex
	gen uint64 // guarded by mu; bumped by every invalidation touching this shard

	_ [64]byte // keep the next shard's counters off this cache line
}

// New validates cfg, fills defaults and returns an empty Cache.
func New(cfg Config) (*Cache, error) {
	if cfg.Source == nil {
		return nil, &ConfigError{Pkg: "cache", Field: "Source", Reason: "required", Err: ErrNoSource}
	}
	if cfg.Bytes < 0 {
		return nil, configError("Bytes", cfg.Bytes, "must not be negative")
	}
	if cfg.Entries < 0 {
		return nil, configError("Entries", int64(cfg.Entries), "must not be negative")
	}
	if cfg.Shards < 0 || cfg.Shards > maxShards || cfg.Shards&(cfg.Shards-1) != 0 {
		return nil, configError("Shards", int64(cfg.Shards), "must be a power of two up to 65536")
	}
	if cfg.NegativeTTL < 0 {
		return nil, configError("NegativeTTL", int64(cfg.NegativeTTL), "must not be negative")
	}
	if cfg.MaxAge < 0 {
		return nil, configError("MaxAge", int64(cfg.MaxAge), "must not be negative")
	}
	if cfg.MemoryBudget < 0 {
		return nil, configError("MemoryBudget", cfg.MemoryBudget, "must not be negative")
	}
	if cfg.Entries == 0 {
		cfg.Entries = DefaultEntries
	}
	if cfg.Bytes == 0 {
		cfg.Bytes = DefaultBytes
	}
	if cfg.Shards == 0 {
		cfg.Shards = DefaultShards
	}
	if cfg.MemoryBudget == 0 {
		cfg.MemoryBudget = cfg.Bytes
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache{
		budget: cfg.Bytes,
		memory: cfg.MemoryBudget,
		shards: make([]shard, cfg.Shards),
		mask:   uint64(cfg.Shards - 1),
		seed:   maphash.MakeSeed(),
		src:    cfg.Source,
		now:    cfg.Now,
		negTTL: int64(cfg.NegativeTTL),
		maxAge: int64(cfg.MaxAge),
		alt:    cfg.Alt,
		render: cfg.Render,

		admitAll: cfg.AdmitAll,
	}
	c.dsrc, _ = cfg.Source.(DerivedSource)
	per, extra := cfg.Entries/cfg.Shards, cfg.Entries%cfg.Shards
	for i := range c.shards {
		n := per
		if i < extra {
			n++
		}
		n = max(n, 1)
		s := &c.shards[i]
		// Every way out of the LRU (eviction, Remove, Purge) uncharges the entry.
		l, err := lru.NewWithEvict(n, func(_ string, e *Entry) {
			if b := e.charged.Swap(notResident); b > 0 {
				s.bytes.Add(-b)
			}
		})
		if err != nil {
			return nil, err // unreachable: n >= 1
		}
		s.lru = l
		s.cap = n
		s.budget = cfg.Bytes / int64(cfg.Shards)
		if i < int(cfg.Bytes%int64(cfg.Shards)) {
			s.budget++
		}
		c.shards[i].flights.Store(new(singleflight.Group))
		c.capacity += n
	}
	return c, nil
}

// shardFor picks the shard by a seeded hash of the key bytes; the seed is per Cache,
// so keys cannot be chosen to pile onto one shard's lock.
func (c *Cache) shardFor(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)&c.mask]
}

// Get returns the entry for the storage key, loading it on a miss. A not-found
// handle is an entry with Found=false, not an error; errors come only from the
// Source (as *LoadError) and are not cached.
//
// Get does not retain key; the caller may reuse it once Get returns, but must not
// modify it during the call. The returned *Entry is shared and must not be modified.
//
// A hit allocates nothing. Concurrent misses for one key make one Source.Load; if
// the key is not found and Config.Alt gives another key, that key is loaded too and
// the result is cached under the requested key.
func (c *Cache) Get(key []byte) (*Entry, error) {
	// The lookup uses key's bytes as a string without copying. This is safe because
	// the string does not outlive the lookup: hashing reads it, and lru.Get only
	// indexes its map and moves the hit to the front (it stores no key; only Add
	// does). A miss makes its own copy below before anything can keep it.
	k := unsafeconv.String(key)
	s := c.shardFor(k)
	if e, ok := s.lru.Get(k); ok && c.fresh(e) {
		s.hits.Add(1)
		return e, nil
	}
	s.misses.Add(1)
	return c.load(s, string(key))
}

// fresh reports whether e may still be served. The clock is read only for entries
// that age, so a hit on a found record without MaxAge never calls Now.
func (c *Cache) fresh(e *Entry) bool {
	return !e.ages || c.now().UnixNano() < e.expiry
}

func (c *Cache) load(s *shard, key string) (*Entry, error) {
	v, err, _ := s.flights.Load().Do(key, func() (any, error) { return c.fill(s, key) })
	if err != nil {
		return nil, err
	}
	return v.(*Entry), nil
}

// fill runs once per flight: it loads key (and its Alt), builds the entry and
// publishes it unless the key was invalidated while it was loading.
func (c *Cache) fill(s *shard, key string) (*Entry, error) {
	// Capture the generation before reading the Source: an Invalidate after this
	// point (a write that the loaded record may predate) bumps it, and then the
	// entry is returned to this flight's callers but not published.
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()

	// A flight that finished between this caller's miss and its Do has already
	// published the entry; don't load again.
	if e, ok := s.lru.Peek(key); ok && c.fresh(e) {
		return e, nil
	}

	rec, derived, found, err := c.loadSource(key)
	if err != nil {
		return nil, &LoadError{Key: key, Err: err}
	}
	foundKey := key
	if !found && c.alt != nil {
		if alt, ok := c.alt(nil, []byte(key)); ok && string(alt) != key {
			altKey := string(alt)
			rec, derived, found, err = c.loadSource(altKey)
			if err != nil {
				return nil, &LoadError{Key: altKey, Err: err}
			}
			if found {
				foundKey = altKey
			}
		}
	}
	e := c.build(s, key, foundKey, rec, derived, found)

	s.mu.Lock()
	if s.gen == gen {
		// An entry still under key is stale (fresh ones returned above). Adding
		// over it would drop it without the eviction callback, so it would stay
		// charged: remove it first.
		if old, ok := s.lru.Peek(key); ok {
			s.lru.Remove(key)
			if !c.fresh(old) {
				s.expired.Add(1)
			}
		} else if !c.admit(s, key, e) {
			s.mu.Unlock()
			s.notAdmitted.Add(1)
			return e, nil
		}
		e.charged.Store(e.size.Load())
		s.bytes.Add(e.size.Load())
		if s.lru.Add(key, e) {
			// Counted here rather than in the eviction callback: that callback
			// also fires for Remove and Purge, i.e. for invalidations.
			s.evictions.Add(1)
		}
		s.trim()
	}
	s.mu.Unlock()
	return e, nil
}

// admit reports whether the loaded entry e for key goes into shard s, which
// holds no entry under key: always while s has room for it, else only as the
// doorkeeper decides. s.mu must be held.
func (c *Cache) admit(s *shard, key string, e *Entry) bool {
	if c.admitAll || (s.lru.Len() < s.cap && s.bytes.Load()+e.size.Load() <= s.budget) {
		return true
	}
	before := s.dk.bytes()
	ok := s.dk.admit(maphash.String(c.seed, key), s.lru.Len())
	if after := s.dk.bytes(); after != before {
		s.bytes.Add(after - before)
	}
	return ok
}

// trim evicts the shard's least recently used entries until its charged bytes
// are within its budget. s.mu must be held.
func (s *shard) trim() {
	for s.bytes.Load() > s.budget {
		if _, _, ok := s.lru.RemoveOldest(); !ok {
			return
		}
		s.evictedBytes.Add(1)
	}
}

// loadSource reads key from the Source, with its derived part if the Source keeps
// one.
func (c *Cache) loadSource(key string) (handlev.Record, handlev.Derived, bool, error) {
	if c.dsrc != nil {
		return c.dsrc.LoadDerived(key)
	}
	rec, found, err := c.src.Load(key)
	return rec, nil, found, err
}

// build makes the immutable entry: the public view first, Render last. The encodings are left to
// JSONBytes and WireBytes, which build them on first use.
func (c *Cache) build(s *shard, lruKey, key string, rec handlev.Record, derived handlev.Derived, found bool) *Entry {
	e := &Entry{Key: key, Found: found, Public: handlev.Public{Target: -1}, s: s}
	e.charged.Store(notResident)
	if found {
		e.Record = rec
		e.Derived = derived
		e.Public = handlev.NewPublic(&e.Record)
		e.Status = e.Public.Status
	}
	e.size.Store(baseSize(key, lruKey, &e.Record, e.Derived, &e.Public))
	// The clock is read only for entries that age: a found record without
	// MaxAge (nearly every miss) never needs it, and reading it is not free.
	switch {
	case !found:
		e.ages, e.expiry = true, c.now().UnixNano()+c.negTTL
	case c.maxAge > 0:
		e.ages, e.expiry = true, c.now().UnixNano()+c.maxAge
	}
	if c.render != nil {
		e.View = c.render(e)
	}
	return e
}

// Invalidate removes key and its Alt counterpart (short ↔ full form), so the next
// Get loads from the Source. A load of either key that is in flight when Invalidate
// is called does not publish its result, and Gets that start after Invalidate
// returns do not wait for that load. Admin calls it after every committed write.
func (c *Cache) Invalidate(key string) {
	c.invalidate(key)
	if c.alt != nil {
		if alt, ok := c.alt(nil, []byte(key)); ok {
			c.invalidate(string(alt))
		}
	}
}

func (c *Cache) invalidate(key string) {
	s := c.shardFor(key)
	s.mu.Lock()
	s.gen++
	if s.lru.Remove(key) {
		s.invalidated.Add(1)
	}
	s.mu.Unlock()
	s.flights.Load().Forget(key)
}

// InvalidateAll empties the cache (e.g. after an import or a restore), with the
// same guarantee about in-flight loads as Invalidate.
func (c *Cache) InvalidateAll() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.gen++
		s.invalidated.Add(uint64(s.lru.Len()))
		s.lru.Purge()
		s.bytes.Add(-s.dk.bytes())
		s.dk = doorkeeper{}
		s.flights.Store(new(singleflight.Group))
		s.mu.Unlock()
	}
}

// Len returns the number of entries held, fresh or expired-but-not-yet-reloaded.
func (c *Cache) Len() int {
	n := 0
	for i := range c.shards {
		n += c.shards[i].lru.Len()
	}
	return n
}

// Stats returns the counters summed over shards. Each counter is read atomically,
// but the snapshot as a whole is not.
func (c *Cache) Stats() Stats {
	var st Stats
	for i := range c.shards {
		s := &c.shards[i]
		st.Hits += s.hits.Load()
		st.Misses += s.misses.Load()
		st.Evictions += s.evictions.Load() + s.evictedBytes.Load()
		st.Entries += s.lru.Len()
	}
	return st
}

// Usage returns the memory accounting and eviction causes summed over shards,
// each read atomically (the snapshot as a whole is not).
func (c *Cache) Usage() Usage {
	u := Usage{Budget: c.budget}
	for i := range c.shards {
		s := &c.shards[i]
		u.Bytes += s.bytes.Load()
		u.Entries += s.lru.Len()
		u.EvictedBytes += s.evictedBytes.Load()
		u.Invalidated += s.invalidated.Load()
		u.Expired += s.expired.Load()
		u.EvictedEntries += s.evictions.Load()
		u.NotAdmitted += s.notAdmitted.Load()
	}
	return u
}
