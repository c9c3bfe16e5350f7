package admin

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"pidnode/access"
	"pidnode/console"
	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/internal/httperr"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/people"
	"pidnode/read"
	"pidnode/registry"
	"pidnode/stats"
	"pidnode/store"
	"pidnode/write"
)

// Invalidator drops cached views of a record after a write so that the next
// resolution reads the new version (write.Invalidator).
type Invalidator = write.Invalidator

// Config configures New.
type Config struct {
	// DB is the database. Required.
	DB *store.DB
	// Namer decides prefixes, the service segment and storage keys. Required;
	// it must have a test prefix for the /testpid/v2 base to accept writes.
	Namer *handlev.Namer
	// Invalidator is told about every written record key after the commit and
	// before the reply. Nil means no cache.
	Invalidator Invalidator
	// OperatorKey is the bearer token of the /ops/v1 routes. Required, at least
	// 16 characters.
	OperatorKey string
	// Model is a metadata model file (JSON or TOML, see model.LoadModel). If
	// empty, model.DefaultModel (pid4cat) is used.
	Model []byte
	// MaxBodyBytes limits request bodies (413 beyond). If zero,
	// DefaultMaxBodyBytes (1 MiB) is used.
	MaxBodyBytes int64
	// PublicURL is the resolver's public base URL, used for the links in
	// identifier replies ("https://pid.example.org"). If empty, links are
	// root-relative paths.
	PublicURL string
	// Logger receives one line per failed request and per key event. Nil discards.
	Logger *slog.Logger
	// Now is the clock. If nil, time.Now is used.
	Now func() time.Time
	// Rand is the randomness for keys, ids and namespaces. If nil, crypto/rand.
	// It must be safe for concurrent use (ids are minted outside the write
	// transaction).
	Rand io.Reader
	// LastUsedInterval is how often key last-used times are written (they are
	// kept in memory in between, so a request costs no write). If zero, one minute.
	LastUsedInterval time.Duration
	// IdempotencyTTL is how long an Idempotency-Key is remembered. If zero, 24h.
	IdempotencyTTL time.Duration
	// RateLimit is the sustained requests per second allowed per SNAA key
	// (429 with Retry-After beyond); RateBurst the bucket size (if zero,
	// 2×RateLimit). If RateLimit is zero, there is no limit.
	RateLimit float64
	RateBurst int
	// SNAARateLimit and SNAARateBurst are the same limit for the requests
	// of all of an SNAA's keys together, charged after the key's; if zero,
	// DefaultSNAARateFactor times the key's. They apply only when
	// RateLimit is set.
	SNAARateLimit float64
	SNAARateBurst int
	// RefuseKeys makes the API refuse every request that carries an
	// Authorization header (403 problem+json): cmd/pidnode sets it when the
	// admin listener is plain HTTP on a non-loopback address and
	// --admin-insecure is not given, so bearer keys never cross a network in
	// clear text. /healthz, /readyz, /metrics and /openapi.json need
	// no key and keep working.
	RefuseKeys bool
	// Metrics, if set, writes further Prometheus text (the resolvers', the
	// cache's) after admin's own on GET /metrics.
	Metrics func(w io.Writer) error
	// Writer commits the writes. If nil, the database's own registry
	// commits them (a single node).
	Writer Writer
	// WriteState, if set, reports whether writes can be made now; /readyz
	// shows it beside resolution's readiness (a cluster node: etcd
	// reachable), without failing readiness, which is resolution's. An
	// error with a StorageFull() bool method that returns true reads
	// "writes: storage full" there, any other "writes: unavailable".
	WriteState func() error
	// SyncAuth, if set, is called before an API key is looked up: a cluster
	// node waits there until its copy has applied every write etcd had
	// acknowledged, so that a key revoked through any node is refused from
	// the next request on, and with it the namespace the path names
	// (upper case, no hyphens; "" for none).
	SyncAuth func(ctx context.Context, namespace string) error
	// Routes are the namespace routes of the features that own theirs
	// (stats.Service.Routes, webhook.Routes, linkcheck.Routes, in the
	// order their reserved ids are named): rows of the table beside the API's own
	// (nsroutes.go), which give their dispatch, the custom ids they reserve
	// and their OpenAPI operations.
	Routes []route.Route
	// Policy is the policy of the public application form (CheckPolicy).
	// If nil, DefaultPolicy.
	Policy *Policy
	// Stats, if set, is the statistics feature, whose reads the console's
	// identifier page charts (its routes come through Routes).
	Stats *stats.Service
	// Webhooks, if set, lists a namespace's webhook endpoints for the
	// console's overview (webhook.Views, adapted by cmd).
	Webhooks func(prefix, ns string) ([]WebhookView, uint64, error)
	// OIDC, if set, signs people in through it instead of a password.
	OIDC *people.OIDC
	// SessionIdle and SessionMax are the console's idle and absolute
	// session expiry; if zero, DefaultSessionIdle and DefaultSessionMax.
	SessionIdle, SessionMax time.Duration
}

