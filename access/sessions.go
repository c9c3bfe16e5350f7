package access

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"pidnode/internal/cfgerr"
	"pidnode/registry"
)

// Console sessions (docs/product.md §4.2): a key is exchanged for a
// server-side session whose token only the browser holds; only the token's
// SHA-256 is stored, in the replicated sessions bucket, written through the
// Writer like every other write, so a session started on one node of a
// cluster is valid on all of them.
//
// Every look-up of a session looks its key up again (through Keys, whose
// cache every key change invalidates), so that a revoked key's sessions end
// on the next request. Idle expiry is checked against the later of the
// stored last-seen time, written at most once per SessionRefresh, and this
// node's own memory of the session's last use: a session costs one write
// per minute of use, not one per request, and the idle limit is exact to
// within SessionRefresh across nodes.

const (
	// DefaultSessionIdle and DefaultSessionMax are the idle and absolute
	// session lifetimes.
	DefaultSessionIdle = 30 * time.Minute
	DefaultSessionMax  = 12 * time.Hour
	// SessionRefresh is how often a session's last-seen time is written.
	SessionRefresh = time.Minute
)

// Writer commits session writes: the registry, or a cluster node.
type Writer interface {
	Update(fn func(tx registry.Tx) error) error
}

// SessionsConfig configures Sessions.
type SessionsConfig struct {
	// Registry holds the sessions; Writer writes them (if nil, Registry).
	// Keys looks a session's key up. Registry and Keys are required.
	Registry *registry.Registry
	Writer   Writer
	Keys     *Keys
	// Idle and Max are the idle and absolute lifetimes; if zero,
	// DefaultSessionIdle and DefaultSessionMax.
	Idle, Max time.Duration
	// Now is the clock (if nil, time.Now); Rand the source of tokens (if
	// nil, crypto/rand).
	Now  func() time.Time
	Rand io.Reader
	// Logger receives the failures of best-effort writes (last use, end);
	// if nil, they are discarded.
	Logger *slog.Logger
}

// Sessions starts, finds and ends console sessions. Safe for concurrent use.
type Sessions struct {
	reg       *registry.Registry
	w         Writer
	keys      *Keys
	idle, max time.Duration
	now       func() time.Time
	rnd       io.Reader
	log       *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time // this node's last use of each session, by token hash
}

