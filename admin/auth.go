package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/registry"
	"pidnode/write"
)

// KeyPrefix starts every SNAA API key; KeyRandomBytes of randomness follow in
// lower-case base32 without padding (docs/product.md §4.1).
const (
	KeyPrefix      = "pid_"
	KeyRandomBytes = 32
)

var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// keySecretLen is the length of a well-formed key: "pid_" + 52 base32 characters.
var keySecretLen = len(KeyPrefix) + keyEncoding.EncodedLen(KeyRandomBytes)

// newSecret returns a fresh key secret.
func newSecret(rnd io.Reader) (string, error) {
	var b [KeyRandomBytes]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("admin: key randomness: %w", err)
	}
	return KeyPrefix + strings.ToLower(keyEncoding.EncodeToString(b[:])), nil
}

// wellFormedKey reports whether tok has the shape of a key secret.
func wellFormedKey(tok string) bool {
	if len(tok) != keySecretLen || !strings.HasPrefix(tok, KeyPrefix) {
		return false
	}
	_, err := keyEncoding.DecodeString(strings.ToUpper(tok[len(KeyPrefix):]))
	return err == nil
}

func hashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// newID returns prefix + 10 random lower-case base32 characters.
func (s *Server) newID(prefix string) (string, error) {
	var b [10]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return "", err
	}
	const alpha = "0123456789abcdefghjkmnpqrstvwxyz"
	for i := range b {
		b[i] = alpha[b[i]&31]
	}
	return prefix + string(b[:]), nil
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, *Problem) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", problem(http.StatusUnauthorized, "send your API key as Authorization: Bearer <key>").
			with("WWW-Authenticate", `Bearer realm="pidnode"`)
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", problem(http.StatusUnauthorized, "the Authorization header must be \"Bearer <key>\"").
			with("WWW-Authenticate", `Bearer realm="pidnode", error="invalid_request"`)
	}
	return strings.TrimSpace(tok), nil
}

func invalidToken(detail string) *Problem {
	return problem(http.StatusUnauthorized, "%s", detail).
		with("WWW-Authenticate", `Bearer realm="pidnode", error="invalid_token"`)
}

// isOperator reports whether tok is the operator key (constant time).
func (s *Server) isOperator(tok string) bool {
	h := hashSecret(tok)
	return subtle.ConstantTimeCompare(h[:], s.opHash[:]) == 1
}

// op wraps an operator route: only the operator key passes.
func (s *Server) op(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		tok, p := bearer(r)
		if p != nil {
			return p
		}
		if s.isOperator(tok) {
			return h(w, r)
		}
		if wellFormedKey(tok) {
			if _, _, err := s.lookupKey(tok); err == nil {
				return problem(http.StatusForbidden, "operator routes need the operator key; this is an SNAA key")
			} else if _, ok := err.(*Problem); !ok {
				return err
			}
		}
		return invalidToken("the key is not the operator key")
	}
}

type ctxKey int

const authKey ctxKey = 0

// principal is the authenticated SNAA of a request.
type principal struct {
	snaa SNAA
	key  Key
}

func (p *principal) actor() string { return "snaa:" + p.snaa.ID + " key:" + p.key.ID }

// writer is p as the write service's Actor.
func (p *principal) writer() *write.Actor { return &write.Actor{SNAA: p.snaa, Key: p.key} }

func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(authKey).(*principal)
	return p
}

// snaa wraps an SNAA route: a valid, unrevoked key of a SNAA that is not suspended.
func (s *Server) snaa(b *base, h func(w http.ResponseWriter, r *http.Request, b *base) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		tok, p := bearer(r)
		if p != nil {
			return p
		}
		if s.isOperator(tok) {
			return problem(http.StatusForbidden, "the operator key cannot write identifiers; use an SNAA's key")
		}
		if !wellFormedKey(tok) {
			return invalidToken(fmt.Sprintf("malformed key: an API key is %q followed by %d base32 characters", KeyPrefix, keySecretLen-len(KeyPrefix)))
		}
		if err := s.syncBeforeAuth(r); err != nil {
			return err
		}
		k, sn, err := s.lookupKey(tok)
		if err != nil {
			return err
		}
		ctx, err := s.admit(r, k, sn)
		if err != nil {
			return err
		}
		return h(w, r.WithContext(ctx), b)
	}
}

