package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/internal/cfgerr"
	"pidnode/registry"
)

// DefaultLastUsedInterval is how often, at most, the keys' last-used times
// are written when Config.LastUsedInterval is zero.
const DefaultLastUsedInterval = time.Minute

// Config configures Keys.
type Config struct {
	// Registry holds the keys and SNAAs. Required.
	Registry *registry.Registry
	// Writer commits the writes of keys (Issue, Revoke, Update): the
	// registry, or a cluster node. If nil, Registry.
	Writer Writer
	// Rand is the source of key secrets and ids; if nil, crypto/rand.
	Rand io.Reader
	// OperatorKey is the operator's secret; only its hash is kept.
	OperatorKey string
	// LastUsedInterval: a key's use is written at most this often; if
	// zero, DefaultLastUsedInterval.
	LastUsedInterval time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time
	// Logger receives the failures of background writes; if nil, they
	// are discarded.
	Logger *slog.Logger
}

// Keys answers who a secret (or its hash) is: the operator, an SNAA's key,
// or nobody. Found keys are cached; Invalidate drops the cache after any
// change of keys or SNAAs. It also batches the keys' last-used times in
// memory. Safe for concurrent use.
type Keys struct {
	reg     *registry.Registry
	w       Writer
	rnd     io.Reader
	opHash  [32]byte
	now     func() time.Time
	log     *slog.Logger
	luEvery time.Duration
	cache   authCache
	lu      lastUsed
}

// New returns the Keys of cfg.
func New(cfg Config) (*Keys, error) {
	if cfg.Registry == nil {
		return nil, cfgerr.Required("access", "Registry", ErrConfig)
	}
	k := &Keys{reg: cfg.Registry, w: cfg.Writer, rnd: cfg.Rand, opHash: Hash(cfg.OperatorKey), now: cfg.Now, log: cfg.Logger, luEvery: cfg.LastUsedInterval}
	if k.w == nil {
		k.w = cfg.Registry
	}
	if k.rnd == nil {
		k.rnd = rand.Reader
	}
	if k.now == nil {
		k.now = time.Now
	}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	if k.luEvery <= 0 {
		k.luEvery = DefaultLastUsedInterval
	}
	k.lu.pending = map[string]time.Time{}
	return k, nil
}

// IsOperator reports whether tok is the operator key (constant time).
func (k *Keys) IsOperator(tok string) bool {
	h := Hash(tok)
	return subtle.ConstantTimeCompare(h[:], k.opHash[:]) == 1
}

// OperatorHash is the operator key's hash in hex, as a session stores it.
func (k *Keys) OperatorHash() string { return hex.EncodeToString(k.opHash[:]) }

// IsOperatorHash reports whether hx is OperatorHash (constant time).
func (k *Keys) IsOperatorHash(hx string) bool {
	return subtle.ConstantTimeCompare([]byte(hx), []byte(k.OperatorHash())) == 1
}

// Lookup finds the key record by the secret's hash and its SNAA. It fails
// with ErrUnknownKey or a *RevokedError, or with the registry's error. The
// hash is the bucket key; the stored hash is compared again in constant
// time so that the decision never rests on a variable-time comparison of
// secret-derived bytes.
//
// Found keys are cached, so a busy key costs no read transaction and no
// JSON decoding per request.
func (k *Keys) Lookup(tok string) (registry.Key, registry.SNAA, error) {
	return k.LookupSum(Hash(tok))
}

// LookupSum is Lookup by the SHA-256 of the secret (a console session holds
// only that).
func (k *Keys) LookupSum(sum [32]byte) (registry.Key, registry.SNAA, error) {
	if key, sn, ok := k.cache.get(sum); ok {
		return key, sn, nil
	}
	gen := k.cache.gen.Load() // before the read: a change committed later bumps it
	hx := hex.EncodeToString(sum[:])
	var (
		key   registry.Key
		sn    registry.SNAA
		found bool
	)
	err := k.reg.View(func(tx registry.Tx) error {
		var ok bool
		var err error
		if key, ok, err = tx.KeyByHash(hx); err != nil || !ok {
			return err
		}
		stored, err := hex.DecodeString(key.Hash)
		if err != nil || subtle.ConstantTimeCompare(stored, sum[:]) != 1 {
			return nil
		}
		sn, found, err = tx.SNAA(key.SNAAID)
		return err
	})
	if err != nil {
		return registry.Key{}, registry.SNAA{}, err
	}
	if !found {
		return registry.Key{}, registry.SNAA{}, ErrUnknownKey
	}
	if key.Revoked != nil {
		return registry.Key{}, registry.SNAA{}, &RevokedError{At: *key.Revoked}
	}
	k.cache.put(gen, sum, key, sn)
	return key, sn, nil
}