// WebhookView is what the console's webhooks page shows of an endpoint.
type WebhookView = console.WebhookView

// DefaultSessionIdle and DefaultSessionMax are the console's idle and
// absolute session lifetimes (package access).
const (
	DefaultSessionIdle = access.DefaultSessionIdle
	DefaultSessionMax  = access.DefaultSessionMax
)

// Server is the admin API. It is safe for concurrent use.
//
// It wires the route sets, each a type of its own over the shared gate
// (auth.go: keys, admission, limits): opsAPI, the operator's /ops/v1 routes
// (ops.go); snaaAPI, an SNAA's routes under /pid/v2 and /testpid/v2
// (handles.go); the public application routes (apply.go) and the meta
// routes (/healthz, /readyz, /metrics, /openapi.json) are Server's own. The
// embedded router registers them all on one mux and writes every error reply.
type Server struct {
	*router
	db           *store.DB
	namer        *handlev.Namer
	inv          Invalidator
	model        *model.Model
	maxBody      int64
	public       string
	log          *slog.Logger
	now          func() time.Time
	rnd          io.Reader
	bases        []base
	openapi      []byte
	extraMetrics func(w io.Writer) error
	refuseKeys   bool
	notReady     atomic.Pointer[string]
	metrics      metrics
	handler      http.Handler
	// reg is the persistence of the admin buckets; its Commit commits
	// identifier writes (create, update, bulk) in groups.
	reg *registry.Registry
	// w commits the writes: reg, or Config.Writer.
	w          Writer
	writeState func() error
	// commits counts the committed groups and the writes they held, for
	// /metrics (calls/groups is the mean group size).
	commits struct{ groups, calls atomic.Uint64 }
	// gate says who a request is and admits it; opsAPI and snaaAPI hold it.
	gate *gate
	// keys says who a secret is (the operator, an SNAA's key), caches
	// valid keys and batches their last-used times (gate.keys).
	keys *access.Keys
	// ops makes the operator's decisions (applications, SNAAs), the
	// console's too.
	ops *operator.Service
	// opsAPI and snaaAPI are the operator's and the SNAAs' route sets.
	opsAPI  *opsAPI
	snaaAPI *snaaAPI
	// policy is the application policy; applyRL limits the public
	// applications per client address, the JSON route's and the form's
	// (apply.go).
	policy  *Policy
	applyRL *access.AddrLimit
	// pages are the HTML console and application form (package console),
	// mounted on the same mux.
	pages *console.Server
}

// base is one of the SNAA API bases and the prefix it writes under.
type base struct {
	path   string // "/pid/v2"
	prefix string // canonical upper case
	test   bool
}