// admit is what an SNAA request passes once its key is found (by bearer
// key, or by a console session's key hash): the SNAA is not suspended, the
// key's use is noted, the rate limit charged, writes are possible. It
// returns the request's context with the principal.
func (s *Server) admit(r *http.Request, k Key, sn SNAA) (context.Context, error) {
	if sn.Suspended {
		return nil, problem(http.StatusForbidden, "SNAA %s is suspended; contact the operator", sn.ID)
	}
	s.touchKey(k.Hash)
	// A bulk is charged by the number of its items, once they are
	// counted (bulk.go); every other request costs one token here.
	if !isBulk(r) {
		if err := s.limit(k.ID, sn.ID); err != nil {
			return nil, err
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.checkWritable(); err != nil {
			return nil, err
		}
	}
	return context.WithValue(r.Context(), authKey, &principal{snaa: sn, key: k}), nil
}

// lookupKey finds the key record by the secret's hash and its SNAA. Unknown and
// revoked keys are 401. The hash is the bucket key; the stored hash is compared
// again in constant time so that the decision never rests on a variable-time
// comparison of secret-derived bytes.
//
// Found keys are remembered in s.auth (see authCache), so a busy key costs no
// read transaction and no JSON decoding per request.
func (s *Server) lookupKey(tok string) (Key, SNAA, error) { return s.lookupKeySum(hashSecret(tok)) }

// lookupKeySum is lookupKey by the SHA-256 of the secret (a console session
// holds only that).
func (s *Server) lookupKeySum(sum [32]byte) (Key, SNAA, error) {
	if k, sn, ok := s.auth.get(sum); ok {
		return k, sn, nil
	}
	gen := s.auth.gen.Load() // before the read: a change committed later bumps it
	hx := hex.EncodeToString(sum[:])
	var (
		k     Key
		sn    SNAA
		found bool
	)
	err := s.reg.View(func(tx registry.Tx) error {
		var ok bool
		var err error
		if k, ok, err = tx.KeyByHash(hx); err != nil || !ok {
			return err
		}
		stored, err := hex.DecodeString(k.Hash)
		if err != nil || subtle.ConstantTimeCompare(stored, sum[:]) != 1 {
			return nil
		}
		sn, found, err = tx.SNAA(k.SNAAID)
		return err
	})
	if err != nil {
		return Key{}, SNAA{}, err
	}
	if !found {
		return Key{}, SNAA{}, invalidToken("unknown API key")
	}
	if k.Revoked != nil {
		return Key{}, SNAA{}, invalidToken("this API key was revoked on " + k.Revoked.UTC().Format(time.RFC3339))
	}
	s.auth.put(gen, sum, k, sn)
	return k, sn, nil
}

// authCacheMax bounds the auth cache; when full it starts over.
const authCacheMax = 4096

// authCache holds the key and SNAA records of valid keys, by secret hash. An
// entry is good only while gen has not moved since the read it came from:
// every operator write that may change a key or an SNAA (approve, issue,
// revoke, suspend, prefix change, …) bumps gen after its commit and before its
// reply (see Server.updateAuth), so a revocation or suspension takes effect on
// the very next request, as without the cache. Unknown and revoked keys are
// not cached: they are looked up every time.
//
// Every bump also closes the channel changes handed out, so that open event
// streams look their key up again at once rather than at their next
// heartbeat.
type authCache struct {
	gen atomic.Uint64
	mu  sync.RWMutex
	m   map[[32]byte]authEntry

	chMu    sync.Mutex
	changed chan struct{} // nil until someone waits
}

// bump invalidates every cached entry and wakes the waiters of changes.
// Call it after the change has committed, so that a woken waiter reads it.
func (c *authCache) bump() {
	c.gen.Add(1)
	c.chMu.Lock()
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.chMu.Unlock()
}

// changes returns a channel closed at the next bump.
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
	k   Key
	sn  SNAA
}

// get returns the cached records of the key whose secret hashes to sum, if
// current. The stored hash is compared in constant time, as in lookupKey.
func (c *authCache) get(sum [32]byte) (Key, SNAA, bool) {
	gen := c.gen.Load()
	c.mu.RLock()
	e, ok := c.m[sum]
	c.mu.RUnlock()
	if !ok || e.gen != gen {
		return Key{}, SNAA{}, false
	}
	stored, err := hex.DecodeString(e.k.Hash)
	if err != nil || subtle.ConstantTimeCompare(stored, sum[:]) != 1 {
		return Key{}, SNAA{}, false
	}
	return e.k, e.sn, true
}

// put remembers a key read when the generation was gen.
func (c *authCache) put(gen uint64, sum [32]byte, k Key, sn SNAA) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= authCacheMax {
		c.m = make(map[[32]byte]authEntry)
	}
	c.m[sum] = authEntry{gen: gen, k: k, sn: sn}
	c.mu.Unlock()
}

// updateAuth is store.Update for the operator writes that may change keys or
// SNAAs: after the transaction (committed or not) it invalidates the auth cache.
func (s *Server) updateAuth(fn func(tx registry.Tx) error) error {
	defer s.auth.bump()
	return s.w.Update(fn)
}

// touchKey notes a key's use in memory; the times reach the database at most
// once per LastUsedInterval, so authentication costs no write.
func (s *Server) touchKey(hash string) {
	now := s.now()
	lu := &s.lastUsed
	lu.mu.Lock()
	lu.pending[hash] = now
	due := !lu.flushing && now.Sub(lu.lastFlush) >= s.luEvery
	if due {
		lu.flushing = true
		lu.lastFlush = now
	}
	lu.mu.Unlock()
	if due {
		go func() {
			if err := s.flushLastUsed(); err != nil {
				s.log.Warn("writing key last-used times", "err", err)
			}
		}()
	}
}

// flushLastUsed writes the pending last-used times.
func (s *Server) flushLastUsed() error {
	lu := &s.lastUsed
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
	return s.reg.Update(func(tx registry.Tx) error { return tx.SetLastUsed(p) })
}

// pendingLastUsed returns the in-memory last-used time of a key, if newer.
func (s *Server) pendingLastUsed(k *Key) {
	s.lastUsed.mu.Lock()
	t, ok := s.lastUsed.pending[k.Hash]
	s.lastUsed.mu.Unlock()
	if ok && (k.LastUsed == nil || t.After(*k.LastUsed)) {
		t := t.UTC()
		k.LastUsed = &t
	}
}