// Invalidate drops the cached keys and SNAAs and closes the channel Changes
// handed out. Call it after every committed change that may touch a key or
// an SNAA (approve, issue, revoke, suspend, prefix change, …, or another
// cluster node's), so that a revocation or suspension takes effect on the
// very next request.
func (k *Keys) Invalidate() { k.cache.bump() }

// Changes returns a channel closed at the next Invalidate, so that open
// event streams look their key up again at once.
func (k *Keys) Changes() <-chan struct{} { return k.cache.changes() }

// authCacheMax bounds the auth cache; when full it starts over.
const authCacheMax = 4096

// authCache holds the key and SNAA records of valid keys, by secret hash. An
// entry is good only while gen has not moved since the read it came from.
// Unknown and revoked keys are not cached: they are looked up every time.
type authCache struct {
	gen atomic.Uint64
	mu  sync.RWMutex
	m   map[[32]byte]authEntry

	chMu    sync.Mutex
	changed chan struct{} // nil until someone waits
}

func (c *authCache) bump() {
	c.gen.Add(1)
	c.chMu.Lock()
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.chMu.Unlock()
}

func (c *authCache) changes() <-chan struct{} {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

type authEntry struct {
	gen uint64
	k   registry.Key
	sn  registry.SNAA
}

// get returns the cached records of the key whose secret hashes to sum, if
// current. The stored hash is compared in constant time, as in LookupSum.
func (c *authCache) get(sum [32]byte) (registry.Key, registry.SNAA, bool) {
	gen := c.gen.Load()
	c.mu.RLock()
	e, ok := c.m[sum]
	c.mu.RUnlock()
	if !ok || e.gen != gen {
		return registry.Key{}, registry.SNAA{}, false
	}
	stored, err := hex.DecodeString(e.k.Hash)
	if err != nil || subtle.ConstantTimeCompare(stored, sum[:]) != 1 {
		return registry.Key{}, registry.SNAA{}, false
	}
	return e.k, e.sn, true
}

func (c *authCache) put(gen uint64, sum [32]byte, k registry.Key, sn registry.SNAA) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= authCacheMax {
		c.m = make(map[[32]byte]authEntry)
	}
	c.m[sum] = authEntry{gen: gen, k: k, sn: sn}
	c.mu.Unlock()
}

// lastUsed batches key last-used times in memory (keyed by key hash).
type lastUsed struct {
	flushMu   sync.Mutex // one Flush at a time
	mu        sync.Mutex
	pending   map[string]time.Time
	lastFlush time.Time
	flushing  bool
}

// Touch notes a key's use (by its hash) in memory; the times reach the
// database at most once per LastUsedInterval, so authentication costs no
// write.
func (k *Keys) Touch(hash string) {
	now := k.now()
	lu := &k.lu
	lu.mu.Lock()
	lu.pending[hash] = now
	due := !lu.flushing && now.Sub(lu.lastFlush) >= k.luEvery
	if due {
		lu.flushing = true
		lu.lastFlush = now
	}
	lu.mu.Unlock()
	if due {
		go func() {
			if err := k.Flush(); err != nil {
				k.log.Warn("writing key last-used times", "err", err)
			}
		}()
	}
}

// Flush writes the pending last-used times. It waits for a flush under
// way, so that after it returns no time noted before it is still unwritten.
func (k *Keys) Flush() error {
	lu := &k.lu
	lu.flushMu.Lock()
	defer lu.flushMu.Unlock()
	lu.mu.Lock()
	p := lu.pending
	lu.pending = map[string]time.Time{}
	lu.mu.Unlock()
	defer func() {
		lu.mu.Lock()
		lu.flushing = false
		lu.mu.Unlock()
	}()
	if len(p) == 0 {
		return nil
	}
	return k.reg.Update(func(tx registry.Tx) error { return tx.SetLastUsed(p) })
}

// WithPending sets key.LastUsed to the in-memory last-used time, if newer
// than the stored one.
func (k *Keys) WithPending(key *registry.Key) {
	k.lu.mu.Lock()
	t, ok := k.lu.pending[key.Hash]
	k.lu.mu.Unlock()
	if ok && (key.LastUsed == nil || t.After(*key.LastUsed)) {
		t := t.UTC()
		key.LastUsed = &t
	}
}
