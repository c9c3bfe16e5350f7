package admin

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pidnode/access"
	"pidnode/console"
	"pidnode/handlev"
	"pidnode/internal/httperr"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
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
	// (stats.Service.Routes): rows of the table beside the API's own
	// (nsroutes.go), which give their dispatch, the custom ids they reserve
	// and their OpenAPI operations.
	Routes []route.Route
	// Policy is the policy of the public application form (CheckPolicy).
	// If nil, DefaultPolicy.
	Policy *Policy
	// Stats, if set, is the statistics feature, whose reads the console's
	// identifier page charts (its routes come through Routes).
	Stats *stats.Service
	// SessionIdle and SessionMax are the console's idle and absolute
	// session expiry; if zero, DefaultSessionIdle and DefaultSessionMax.
	SessionIdle, SessionMax time.Duration
	// EventStreamsPerKey, EventStreamsPerSNAA and EventStreams bound the
	// change feed's open Server-Sent Events streams per SNAA key and per
	// SNAA (all its keys together; 429 beyond) and on the node (503
	// beyond); if zero, DefaultEventStreamsPerKey,
	// DefaultEventStreamsPerSNAA and DefaultEventStreams. EventHeartbeat is
	// how often an idle stream gets a comment line (so that proxies keep it
	// open); if zero, DefaultEventHeartbeat. A stream ends within a second
	// of its key's revocation or its SNAA's suspension, whatever the
	// heartbeat.
	EventStreamsPerKey, EventStreamsPerSNAA, EventStreams int
	EventHeartbeat                                        time.Duration
}

// DefaultSessionIdle and DefaultSessionMax are the console's idle and
// absolute session lifetimes (package access).
const (
	DefaultSessionIdle = access.DefaultSessionIdle
	DefaultSessionMax  = access.DefaultSessionMax
)

// Server is the admin API. It is safe for concurrent use.
type Server struct {
	db      *store.DB
	namer   *handlev.Namer
	inv     Invalidator
	model   *model.Model
	maxBody int64
	public  string
	log     *slog.Logger
	now     func() time.Time
	rnd     io.Reader
	mux     *http.ServeMux
	routes  []routeInfo
	ns      nsTable // the namespace routes (nsroutes.go)
	bases   []base
	openapi []byte
	// adm admits SNAA requests (suspension, rate limits, maintenance) on
	// the API and in the console (access.Admission).
	adm          *access.Admission
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
	syncAuth   func(ctx context.Context, namespace string) error
	// commits counts the committed groups and the writes they held, for
	// /metrics (calls/groups is the mean group size).
	commits struct{ groups, calls atomic.Uint64 }
	// writes makes the identifier writes (create, update, bulk); read
	// reads them (one, a namespace's page, the history).
	writes *write.Service
	read   *read.Reader
	// keys says who a secret is (the operator, an SNAA's key), caches
	// valid keys and batches their last-used times; operator writes
	// invalidate it (opWrite).
	keys *access.Keys
	// ops makes the operator's decisions (applications, SNAAs), the
	// console's too.
	ops *operator.Service
	// policy is the application policy; applyRL limits the public
	// applications per client address, the JSON route's and the form's
	// (apply.go).
	policy  *Policy
	applyRL *access.AddrLimit
	// pages are the HTML console and application form (package console),
	// mounted on the same mux.
	pages *console.Server
	// streams counts the open event streams; evBeat is their heartbeat
	// (events.go).
	streams eventStreams
	evBeat  time.Duration
}

// base is one of the SNAA API bases and the prefix it writes under.
type base struct {
	path   string // "/pid/v2"
	prefix string // canonical upper case
	test   bool
}

// routeInfo is a registered operation: what /openapi.json documents.
type routeInfo struct {
	Method, Pattern string
	doc             op
}

