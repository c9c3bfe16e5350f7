package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/internal/cfgerr"
	"pidnode/internal/route"
	"pidnode/registry"
)

// The endpoints' routes (docs/product.md §4.5): an SNAA registers endpoints
// that receive its namespace's change feed, under
// …/handles/{prefix}/{ns}/webhooks:
//
//	POST   …/webhooks                    register (201, the secret shown once)
//	GET    …/webhooks                    list
//	GET    …/webhooks/{id}               one, with its delivery state
//	DELETE …/webhooks/{id}               remove it and its log
//	POST   …/webhooks/{id}/enable        resume a disabled endpoint from its cursor
//	GET    …/webhooks/{id}/deliveries    its last attempts, newest first
//
// They are one tree row of the API's namespace table (Routes, beside the
// feed's GET …/events, events.go), so "webhooks" and ids under it are
// reserved custom ids. The API checks the caller's key and namespace first
// and lends the handlers its body decoder and its maintenance refusal
// (route.Call); the Engine delivers.

// RoutesConfig configures Routes.
type RoutesConfig struct {
	// Registry reads the endpoints and the feed. Required.
	Registry *registry.Registry
	// Writer commits registrations, deletions and enablings with their
	// audit entries. If nil, Registry.
	Writer Writer
	// Rand draws endpoint ids and secrets. If nil, crypto/rand.
	Rand io.Reader
	// Now is the clock of registrations. If nil, time.Now.
	Now func() time.Time
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
	// Logger receives a line per failed stream read. Nil discards.
	Logger *slog.Logger
}

// routes serves the feed's and the endpoints' routes.
type routes struct {
	reg *registry.Registry
	w   Writer
	rnd io.Reader
	now func() time.Time
	log *slog.Logger
	// streams counts the open event streams; evBeat is their heartbeat
	// (events.go).
	streams eventStreams
	evBeat  time.Duration
}