// NewSessions returns the Sessions of cfg.
func NewSessions(cfg SessionsConfig) (*Sessions, error) {
	switch {
	case cfg.Registry == nil:
		return nil, cfgerr.Required("access", "Registry", ErrConfig)
	case cfg.Keys == nil:
		return nil, cfgerr.Required("access", "Keys", ErrConfig)
	}
	s := &Sessions{reg: cfg.Registry, w: cfg.Writer, keys: cfg.Keys, idle: cfg.Idle, max: cfg.Max,
		now: cfg.Now, rnd: cfg.Rand, log: cfg.Logger, seen: map[string]time.Time{}}
	if s.w == nil {
		s.w = cfg.Registry
	}
	if s.idle <= 0 {
		s.idle = DefaultSessionIdle
	}
	if s.max <= 0 {
		s.max = DefaultSessionMax
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Session is a found session: the operator's, an SNAA key's, or a
// person's (of an SNAA, or with Operator of the operator's).
type Session struct {
	Operator bool
	// SNAA and Key are the SNAA's records (not for the operator). For a
	// person, Key is only its admission identity: ID and SNAAID the
	// person's, no hash, no name.
	SNAA registry.SNAA
	Key  registry.Key
	// Person is the signed-in person, without its secrets; nil for a
	// key's session.
	Person *registry.PersonView
	// Hash is the token's hash (what is stored), Token the token itself.
	Hash, Token string
}

// CSRF is the CSRF token of the session: derived from its token, which only
// the browser holding the cookie knows, so that no node needs to store it.
func (s *Session) CSRF() string { return CSRFToken(s.Token) }

// CSRFToken is the CSRF token of the session whose token is tok.
func CSRFToken(tok string) string {
	m := hmac.New(sha256.New, []byte(tok))
	io.WriteString(m, "pidnode console csrf")
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TokenHash is what is stored of a session token.
func TokenHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// Start stores a new session for sess (its Operator, SNAAID, KeyID and
// KeyHash set by the caller, who has checked the key, or its PersonID and
// SNAAID, for a person the caller has signed in) and returns its
// token. Sessions that have expired are deleted in the same transaction.
func (s *Sessions) Start(sess registry.Session) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	hash := TokenHash(tok)
	now := s.now().UTC()
	sess.Created, sess.Seen, sess.Expires = now, now, now.Add(s.max)
	idle := s.idle
	err := s.w.Update(func(tx registry.Tx) error {
		if _, err := tx.DeleteSessions(100, func(_ string, x *registry.Session) bool {
			return !now.Before(x.Expires) || now.Sub(x.Seen) >= idle+SessionRefresh
		}); err != nil {
			return err
		}
		return tx.PutSession(hash, &sess)
	})
	if err != nil {
		return "", err
	}
	s.touch(hash, now)
	return tok, nil
}

// Lookup returns the session whose token is tok. A session that is not
// stored fails with ErrSessionUnknown; one that has expired, been idle too
// long, or whose key was revoked (or whose operator key changed) is ended
// and fails with ErrSessionExpired, ErrSessionIdle, ErrSessionKeyRevoked or
// ErrSessionOperatorChanged; a person's whose person was removed (or whose
// SNAA is gone) with ErrSessionPersonRemoved. Other errors are the
// registry's. A person is read in the transaction that finds the session,
// never from a cache: a removal applied on this node (from any node of a
// cluster) ends the session on its next request.
func (s *Sessions) Lookup(tok string) (*Session, error) {
	hash := TokenHash(tok)
	var (
		sess      registry.Session
		ok        bool
		person    registry.Person
		personOK  bool
		personSN  registry.SNAA
		personSNs bool
	)
	err := s.reg.View(func(tx registry.Tx) (err error) {
		if sess, ok, err = tx.Session(hash); err != nil || !ok || sess.PersonID == "" {
			return err
		}
		if person, personOK, err = tx.People().Person(sess.PersonID); err != nil || !personOK || person.SNAAID == "" {
			return err
		}
		personSN, personSNs, err = tx.SNAA(person.SNAAID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrSessionUnknown
	}
	now := s.now()
	last := sess.Seen
	if m := s.lastSeen(hash); m.After(last) {
		last = m
	}
	end := func(why error) (*Session, error) {
		s.End(hash)
		return nil, why
	}
	switch {
	case !now.Before(sess.Expires):
		return end(ErrSessionExpired)
	case now.Sub(last) >= s.idle:
		return end(ErrSessionIdle)
	}
	u := &Session{Operator: sess.Operator, Hash: hash, Token: tok}
	if sess.PersonID != "" {
		if !personOK || person.SNAAID != sess.SNAAID || (person.SNAAID != "" && !personSNs) {
			return end(ErrSessionPersonRemoved)
		}
		v := person.View()
		u.Person, u.Operator = &v, person.SNAAID == ""
		if !u.Operator {
			u.SNAA, u.Key = personSN, registry.Key{ID: person.ID, SNAAID: person.SNAAID}
		}
	} else if sess.Operator {
		if !s.keys.IsOperatorHash(sess.KeyHash) {
			return end(ErrSessionOperatorChanged)
		}
	} else {
		sum, err := hex.DecodeString(sess.KeyHash)
		if err != nil || len(sum) != 32 {
			return end(ErrSessionUnknown)
		}
		k, sn, err := s.keys.LookupSum([32]byte(sum))
		if err != nil {
			if errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrRevokedKey) {
				return end(ErrSessionKeyRevoked)
			}
			return nil, err
		}
		u.SNAA, u.Key = sn, k
	}
	s.touch(hash, now)
	if now.Sub(sess.Seen) >= SessionRefresh {
		sess.Seen = now.UTC()
		err := s.w.Update(func(tx registry.Tx) error {
			cur, ok, err := tx.Session(hash)
			if err != nil || !ok || !cur.Seen.Before(sess.Seen) {
				return err
			}
			cur.Seen = sess.Seen
			return tx.PutSession(hash, &cur)
		})
		if err != nil {
			// The session goes on; the next request tries again.
			s.log.Warn("recording a console session's last use", "err", err)
		}
	}
	return u, nil
}

// End deletes the session whose token hashes to hash (best effort: an
// ended session that stays stored is refused all the same by its expiry or
// its key).
func (s *Sessions) End(hash string) {
	s.mu.Lock()
	delete(s.seen, hash)
	s.mu.Unlock()
	if err := s.w.Update(func(tx registry.Tx) error { return tx.DeleteSession(hash) }); err != nil {
		s.log.Warn("deleting a console session", "err", err)
	}
}

func (s *Sessions) lastSeen(hash string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[hash]
}

func (s *Sessions) touch(hash string, t time.Time) {
	s.mu.Lock()
	if len(s.seen) > 100000 {
		s.seen = map[string]time.Time{}
	}
	s.seen[hash] = t
	s.mu.Unlock()
}
