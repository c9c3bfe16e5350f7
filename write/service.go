package write

import (
	"crypto/rand"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/model"
	"pidnode/registry"
)

// Writer commits writes: identifier writes (CommitAs, which may group
// concurrent callers, owner and cost as registry.CommitAs) and operator
// writes (Update). On a single node it is the database's own registry; a
// cluster node (docs/product.md §10) supplies one that sends the writes
// through etcd and returns once they are applied locally. The functions
// passed must be idempotent and keep every effect inside tx, as
// registry.Commit requires.
type Writer interface {
	CommitAs(owner string, cost int, fn func(tx registry.Tx) error) error
	Update(fn func(tx registry.Tx) error) error
}

// Invalidator drops cached views of a record after a write so that the next
// resolution reads the new version (docs/product.md §5 read-your-writes).
// *cache.Cache satisfies it; Invalidate must also drop the key's alternate
// (short/full) form.
type Invalidator interface {
	Invalidate(key string)
}

// Config configures New.
type Config struct {
	// Registry reads the admin buckets (a bulk's look-up of existing ids).
	// Required.
	Registry *registry.Registry
	// Writer commits the writes. If nil, Registry commits them.
	Writer Writer
	// Namer makes display handles and storage keys. Required.
	Namer *handlev.Namer
	// Model checks payloads and builds records. Required.
	Model *model.Model
	// Invalidator is told about every written key after the commit. Nil
	// means no cache.
	Invalidator Invalidator
	// ReservedID, if set, reports whether a custom id is reserved by the
	// caller's routes, and the message the refusal carries.
	ReservedID func(id string) (msg string, reserved bool)
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Rand is the randomness of generated ids. If nil, crypto/rand. It must
	// be safe for concurrent use (ids are minted outside the transaction).
	Rand io.Reader
	// IdempotencyTTL is how long an Idempotency-Key is remembered. If
	// zero, DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// Logger gets a warning when the store refuses a record the checks
	// accepted. Nil discards.
	Logger *slog.Logger
}

// DefaultIdempotencyTTL is Config.IdempotencyTTL's default.
const DefaultIdempotencyTTL = 24 * time.Hour

// MaxBulkItems bounds a bulk (docs/product.md §4).
const MaxBulkItems = 1000

// Service makes identifier writes. It is safe for concurrent use.
type Service struct {
	reg      *registry.Registry
	w        Writer
	namer    *handlev.Namer
	model    *model.Model
	inv      Invalidator
	reserved func(id string) (string, bool)
	now      func() time.Time
	rnd      io.Reader
	idemTTL  time.Duration
	log      *slog.Logger
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Registry == nil:
		return nil, cfgerr.Required("write", "Registry", ErrConfig)
	case cfg.Namer == nil:
		return nil, cfgerr.Required("write", "Namer", ErrConfig)
	case cfg.Model == nil:
		return nil, cfgerr.Required("write", "Model", ErrConfig)
	}
	s := &Service{reg: cfg.Registry, w: cfg.Writer, namer: cfg.Namer, model: cfg.Model, inv: cfg.Invalidator,
		reserved: cfg.ReservedID, now: cfg.Now, rnd: cfg.Rand, idemTTL: cfg.IdempotencyTTL, log: cfg.Logger}
	if s.w == nil {
		s.w = cfg.Registry
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	if s.idemTTL <= 0 {
		s.idemTTL = DefaultIdempotencyTTL
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Actor is the SNAA key, or the SNAA's person, that makes a write, as its
// caller admitted it.
type Actor struct {
	SNAA registry.SNAA
	Key  registry.Key
	// Person is the person whose session makes the write; nil for a
	// key's write (Key is then only the person's admission identity).
	Person *registry.PersonView
}

// Name is the actor of the write's audit entry.
func (a *Actor) Name() string {
	if a.Person != nil {
		return registry.PersonActor(a.SNAA.ID, a.Person.ID)
	}
	return "snaa:" + a.SNAA.ID + " key:" + a.Key.ID
}

// email is the address of the write's person ("" for a key's write).
func (a *Actor) email() string {
	if a.Person == nil {
		return ""
	}
	return a.Person.Email
}

func (a *Actor) agent() model.Agent {
	return model.Agent{Name: a.SNAA.Organisation, EmailAddress: a.SNAA.TechnicalContact.Email, Role: "OWNER"}
}

// Target is the namespace a write goes to: a prefix the Actor may write
// under (canonical upper case) and the Actor's namespace.
type Target struct {
	Prefix, Namespace string
}

// ETag is the entity tag of a record version.
func ETag(v uint64) string { return `"` + strconv.FormatUint(v, 10) + `"` }

// ETagMatches reports whether an If-Match / If-None-Match list (RFC 9110
// §13.1) names version v.
func ETagMatches(h string, v uint64) bool {
	want := ETag(v)
	for _, t := range strings.Split(h, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// invalidate tells the cache about keys written.
func (s *Service) invalidate(keys ...string) {
	if s.inv == nil {
		return
	}
	for _, k := range keys {
		s.inv.Invalidate(k)
	}
}