// New validates cfg, loads the model and builds the routes.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, cfgerr.Required("admin", "DB", ErrConfig)
	}
	if cfg.Namer == nil {
		return nil, cfgerr.Required("admin", "Namer", ErrConfig)
	}
	if len(cfg.OperatorKey) < 16 {
		// The key is a secret: the error does not show it.
		return nil, &ConfigError{Pkg: "admin", Field: "OperatorKey", Reason: "must be at least 16 characters", Err: ErrConfig}
	}
	mb := cfg.Model
	if len(mb) == 0 {
		mb = model.DefaultModel
	}
	mod, err := model.LoadModel(mb)
	if err != nil {
		return nil, err
	}
	s := &Server{
		router: &router{},
		db:     cfg.DB, namer: cfg.Namer, inv: cfg.Invalidator, model: mod,
		maxBody: cfg.MaxBodyBytes, public: strings.TrimRight(cfg.PublicURL, "/"),
		log: cfg.Logger, now: cfg.Now, rnd: cfg.Rand,
		extraMetrics: cfg.Metrics, refuseKeys: cfg.RefuseKeys,
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.router.log = s.log
	if s.now == nil {
		s.now = time.Now
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	s.reg, err = registry.New(registry.Config{DB: cfg.DB, Namer: cfg.Namer, URLIndex: mod.URL.Index, Now: s.now,
		OnCommit: func(n int) {
			s.commits.groups.Add(1)
			s.commits.calls.Add(uint64(n))
		}})
	if err != nil {
		return nil, err
	}
	s.w, s.writeState = s.reg, cfg.WriteState
	if cfg.Writer != nil {
		s.w = cfg.Writer
	}
	s.keys, err = access.New(access.Config{Registry: s.reg, Writer: s.w, Rand: s.rnd, OperatorKey: cfg.OperatorKey,
		LastUsedInterval: cfg.LastUsedInterval, Now: s.now, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.bases = []base{{path: "/pid/v2", prefix: strings.ToUpper(cfg.Namer.Prefix())}}
	if tp := cfg.Namer.TestPrefix(); tp != "" {
		s.bases = append(s.bases, base{path: "/testpid/v2", prefix: strings.ToUpper(tp), test: true})
	} else {
		s.bases = append(s.bases, base{path: "/testpid/v2", test: true})
	}
	s.gate = &gate{keys: s.keys, syncAuth: cfg.SyncAuth, metrics: &s.metrics,
		adm: access.NewAdmission(access.AdmissionConfig{Keys: s.keys, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
			SNAARateLimit: cfg.SNAARateLimit, SNAARateBurst: cfg.SNAARateBurst, Now: s.now})}
	if s.gate.people, err = people.New(people.Config{Registry: s.reg, Keys: s.keys, Now: s.now, Rand: s.rnd, Logger: s.log}); err != nil {
		return nil, err
	}
	if cfg.Policy == nil {
		s.policy = DefaultPolicy()
	} else {
		pol := *cfg.Policy
		if err := CheckPolicy(&pol); err != nil {
			return nil, err
		}
		s.policy = &pol
	}
	var served []string
	for _, b := range s.bases {
		if b.prefix != "" {
			served = append(served, b.prefix)
		}
	}
	var shard func(string) (string, error)
	if c, ok := s.w.(interface{ ChooseShard(string) (string, error) }); ok {
		shard = c.ChooseShard
	}
	s.ops, err = operator.New(operator.Config{Registry: s.reg, Keys: s.keys, Namer: cfg.Namer, Prefixes: served,
		ChooseShard: shard, Policy: s.policy, Rand: s.rnd, Now: s.now, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.applyRL = s.gate.adm.AddrLimit(s.policy.PerHour)
	s.opsAPI = &opsAPI{gate: s.gate, ops: s.ops, reg: s.reg, db: cfg.DB, maxBody: s.maxBody, log: s.log, now: s.now}
	sa := &snaaAPI{gate: s.gate, model: mod, maxBody: s.maxBody, log: s.log}
	sa.ns = newNSTable(sa, cfg.Routes)
	reserved := sa.ns.reservedMsg()
	sa.writes, err = write.New(write.Config{Registry: s.reg, Writer: s.w, Namer: cfg.Namer, Model: mod, Invalidator: cfg.Invalidator,
		ReservedID: func(id string) (string, bool) { return reserved, sa.ns.reserved(id) }, Now: s.now, Rand: s.rnd, IdempotencyTTL: cfg.IdempotencyTTL, Logger: s.log})
	if err != nil {
		return nil, err
	}
	sa.read, err = read.New(read.Config{DB: cfg.DB, Registry: s.reg, Namer: cfg.Namer, Model: mod, PublicURL: s.public})
	if err != nil {
		return nil, err
	}
	s.snaaAPI = sa
	if s.pages, err = s.newPages(cfg); err != nil {
		return nil, err
	}
	s.gate.session = s.pages.APISession
	if err := s.ensureIndexes(); err != nil {
		return nil, err
	}
	s.routesInit()
	s.handler = s.counted(s.guard(s.mux))
	doc, err := s.buildOpenAPI()
	if err != nil {
		return nil, err
	}
	s.openapi = doc
	return s, nil
}

// newPages builds the console and the application form over the same
// services as the API.
func (s *Server) newPages(cfg Config) (*console.Server, error) {
	sessions, err := access.NewSessions(access.SessionsConfig{Registry: s.reg, Writer: s.w, Keys: s.keys,
		Idle: cfg.SessionIdle, Max: cfg.SessionMax, Now: s.now, Rand: s.rnd, Logger: s.log})
	if err != nil {
		return nil, err
	}
	pc := console.Config{Namer: s.namer, Model: s.model, Registry: s.reg, Keys: s.keys, Sessions: sessions, Admission: s.gate.adm,
		Writes: s.snaaAPI.writes, Read: s.snaaAPI.read, Operator: s.ops, ApplyLimit: s.applyRL, SignInLimit: s.gate.adm.AddrLimit(console.SignInPerHour),
		SyncAuth: s.gate.syncAuth, RefuseKeys: s.refuseKeys, MaxBodyBytes: s.maxBody, PublicURL: s.public,
		Written: func(created, updated int) {
			s.metrics.creates.Add(uint64(created))
			s.metrics.updates.Add(uint64(updated))
		},
		KeyLimited: func() { s.metrics.refused(refusedSNAAKeys) },
		Logger:     s.log, Rand: s.rnd, People: s.gate.people, OIDC: cfg.OIDC}
	if cfg.Stats != nil {
		pc.Stats, pc.StatsDays = cfg.Stats.Read, cfg.Stats.Days
	}
	pc.Webhooks = cfg.Webhooks
	return console.New(pc)
}

// Handler returns the admin API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// People returns the accounts of people, whose families cmd adds to
// /metrics.
func (s *Server) People() *people.Service { return s.gate.people }

// Model returns the metadata model in use.
func (s *Server) Model() *model.Model { return s.model }

// Close writes the pending key last-used times. Call it before closing the DB.
func (s *Server) Close() error { return s.keys.Flush() }

// routesInit registers every route: the meta routes, the public
// application routes, the console's pages, the operator's routes
// (docs/product.md §4.1) and the SNAA routes (§4) on both bases.
func (s *Server) routesInit() {
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, problem(http.StatusNotFound, "no route %s; see /openapi.json", r.URL.Path))
	})
	s.handle("GET", "/openapi.json", s.serveOpenAPI,
		op{summary: "This OpenAPI 3.1 description of the admin API", ok: 200, okSchema: "", tag: "meta"})
	s.handle("GET", "/healthz", s.healthz,
		op{summary: "Liveness: the process serves requests", ok: 200, tag: "meta"})
	s.handle("GET", "/readyz", s.readyz,
		op{summary: "Readiness: the database is readable and every listener is bound (503 otherwise, e.g. while starting or shutting down)", ok: 200, errs: []int{503}, tag: "meta"})
	s.handle("GET", "/metrics", s.serveMetrics,
		op{summary: "Prometheus text format metrics: admin requests by route and status with latency, writes, bbolt, build info, the resolvers and the cache", ok: 200, tag: "meta"})
	s.applyRoutes()
	// "/" itself, the application form and the console are pages for a
	// person with a browser (package console); every other unknown path
	// stays a problem+json 404.
	s.pages.Mount(s.mux)

	s.opsAPI.routes(s.router)
	for i := range s.bases {
		s.snaaAPI.routes(s.router, &s.bases[i])
	}
}

// ensureIndexes builds the URL index and the per-record audit index of a
// database written before they existed (once; both are then maintained by
// every write).
func (s *Server) ensureIndexes() error {
	n, err := s.reg.EnsureIndexes()
	if n >= 0 {
		s.log.Info("URL index built", "entries", n)
	}
	return err
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := io.WriteString(w, "ok\n")
	return err
}

// guard refuses keys on an insecure listener (Config.RefuseKeys).
func (s *Server) guard(h http.Handler) http.Handler {
	if !s.refuseKeys {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" && r.TLS == nil {
			s.metrics.insecure.Add(1)
			s.writeError(w, r, problem(http.StatusForbidden,
				"this admin listener is plain HTTP on a network address: it refuses API keys, which would cross the network in clear text. "+
					"Use the node's HTTPS admin address (--admin-tls-cert/--admin-tls-key), or the operator binds it to loopback or starts it with --admin-insecure "+
					"(e.g. behind a TLS-terminating proxy); the key you sent should be considered exposed if this network is not trusted"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// SetNotReady makes /readyz answer 503 with reason (e.g. "listeners not bound
// yet", "shutting down"); an empty reason makes it ready again (as long as the
// database is readable). cmd/pidnode calls it around binding and shutdown.
// Safe for concurrent use.
func (s *Server) SetNotReady(reason string) {
	if reason == "" {
		s.notReady.Store(nil)
		return
	}
	s.notReady.Store(&reason)
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if why := s.notReady.Load(); why != nil {
		return problem(http.StatusServiceUnavailable, "not ready: %s", *why).with("Retry-After", "1")
	}
	if err := s.db.View(func(tx *store.Tx) error { return nil }); err != nil {
		return problem(http.StatusServiceUnavailable, "database not readable: %v", err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	msg := "ready\n"
	if s.writeState != nil {
		msg += "resolution: ready\n"
		if err := s.writeState(); err != nil {
			if httperr.StorageFull(err) {
				msg += "writes: storage full: " + err.Error() + "\n"
			} else {
				msg += "writes: unavailable: " + err.Error() + "\n"
			}
		} else {
			msg += "writes: ready\n"
		}
	}
	_, err := io.WriteString(w, msg)
	return err
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(s.openapi)
	return err
}

// writeJSON writes v as the JSON reply with status (route.WriteJSON, which
// the features' routes write with too).
func writeJSON(w http.ResponseWriter, status int, v any) { route.WriteJSON(w, status, v) }

// marshal is json.Marshal without HTML escaping, with a trailing newline.
func marshal(v any) ([]byte, error) { return route.Marshal(v) }
