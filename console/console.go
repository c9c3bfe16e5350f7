package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"pidnode/access"
	"pidnode/handlev"
	"pidnode/internal/httperr"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/people"
	"pidnode/read"
	"pidnode/registry"
	"pidnode/stats"
	"pidnode/write"
)

// ErrConfig: Config is missing a required field.
var ErrConfig = errors.New("console: invalid configuration")

// DefaultMaxBodyBytes is the limit of a form's JSON payload (as the API's
// request bodies) when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// Config configures New. The services are the same the JSON API is built
// on, so that the console's checks, refusals and writes are the API's.
type Config struct {
	// Namer names the node's prefixes: the production one, and the test
	// one if it has one. Required.
	Namer *handlev.Namer
	// Model is the metadata model the forms are generated from. Required.
	Model *model.Model
	// Registry is read for the operator's pages (SNAAs, the audit log).
	// Required.
	Registry *registry.Registry
	// Keys, Sessions and Admission are who signs in, their sessions and
	// their admission (suspension, rate limits, maintenance). Required.
	Keys      *access.Keys
	Sessions  *access.Sessions
	Admission *access.Admission
	// Writes makes the identifier writes, Read reads them, Operator makes
	// the operator's decisions and takes applications. Required.
	Writes   *write.Service
	Read     *read.Reader
	Operator *operator.Service
	// ApplyLimit and SignInLimit limit the applications and the sign-in
	// (and status) attempts per client address; the JSON API's public
	// route shares ApplyLimit. Required.
	ApplyLimit, SignInLimit *access.AddrLimit
	// Stats reads an identifier's resolutions per day (stats.Service.Read)
	// for its page's chart. If nil, the page shows no chart.
	Stats func(ctx context.Context, t route.Target, id string, from, to time.Time) (*stats.Reply, error)
	// StatsDays is the chart's range (stats.Service.Days); required with
	// Stats.
	StatsDays func() (from, to time.Time)
	// Webhooks, if set, lists the webhook endpoints of namespace ns under
	// prefix and the sequence number of its feed's newest entry
	// (webhook.Views); if nil, the webhooks page says the node has none.
	Webhooks func(prefix, ns string) ([]WebhookView, uint64, error)
	// SyncAuth, if set, is called before a session's key is looked up with
	// no namespace, and after it with the SNAA's namespace (a cluster node
	// catching up with the registry's etcd shard and the namespace's, as
	// the API does).
	SyncAuth func(ctx context.Context, namespace string) error
	// RefuseKeys makes the sign-in page refuse keys sent over plain HTTP
	// (the listener is plain HTTP on a network address).
	RefuseKeys bool
	// MaxBodyBytes bounds a form's JSON payload; if zero,
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// PublicURL is the resolver's base URL, which the index page links.
	PublicURL string
	// Written, if set, is told of identifier writes the console made (the
	// API's write counters).
	Written func(created, updated int)
	// KeyLimited, if set, is told of a key refused by its SNAA's key limit.
	KeyLimited func()
	// People, if set, are the accounts of people (people.go): the people
	// pages, joining by invitation, signing in with a password. OIDC, if
	// set with People, signs people in through the OpenID Connect provider
	// instead of a password.
	People *people.Service
	OIDC   *people.OIDC
	// Logger receives a line per failed request and per sign-in; nil
	// discards.
	Logger *slog.Logger
	// Rand is the randomness of the sign-in form's tokens; if nil,
	// crypto/rand.
	Rand io.Reader
}

// Server serves the console and the application form. Safe for
// concurrent use.
type Server struct {
	sessionLookup
	cfg   Config
	log   *slog.Logger
	rnd   io.Reader
	bases []base
}

// base is one of the prefixes an SNAA writes under: "pid" (production)
// or "test", with its API base path for the messages.
type base struct {
	path   string // "/pid/v2"
	prefix string // canonical upper case; "" if the node has no test prefix
}

// New validates cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Namer == nil || cfg.Model == nil || cfg.Registry == nil || cfg.Keys == nil || cfg.Sessions == nil ||
		cfg.Admission == nil || cfg.Writes == nil || cfg.Read == nil || cfg.Operator == nil || cfg.ApplyLimit == nil || cfg.SignInLimit == nil {
		return nil, fmt.Errorf("%w: Namer, Model, Registry, Keys, Sessions, Admission, Writes, Read, Operator, ApplyLimit and SignInLimit are required", ErrConfig)
	}
	if cfg.Stats != nil && cfg.StatsDays == nil {
		return nil, fmt.Errorf("%w: StatsDays is required with Stats", ErrConfig)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, rnd: cfg.Rand}
	s.sessionLookup = sessionLookup{s}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	if s.cfg.MaxBodyBytes <= 0 {
		s.cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s.cfg.PublicURL = strings.TrimRight(s.cfg.PublicURL, "/")
	s.bases = []base{{path: "/pid/v2", prefix: strings.ToUpper(cfg.Namer.Prefix())}, {path: "/testpid/v2", prefix: strings.ToUpper(cfg.Namer.TestPrefix())}}
	return s, nil
}

// Mount registers the console's pages on mux: the index page at "/", the
// application form under /apply (not /apply/v1/, the API's) and the
// console under /console/.
func (s *Server) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.indexPage)
	mux.HandleFunc("GET /apply", s.applyForm)
	mux.HandleFunc("POST /apply", s.applyPost)
	mux.HandleFunc("GET /apply/status", s.applyStatusForm)
	mux.HandleFunc("POST /apply/status", s.applyStatusPost)
	s.consoleRoutes(mux)
}

// problem builds the problem of a refusal of the console's own (a form
// that cannot be read, a page of the other principal).
func problem(status int, format string, args ...any) *httperr.Problem {
	return httperr.New(status, format, args...)
}

// problemOf is the problem a page shows for err (httperr.Of); a form's
// faulty fields are counted in words, each listed below it.
func problemOf(err error) (*httperr.Problem, bool) {
	p, ok := httperr.Of(err)
	if n := len(p.Errors); n > 0 && p.Status == http.StatusUnprocessableEntity {
		c := *p
		c.Detail = "1 field needs a change"
		if n > 1 {
			c.Detail = fmt.Sprintf("%d fields need a change", n)
		}
		p = &c
	}
	return p, ok
}

// syncBeforeAuth runs Config.SyncAuth before a key is looked up, and
// again with the namespace once the session's SNAA is known (ns "" before).
func (s *Server) syncBeforeAuth(r *http.Request, ns string) error {
	if s.cfg.SyncAuth == nil {
		return nil
	}
	return s.cfg.SyncAuth(r.Context(), ns)
}

// issueKey issues a key for SNAA snaaID, audited as actor (the operator,
// or an SNAA rotating its own keys), and tells Config.KeyLimited of a
// refusal by the key limit.
func (s *Server) issueKey(actor, snaaID, name string) (*operator.IssuedKey, error) {
	k, secret, err := s.cfg.Keys.Issue(actor, snaaID, name)
	if err != nil {
		if errors.Is(err, access.ErrKeyLimit) && s.cfg.KeyLimited != nil {
			s.cfg.KeyLimited()
		}
		return nil, err
	}
	return operator.Issued(k, snaaID, secret), nil
}

// written tells Config.Written of writes.
func (s *Server) written(created, updated int) {
	if s.cfg.Written != nil && created+updated > 0 {
		s.cfg.Written(created, updated)
	}
}