// New validates cfg, loads the model and builds the routes.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil || cfg.Namer == nil {
		return nil, fmt.Errorf("%w: DB and Namer are required", ErrConfig)
	}
	if len(cfg.OperatorKey) < 16 {
		return nil, fmt.Errorf("%w: OperatorKey must be at least 16 characters", ErrConfig)
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
		db: cfg.DB, namer: cfg.Namer, inv: cfg.Invalidator, model: mod,
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
	s.w, s.writeState, s.syncAuth = s.reg, cfg.WriteState, cfg.SyncAuth
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
	s.adm = access.NewAdmission(access.AdmissionConfig{Keys: s.keys, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
		SNAARateLimit: cfg.SNAARateLimit, SNAARateBurst: cfg.SNAARateBurst, Now: s.now})
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
	s.applyRL = s.adm.AddrLimit(s.policy.PerHour)
	s.streams.maxKey, s.streams.maxSNAA, s.streams.limit, s.evBeat = cfg.EventStreamsPerKey, cfg.EventStreamsPerSNAA, cfg.EventStreams, cfg.EventHeartbeat
	if s.streams.maxKey <= 0 {
		s.streams.maxKey = DefaultEventStreamsPerKey
	}
	if s.streams.maxSNAA <= 0 {
		s.streams.maxSNAA = DefaultEventStreamsPerSNAA
	}
	if s.streams.limit <= 0 {
		s.streams.limit = DefaultEventStreams
	}
	if s.evBeat <= 0 {
		s.evBeat = DefaultEventHeartbeat
	}
	// The namespace routes' table documents the stream limits: built
	// once they are set.
	s.ns = newNSTable(s, cfg.Routes)
	reserved := s.ns.reservedMsg()
	s.writes, err = write.New(write.Config{Registry: s.reg, Writer: s.w, Namer: cfg.Namer, Model: mod, Invalidator: cfg.Invalidator,
		ReservedID: func(id string) (string, bool) { return reserved, s.ns.reserved(id) }, Now: s.now, Rand: s.rnd, IdempotencyTTL: cfg.IdempotencyTTL, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.read, err = read.New(read.Config{DB: cfg.DB, Registry: s.reg, Namer: cfg.Namer, Model: mod, PublicURL: s.public})
	if err != nil {
		return nil, err
	}
	if s.pages, err = s.newPages(cfg); err != nil {
		return nil, err
	}
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
	var consoleSync func(context.Context) error // no namespace before its session lookup
	if s.syncAuth != nil {
		consoleSync = func(ctx context.Context) error { return s.syncAuth(ctx, "") }
	}
	pc := console.Config{Namer: s.namer, Model: s.model, Registry: s.reg, Keys: s.keys, Sessions: sessions, Admission: s.adm,
		Writes: s.writes, Read: s.read, Operator: s.ops, ApplyLimit: s.applyRL, SignInLimit: s.adm.AddrLimit(console.SignInPerHour),
		SyncAuth: consoleSync, RefuseKeys: s.refuseKeys, MaxBodyBytes: s.maxBody, PublicURL: s.public,
		Written: func(created, updated int) {
			s.metrics.creates.Add(uint64(created))
			s.metrics.updates.Add(uint64(updated))
		},
		KeyLimited: func() { s.metrics.refused(refusedSNAAKeys) },
		Logger:     s.log, Rand: s.rnd}
	if cfg.Stats != nil {
		pc.Stats, pc.StatsDays = cfg.Stats.Read, cfg.Stats.Days
	}
	return console.New(pc)
}

// Handler returns the admin API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Model returns the metadata model in use.
func (s *Server) Model() *model.Model { return s.model }

// Close writes the pending key last-used times. Call it before closing the DB.
func (s *Server) Close() error { return s.keys.Flush() }

// handlerFunc is a route handler; a returned error becomes a problem reply.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers h for "METHOD /pattern" with its OpenAPI operation.
func (s *Server) handle(method, pattern string, h handlerFunc, doc op) {
	s.handleDocs(method, pattern, h, map[string]op{pattern: doc})
}

// handleDocs registers h for "METHOD /pattern", a pattern that serves
// several documented paths: docs maps each path to its operation.
func (s *Server) handleDocs(method, pattern string, h handlerFunc, docs map[string]op) {
	for _, d := range slices.Sorted(maps.Keys(docs)) {
		s.routes = append(s.routes, routeInfo{Method: method, Pattern: d, doc: docs[d]})
	}
	s.mux.HandleFunc(method+" "+pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// methodFallback answers 405 problem+json for other methods on a path.
func (s *Server) methodFallback(pattern string, allow string) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, problem(http.StatusMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, allow).with("Allow", allow))
	})
}

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

	// Operator routes (docs/product.md §4.1).
	s.handle("POST", "/ops/v1/applications", s.op(s.submitApplication),
		op{summary: "Submit an SNAA application", auth: "operator", request: "ApplicationRequest", ok: 201, okSchema: "Application", okHeads: []string{"Location"}, tag: "operator"})
	s.handle("GET", "/ops/v1/applications", s.op(s.listApplications),
		op{summary: "List applications", auth: "operator", ok: 200, okSchema: "ApplicationList", query: []param{{"state", "SUBMITTED, APPROVED or REJECTED"}}, tag: "operator"})
	s.methodFallback("/ops/v1/applications", "GET, POST")
	s.handle("GET", "/ops/v1/applications/{id}", s.op(s.getApplication),
		op{summary: "Read an application", auth: "operator", ok: 200, okSchema: "Application", tag: "operator"})
	s.methodFallback("/ops/v1/applications/{id}", "GET")
	s.handle("POST", "/ops/v1/applications/{id}/approve", s.op(s.approveApplication),
		op{summary: "Approve an application: creates the SNAA, assigns its namespace, issues its first key", auth: "operator", request: "ApproveRequest", ok: 200, okSchema: "ApproveResult", errs: []int{409}, tag: "operator"})
	s.methodFallback("/ops/v1/applications/{id}/approve", "POST")
	s.handle("POST", "/ops/v1/applications/{id}/reject", s.op(s.rejectApplication),
		op{summary: "Reject an application", auth: "operator", request: "RejectRequest", ok: 200, okSchema: "Application", errs: []int{409}, tag: "operator"})
	s.methodFallback("/ops/v1/applications/{id}/reject", "POST")
	s.handle("GET", "/ops/v1/snaas", s.op(s.listSNAAs),
		op{summary: "List SNAAs (never a key secret)", auth: "operator", ok: 200, okSchema: "SNAAList", tag: "operator"})
	s.methodFallback("/ops/v1/snaas", "GET")
	s.handle("GET", "/ops/v1/snaas/{id}", s.op(s.getSNAA),
		op{summary: "Read an SNAA", auth: "operator", ok: 200, okSchema: "SNAA", tag: "operator"})
	s.handle("PATCH", "/ops/v1/snaas/{id}", s.op(s.patchSNAA),
		op{summary: "Change an SNAA (custom ids, prefixes, suspension, keys it may hold)", auth: "operator", request: "SNAAPatch", ok: 200, okSchema: "SNAA", tag: "operator"})
	s.methodFallback("/ops/v1/snaas/{id}", "GET, PATCH")
	s.handle("GET", "/ops/v1/snaas/{id}/keys", s.op(s.listKeys),
		op{summary: "List an SNAA's keys (never a secret)", auth: "operator", ok: 200, okSchema: "KeyList", tag: "operator"})
	s.handle("POST", "/ops/v1/snaas/{id}/keys", s.op(s.issueKey),
		op{summary: "Issue a key; the only time its secret is shown. 409 (type /problems/key-limit) when the SNAA holds as many unrevoked keys as it may", auth: "operator", request: "KeyRequest", ok: 201, okSchema: "IssuedKey", errs: []int{409}, tag: "operator"})
	s.methodFallback("/ops/v1/snaas/{id}/keys", "GET, POST")
	s.handle("DELETE", "/ops/v1/snaas/{id}/keys/{key_id}", s.op(s.revokeKey),
		op{summary: "Revoke a key; it fails from the next request on", auth: "operator", ok: 204, tag: "operator"})
	s.methodFallback("/ops/v1/snaas/{id}/keys/{key_id}", "DELETE")
	s.handle("GET", "/ops/v1/audit", s.op(s.listAudit),
		op{summary: "Read the append-only audit log", auth: "operator", ok: 200, okSchema: "AuditList", query: []param{{"after", "sequence number to start after"}, {"limit", "1–1000, default 100"}}, tag: "operator"})
	s.methodFallback("/ops/v1/audit", "GET")
	s.handle("GET", "/ops/v1/backup", s.op(s.backup),
		op{summary: "Stream a consistent snapshot of the database (bbolt file)", auth: "operator", ok: 200, okSchema: "", tag: "operator"})
	s.methodFallback("/ops/v1/backup", "GET")

	// SNAA routes (docs/product.md §4), on both bases.
	for i := range s.bases {
		b := &s.bases[i]
		p := b.path
		where := "the production prefix"
		if b.test {
			where = "the test prefix"
		}
		idem := param{"Idempotency-Key", "a retried create with the same key and body returns the same identifier"}
		s.handle("GET", p+"/me", s.snaa(b, s.whoami),
			op{summary: "The calling SNAA, its namespace and whether it may write under " + where, auth: "snaa", ok: 200, okSchema: "WhoAmI", tag: "snaa"})
		s.methodFallback(p+"/me", "GET")
		s.snaaKeyRoutes(b)
		s.handle("PUT", p, s.snaa(b, s.createCustomQuery),
			op{summary: "Create an identifier with a custom id under " + where + " (namespace from the key)", auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", errs: []int{409}, query: []param{{"customid", "the custom id (required)"}}, headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"})
		s.methodFallback(p, "PUT")
		// One pattern serves the collection (empty id: create with a generated
		// id, list) and the items (custom ids may hold '/'); ServeMux cannot
		// register "{ns}/{$}" beside "{ns}/{id...}" for different methods.
		// The routes under the collection besides the identifiers come
		// from the namespace table (nsroutes.go), with their operations.
		hp := p + "/handles/{prefix}/{ns}/{id...}"
		coll, item := p+"/handles/{prefix}/{ns}/", p+"/handles/{prefix}/{ns}/{id}"
		get := s.ns.ops("GET", coll, item)
		get[coll] = op{summary: "List the namespace's identifiers", auth: "snaa", ok: 200, okSchema: "IdentifierList", query: []param{{"status", "only this status"}, {"url", "only identifiers with this landing page URL; a trailing * matches a URL prefix (reverse lookup through the URL index)"}, {"limit", "1–1000, default 100"}, {"cursor", "next_cursor of the previous page"}}, tag: "snaa"}
		get[item] = op{summary: "Read an identifier", auth: "snaa", ok: 200, okSchema: "Identifier", okHeads: []string{"ETag"}, headers: []param{{"If-None-Match", "ETag of a copy you hold: 304 if unchanged"}}, tag: "snaa"}
		s.handleDocs("GET", hp, s.snaa(b, s.getHandles), get)
		put := s.ns.ops("PUT", coll, item)
		put[coll] = op{summary: "Create an identifier with a generated id under " + where, auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"}
		put[item] = op{summary: "Update an identifier by merge (present fields replace, null removes an optional field, absent fields stay); with If-None-Match: * create it with this custom id. Identifiers are persistent: there is no DELETE (405); to retire one, set metadata.status to OBSOLETED or DEPRECATED", auth: "snaa", request: "HandleUpdate", ok: 200, okSchema: "Identifier", errs: []int{409, 412}, headers: []param{{"If-Match", "ETag (version) the update is based on: 412 if it changed"}, {"If-None-Match", "\"*\": create with this custom id (201, or 412 if it exists)"}, idem}, okHeads: []string{"ETag"}, tag: "snaa"}
		s.handleDocs("PUT", hp, s.snaa(b, s.putHandles), put)
		post := s.ns.ops("POST", coll, item)
		post[coll] = op{summary: "Create an identifier with a generated id under " + where + " (same as PUT)", auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", errs: []int{405}, headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"}
		s.handleDocs("POST", hp, s.snaa(b, s.postHandles), post)
		// DELETE on an identifier or the collection is 405 (identifiers are
		// persistent), which the OpenAPI description leaves out: only the
		// namespace routes' DELETEs are operations.
		s.handleDocs("DELETE", hp, s.deleteOn(b), s.ns.ops("DELETE", coll, item))
		s.methodFallback(hp, "GET, PUT, POST")
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

// writeError is the one place that maps errors to problem+json replies.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p, ok := problemOf(err)
	switch {
	case !ok:
		// Unexpected errors (database, encoding) are logged, never shown.
		s.log.Error("admin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case p.Status >= 500:
		s.log.Error("admin request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "detail", p.Detail)
	}
	for k, v := range p.header {
		w.Header().Set(k, v)
	}
	b, _ := marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(b)
}