// Routes are the feature's namespace routes, GET …/{ns}/events (the
// change feed, events.go) and the tree …/{ns}/webhooks, as rows of the
// API's table.
func Routes(cfg RoutesConfig) ([]route.Route, error) {
	if cfg.Registry == nil {
		return nil, cfgerr.Required("webhook", "RoutesConfig.Registry", ErrConfig)
	}
	s := &routes{reg: cfg.Registry, w: cfg.Writer, rnd: cfg.Rand, now: cfg.Now, log: cfg.Logger, evBeat: cfg.EventHeartbeat}
	s.streams.maxKey, s.streams.maxSNAA, s.streams.limit = cfg.EventStreamsPerKey, cfg.EventStreamsPerSNAA, cfg.EventStreams
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
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.w == nil {
		s.w = cfg.Registry
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	if s.now == nil {
		s.now = time.Now
	}
	doc := func(summary string, ok int, schema string) route.Doc {
		return route.Doc{Summary: summary, Auth: "snaa", OK: ok, OKSchema: schema, Tag: "snaa"}
	}
	post := doc("Register a webhook endpoint: the namespace's change feed events of the chosen kinds are POSTed to url, signed (Pidnode-Signature, see README), in order, at least once, retried with backoff for up to 24 h. "+
		"The reply holds the signing secret, shown only this once. At most "+strconv.Itoa(MaxPerNamespace)+" per namespace", 201, "Webhook")
	post.Request, post.OKHeads, post.Errs = "WebhookRequest", []string{"Location"}, []int{409, 422}
	log := doc("The endpoint's last "+strconv.Itoa(MaxLog)+" delivery attempts, newest first", 200, "WebhookDeliveries")
	log.Query = []route.Param{{Name: "limit", Desc: "1–" + strconv.Itoa(MaxLog) + ", default " + strconv.Itoa(MaxLog)}}
	return []route.Route{s.eventsRoute(), {Name: "webhooks", Tree: true, H: s.serve, Ops: []route.Op{
		{Method: "GET", Path: "webhooks", Doc: doc("The namespace's webhook endpoints (never their secrets)", 200, "WebhookList")},
		{Method: "POST", Path: "webhooks", Doc: post},
		{Method: "GET", Path: "webhooks/{webhook_id}", Doc: doc("A webhook endpoint and its delivery state: cursor, failures, next attempt, last error, and why the node disabled it", 200, "Webhook")},
		{Method: "DELETE", Path: "webhooks/{webhook_id}", Doc: doc("Remove a webhook endpoint and its delivery log", 204, "")},
		{Method: "POST", Path: "webhooks/{webhook_id}/enable", Doc: doc("Enable a disabled webhook endpoint: delivery resumes after its cursor", 200, "Webhook")},
		{Method: "GET", Path: "webhooks/{webhook_id}/deliveries", Doc: log},
	}}}, nil
}

// change is one audit entry of an endpoint's write.
type change struct {
	Action, Target string
	Before, After  any
}

// write commits fn's changes to endpoints with their audit entries as
// actor, in one transaction of the Writer: fn either refuses with a
// *route.Error before it writes anything (an empty transaction commits, so
// that a cluster's group partners are not rolled back, and the refusal is
// returned) or writes and returns its changes. fn may be run more than
// once. (access.Keys.Update is the same shape for keys and SNAAs.)
func (s *routes) write(actor string, fn func(tx registry.Tx) ([]change, error)) error {
	var refused error
	err := s.w.Update(func(tx registry.Tx) error {
		refused = nil
		changes, err := fn(tx)
		var re *route.Error
		if errors.As(err, &re) {
			refused = err
			return nil
		}
		if err != nil {
			return err
		}
		for _, c := range changes {
			if err := tx.Audit(actor, c.Action, c.Target, c.Before, c.After); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return refused
}

// parseSeq parses a sequence number (or a ?limit=): ASCII digits only (no sign, no spaces), at
// most 20 of them, within uint64.
func parseSeq(s string) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// Limits of webhook registration.
const (
	MaxPerNamespace = 10
	MaxURLBytes     = 2048
	MaxDescription  = 200
	maxBody         = 16 << 10
)

// Request is the body of POST …/webhooks (the API's "WebhookRequest"
// schema).
type Request struct {
	// URL receives the deliveries: absolute http or https, no userinfo.
	URL string `json:"url"`
	// Kinds are the event kinds to deliver (registry.WebhookKinds); if
	// absent, every kind.
	Kinds       []string `json:"kinds,omitempty"`
	Description string   `json:"description,omitempty"`
	// After is the seq after which delivery starts; if absent, the
	// namespace's last event (only events written from now on).
	After *uint64 `json:"after,omitempty"`
}

// View is what the API shows of an endpoint (the "Webhook" schema).
// Secret is set only in the reply that creates it.
type View struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Kinds          []string   `json:"kinds"`
	Description    string     `json:"description,omitempty"`
	Created        time.Time  `json:"created"`
	State          string     `json:"state"`
	Cursor         uint64     `json:"cursor"`
	Attempts       uint64     `json:"attempts"`
	Failures       int        `json:"failures"`
	FailingSince   *time.Time `json:"failing_since,omitempty"`
	NextAttempt    *time.Time `json:"next_attempt,omitempty"`
	LastAttempt    *time.Time `json:"last_attempt,omitempty"`
	LastSuccess    *time.Time `json:"last_success,omitempty"`
	LastError      string     `json:"last_error,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	Secret         string     `json:"secret,omitempty"`
}

// List is the reply of GET …/webhooks.
type List struct {
	Webhooks []View `json:"webhooks"`
}

// Deliveries is the reply of GET …/webhooks/{id}/deliveries.
type Deliveries struct {
	Deliveries []Delivery `json:"deliveries"`
}

func viewOf(w *Endpoint) View {
	return View{ID: w.ID, URL: w.URL, Kinds: w.Kinds, Description: w.Description, Created: w.Created, State: w.State,
		Cursor: w.Cursor, Attempts: w.Attempts, Failures: w.Failures, FailingSince: w.FailingSince, NextAttempt: w.NextAttempt,
		LastAttempt: w.LastAttempt, LastSuccess: w.LastSuccess, LastError: w.LastError, DisabledAt: w.DisabledAt,
		DisabledReason: w.DisabledReason}
}

// webhookPath splits a webhook route's id: the endpoint id ("" for the
// collection) and what follows it ("", "enable", "deliveries").
func webhookPath(id string) (wid, sub string, err error) {
	_, rest, _ := strings.Cut(id, "/")
	wid, sub, _ = strings.Cut(rest, "/")
	if strings.Contains(sub, "/") || (wid == "" && rest != "") {
		return "", "", route.Errorf(http.StatusNotFound, "no webhook route %s", id)
	}
	return wid, sub, nil
}

// serve serves the webhook routes for method on the target namespace.
func (s *routes) serve(w http.ResponseWriter, r *http.Request, t route.Target, id string) error {
	wid, sub, err := webhookPath(id)
	if err != nil {
		return err
	}
	nsp, err := s.reg.NamespaceKey(t.Prefix, t.Namespace)
	if err != nil {
		return err
	}
	op := r.Method + " " + sub
	if wid == "" {
		op = r.Method + " collection"
	}
	switch op {
	case "GET collection":
		return s.list(w, nsp)
	case "POST collection":
		if err := t.Call.Writable(); err != nil {
			return err
		}
		return s.create(w, r, t, nsp)
	case "GET ":
		return s.get(w, nsp, wid)
	case "DELETE ":
		if err := t.Call.Writable(); err != nil {
			return err
		}
		return s.delete(w, t, nsp, wid)
	case "POST enable":
		if err := t.Call.Writable(); err != nil {
			return err
		}
		return s.enable(w, t, nsp, wid)
	case "GET deliveries":
		return s.deliveries(w, r, nsp, wid)
	}
	allow := map[string]string{"": "GET, DELETE", "enable": "POST", "deliveries": "GET"}[sub]
	if wid == "" {
		allow = "GET, POST"
	}
	if allow == "" {
		return route.Errorf(http.StatusNotFound, "no webhook route %s", id)
	}
	e := route.Errorf(http.StatusMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, allow)
	e.Header = map[string]string{"Allow": allow}
	return e
}

// checkRequest checks and normalises a registration body.
func checkRequest(req Request) (Request, error) {
	var errs []route.Field
	if msg := checkURL(req.URL); msg != "" {
		errs = append(errs, route.Field{Field: "url", Message: msg})
	}
	if req.Kinds == nil {
		req.Kinds = slices.Clone(registry.WebhookKinds)
	}
	if len(req.Kinds) == 0 {
		errs = append(errs, route.Field{Field: "kinds", Message: "must name at least one kind of " + strings.Join(registry.WebhookKinds, ", ") + " (or be absent: every kind)"})
	}
	var kinds []string
	for _, k := range req.Kinds {
		if !slices.Contains(registry.WebhookKinds, k) {
			errs = append(errs, route.Field{Field: "kinds", Message: strconv.Quote(k) + " is not an event kind; kinds are " + strings.Join(registry.WebhookKinds, ", ")})
			continue
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	req.Kinds = kinds
	if len(req.Description) > MaxDescription || !utf8.ValidString(req.Description) || strings.ContainsFunc(req.Description, isControl) {
		errs = append(errs, route.Field{Field: "description", Message: "must be text of at most " + strconv.Itoa(MaxDescription) + " bytes without control characters"})
	}
	if len(errs) > 0 {
		e := route.Errorf(http.StatusUnprocessableEntity, "the webhook cannot be registered: %s: %s", errs[0].Field, errs[0].Message)
		e.Fields = errs
		return req, e
	}
	return req, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkURL returns why u cannot receive deliveries, "" if it can.
// Where it may connect is decided on every connection (internal/outbound),
// not here: a name's addresses can change.
func checkURL(u string) string {
	if u == "" {
		return "is required: the absolute http or https URL that receives the deliveries"
	}
	if len(u) > MaxURLBytes {
		return "must be at most " + strconv.Itoa(MaxURLBytes) + " bytes"
	}
	if strings.ContainsFunc(u, func(r rune) bool { return isControl(r) || r == ' ' }) {
		return "must not hold spaces or control characters"
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "is not a URL: " + strings.TrimPrefix(err.Error(), "parse ")
	}
	switch {
	case pu.Scheme != "http" && pu.Scheme != "https":
		return "must be an absolute http or https URL"
	case pu.Host == "" || pu.Hostname() == "":
		return "must name a host"
	case pu.User != nil:
		return "must not hold a user name or password (credentials are never sent); authenticate deliveries by their signature"
	case pu.Fragment != "" || strings.Contains(u, "#"):
		return "must not hold a fragment"
	}
	return ""
}

// newSecret draws an endpoint's signing secret: "whsec_" and 32
// random bytes in unpadded base64url.
func (s *routes) newSecret() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func (s *routes) create(w http.ResponseWriter, r *http.Request, t route.Target, nsp string) error {
	var req Request
	if err := t.Call.DecodeJSON(maxBody, &req); err != nil {
		return err
	}
	req, err := checkRequest(req)
	if err != nil {
		return err
	}
	var idb [8]byte
	if _, err := io.ReadFull(s.rnd, idb[:]); err != nil {
		return err
	}
	secret, err := s.newSecret()
	if err != nil {
		return err
	}
	now := s.now().UTC()
	wh := Endpoint{ID: hex.EncodeToString(idb[:]), Namespace: nsp, Prefix: t.Prefix, NS: t.Namespace, SNAAID: t.Call.SNAA,
		URL: req.URL, Kinds: req.Kinds, Description: req.Description, Secret: secret, Created: now, State: Active}
	target := t.Prefix + "/" + t.Namespace + "/webhooks/" + wh.ID
	err = s.write(t.Call.Actor, func(tx registry.Tx) ([]change, error) {
		all, err := endpoints(tx.Tx, nsp)
		if err != nil {
			return nil, err
		}
		if len(all) >= MaxPerNamespace {
			return nil, route.Errorf(http.StatusConflict, "namespace %s/%s has %d webhooks, the most it may have; delete one first", t.Prefix, t.Namespace, len(all))
		}
		if req.After != nil {
			wh.Cursor = *req.After
		} else if wh.Cursor, err = tx.NamespaceAuditLast(nsp); err != nil {
			return nil, err
		}
		if err := putEndpoint(tx.Tx, &wh); err != nil {
			return nil, err
		}
		return []change{{Action: registry.ActWebhookCreate, Target: target,
			After: map[string]any{"url": wh.URL, "kinds": wh.Kinds, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	v := viewOf(&wh)
	v.Secret = secret
	w.Header().Set("Location", r.URL.Path+"/"+wh.ID)
	w.Header().Set("Cache-Control", "no-store")
	route.WriteJSON(w, http.StatusCreated, &v)
	return nil
}

func (s *routes) list(w http.ResponseWriter, nsp string) error {
	var all []Endpoint
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		all, err = endpoints(tx.Tx, nsp)
		return err
	}); err != nil {
		return err
	}
	out := List{Webhooks: make([]View, len(all))}
	for i := range all {
		out.Webhooks[i] = viewOf(&all[i])
	}
	route.WriteJSON(w, http.StatusOK, &out)
	return nil
}

// find reads endpoint wid of the namespace nsp: 404 if there is none.
func (s *routes) find(nsp, wid string) (Endpoint, error) {
	var (
		wh Endpoint
		ok bool
	)
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		wh, ok, err = endpoint(tx.Tx, nsp, wid)
		return err
	}); err != nil {
		return wh, err
	}
	if !ok {
		return wh, route.Errorf(http.StatusNotFound, "no webhook %s in this namespace", wid)
	}
	return wh, nil
}

func (s *routes) get(w http.ResponseWriter, nsp, wid string) error {
	wh, err := s.find(nsp, wid)
	if err != nil {
		return err
	}
	v := viewOf(&wh)
	route.WriteJSON(w, http.StatusOK, &v)
	return nil
}

func (s *routes) delete(w http.ResponseWriter, t route.Target, nsp, wid string) error {
	err := s.write(t.Call.Actor, func(tx registry.Tx) ([]change, error) {
		wh, ok, err := endpoint(tx.Tx, nsp, wid)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, route.Errorf(http.StatusNotFound, "no webhook %s in this namespace", wid)
		}
		if err := deleteEndpoint(tx.Tx, nsp, wid); err != nil {
			return nil, err
		}
		return []change{{Action: registry.ActWebhookDelete, Target: t.Prefix + "/" + t.Namespace + "/webhooks/" + wid,
			Before: map[string]any{"url": wh.URL, "kinds": wh.Kinds, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// enable makes an endpoint active again, its failures forgotten:
// delivery resumes after its cursor at once. An active endpoint is left as
// it is.
func (s *routes) enable(w http.ResponseWriter, t route.Target, nsp, wid string) error {
	var wh Endpoint
	err := s.write(t.Call.Actor, func(tx registry.Tx) ([]change, error) {
		var ok bool
		var err error
		if wh, ok, err = endpoint(tx.Tx, nsp, wid); err != nil {
			return nil, err
		}
		if !ok {
			return nil, route.Errorf(http.StatusNotFound, "no webhook %s in this namespace", wid)
		}
		if wh.State == Active {
			return nil, nil
		}
		before := map[string]any{"state": wh.State, "disabled_reason": wh.DisabledReason}
		wh.State, wh.DisabledAt, wh.DisabledReason = Active, nil, ""
		wh.Failures, wh.FailingSince, wh.NextAttempt = 0, nil, nil
		if err := putEndpoint(tx.Tx, &wh); err != nil {
			return nil, err
		}
		return []change{{Action: registry.ActWebhookEnable, Target: t.Prefix + "/" + t.Namespace + "/webhooks/" + wid,
			Before: before, After: map[string]any{"state": wh.State, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	v := viewOf(&wh)
	route.WriteJSON(w, http.StatusOK, &v)
	return nil
}

func (s *routes) deliveries(w http.ResponseWriter, r *http.Request, nsp, wid string) error {
	limit := MaxLog
	if v := r.URL.Query().Get("limit"); v != "" {
		n, ok := parseSeq(v)
		if !ok || n < 1 || n > MaxLog {
			return route.FieldErrorf("limit", "must be an integer from 1 to "+strconv.Itoa(MaxLog))
		}
		limit = int(n)
	}
	var (
		out Deliveries
		ok  bool
	)
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		if _, ok, err = endpoint(tx.Tx, nsp, wid); err != nil || !ok {
			return err
		}
		out.Deliveries, err = deliveryLog(tx.Tx, wid, limit)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return route.Errorf(http.StatusNotFound, "no webhook %s in this namespace", wid)
	}
	route.WriteJSON(w, http.StatusOK, &out)
	return nil
}
