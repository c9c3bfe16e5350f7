package admin

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/registry"
)

// Webhooks (docs/product.md §4.5): an SNAA registers endpoints that receive
// its namespace's change feed, under …/handles/{prefix}/{ns}/webhooks:
//
//	POST   …/webhooks                    register (201, the secret shown once)
//	GET    …/webhooks                    list
//	GET    …/webhooks/{id}               one, with its delivery state
//	DELETE …/webhooks/{id}               remove it and its log
//	POST   …/webhooks/{id}/enable        resume a disabled endpoint from its cursor
//	GET    …/webhooks/{id}/deliveries    its last attempts, newest first
//
// The routes are a tree route of the namespace table (nsroutes.go), so
// "webhooks" and ids under it are reserved custom ids. Package webhook delivers; this file
// only registers, reads and changes endpoints, through the registry.

// Limits of webhook registration.
const (
	MaxWebhooksPerNamespace = 10
	MaxWebhookURLBytes      = 2048
	MaxWebhookDescription   = 200
	maxWebhookBody          = 16 << 10
)

// WebhookRequest is the body of POST …/webhooks.
type WebhookRequest struct {
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

// Webhook is what the API shows of an endpoint. Secret is set only in the
// reply that creates it.
type Webhook struct {
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

// WebhookList is the reply of GET …/webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookDeliveries is the reply of GET …/webhooks/{id}/deliveries.
type WebhookDeliveries struct {
	Deliveries []registry.WebhookDelivery `json:"deliveries"`
}

// FeedEvent is the change feed's event of an audit entry (events.go), the
// objects a webhook delivery carries.
func FeedEvent(e *registry.AuditEntry) any {
	ev := eventOf(e)
	return &ev
}

func webhookView(w *registry.Webhook) Webhook {
	return Webhook{ID: w.ID, URL: w.URL, Kinds: w.Kinds, Description: w.Description, Created: w.Created, State: w.State,
		Cursor: w.Cursor, Attempts: w.Attempts, Failures: w.Failures, FailingSince: w.FailingSince, NextAttempt: w.NextAttempt,
		LastAttempt: w.LastAttempt, LastSuccess: w.LastSuccess, LastError: w.LastError, DisabledAt: w.DisabledAt,
		DisabledReason: w.DisabledReason}
}

// webhookPath splits a webhook route's id: the endpoint id ("" for the
// collection) and what follows it ("", "enable", "deliveries").
func webhookPath(id string) (wid, sub string, p *Problem) {
	_, rest, _ := strings.Cut(id, "/")
	wid, sub, _ = strings.Cut(rest, "/")
	if strings.Contains(sub, "/") || (wid == "" && rest != "") {
		return "", "", problem(http.StatusNotFound, "no webhook route %s", id)
	}
	return wid, sub, nil
}

// webhooks serves the webhook routes for method on the target namespace.
func (s *Server) webhooks(w http.ResponseWriter, r *http.Request, p *principal, t target, id string) error {
	wid, sub, perr := webhookPath(id)
	if perr != nil {
		return perr
	}
	nsp, err := s.reg.NamespaceKey(t.prefix, t.ns)
	if err != nil {
		return err
	}
	route := r.Method + " " + sub
	if wid == "" {
		route = r.Method + " collection"
	}
	switch route {
	case "GET collection":
		return s.listWebhooks(w, nsp)
	case "POST collection":
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.createWebhook(w, r, p, t, nsp)
	case "GET ":
		return s.getWebhook(w, nsp, wid)
	case "DELETE ":
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.deleteWebhook(w, p, t, nsp, wid)
	case "POST enable":
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.enableWebhook(w, p, t, nsp, wid)
	case "GET deliveries":
		return s.webhookDeliveries(w, r, nsp, wid)
	}
	allow := map[string]string{"": "GET, DELETE", "enable": "POST", "deliveries": "GET"}[sub]
	if wid == "" {
		allow = "GET, POST"
	}
	if allow == "" {
		return problem(http.StatusNotFound, "no webhook route %s", id)
	}
	return problem(http.StatusMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, allow).with("Allow", allow)
}

// decodeWebhookRequest decodes and checks a registration body.
func decodeWebhookRequest(body []byte) (WebhookRequest, error) {
	var req WebhookRequest
	if err := decodeStrict(body, &req); err != nil {
		return req, err
	}
	var errs []FieldError
	if msg := checkWebhookURL(req.URL); msg != "" {
		errs = append(errs, FieldError{Field: "url", Message: msg})
	}
	if req.Kinds == nil {
		req.Kinds = slices.Clone(registry.WebhookKinds)
	}
	if len(req.Kinds) == 0 {
		errs = append(errs, FieldError{Field: "kinds", Message: "must name at least one kind of " + strings.Join(registry.WebhookKinds, ", ") + " (or be absent: every kind)"})
	}
	var kinds []string
	for _, k := range req.Kinds {
		if !slices.Contains(registry.WebhookKinds, k) {
			errs = append(errs, FieldError{Field: "kinds", Message: strconv.Quote(k) + " is not an event kind; kinds are " + strings.Join(registry.WebhookKinds, ", ")})
			continue
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	req.Kinds = kinds
	if len(req.Description) > MaxWebhookDescription || !utf8.ValidString(req.Description) || strings.ContainsFunc(req.Description, isControl) {
		errs = append(errs, FieldError{Field: "description", Message: "must be text of at most " + strconv.Itoa(MaxWebhookDescription) + " bytes without control characters"})
	}
	if len(errs) > 0 {
		pr := problem(http.StatusUnprocessableEntity, "the webhook cannot be registered: %s: %s", errs[0].Field, errs[0].Message)
		pr.Errors = errs
		return req, pr
	}
	return req, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkWebhookURL returns why u cannot receive deliveries, "" if it can.
// Where it may connect is decided on every connection (internal/outbound),
// not here: a name's addresses can change.
func checkWebhookURL(u string) string {
	if u == "" {
		return "is required: the absolute http or https URL that receives the deliveries"
	}
	if len(u) > MaxWebhookURLBytes {
		return "must be at most " + strconv.Itoa(MaxWebhookURLBytes) + " bytes"
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

// newWebhookSecret draws an endpoint's signing secret: "whsec_" and 32
// random bytes in unpadded base64url.
func (s *Server) newWebhookSecret() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, p *principal, t target, nsp string) error {
	body, err := readBody(w, r, maxWebhookBody)
	if err != nil {
		return err
	}
	req, err := decodeWebhookRequest(body)
	if err != nil {
		return err
	}
	var idb [8]byte
	if _, err := io.ReadFull(s.rnd, idb[:]); err != nil {
		return err
	}
	secret, err := s.newWebhookSecret()
	if err != nil {
		return err
	}
	now := s.now().UTC()
	wh := registry.Webhook{ID: hex.EncodeToString(idb[:]), Namespace: nsp, Prefix: t.prefix, NS: t.ns, SNAAID: p.snaa.ID,
		URL: req.URL, Kinds: req.Kinds, Description: req.Description, Secret: secret, Created: now, State: registry.WebhookActive}
	target := t.prefix + "/" + t.ns + "/webhooks/" + wh.ID
	err = s.opWriteAs(p.actor(), func(tx registry.Tx) ([]change, error) {
		all, err := tx.Webhooks(nsp)
		if err != nil {
			return nil, err
		}
		if len(all) >= MaxWebhooksPerNamespace {
			return nil, problem(http.StatusConflict, "namespace %s/%s has %d webhooks, the most it may have; delete one first", t.prefix, t.ns, len(all))
		}
		if req.After != nil {
			wh.Cursor = *req.After
		} else if wh.Cursor, err = tx.NamespaceAuditLast(nsp); err != nil {
			return nil, err
		}
		if err := tx.PutWebhook(&wh); err != nil {
			return nil, err
		}
		return []change{{action: registry.ActWebhookCreate, target: target,
			after: map[string]any{"url": wh.URL, "kinds": wh.Kinds, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	v := webhookView(&wh)
	v.Secret = secret
	w.Header().Set("Location", r.URL.Path+"/"+wh.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, &v)
	return nil
}

func (s *Server) listWebhooks(w http.ResponseWriter, nsp string) error {
	var all []registry.Webhook
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		all, err = tx.Webhooks(nsp)
		return err
	}); err != nil {
		return err
	}
	out := WebhookList{Webhooks: make([]Webhook, len(all))}
	for i := range all {
		out.Webhooks[i] = webhookView(&all[i])
	}
	writeJSON(w, http.StatusOK, &out)
	return nil
}

// findWebhook reads endpoint wid of the namespace nsp: 404 if there is none.
func (s *Server) findWebhook(nsp, wid string) (registry.Webhook, error) {
	var (
		wh registry.Webhook
		ok bool
	)
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		wh, ok, err = tx.Webhook(nsp, wid)
		return err
	}); err != nil {
		return wh, err
	}
	if !ok {
		return wh, problem(http.StatusNotFound, "no webhook %s in this namespace", wid)
	}
	return wh, nil
}

func (s *Server) getWebhook(w http.ResponseWriter, nsp, wid string) error {
	wh, err := s.findWebhook(nsp, wid)
	if err != nil {
		return err
	}
	v := webhookView(&wh)
	writeJSON(w, http.StatusOK, &v)
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, p *principal, t target, nsp, wid string) error {
	err := s.opWriteAs(p.actor(), func(tx registry.Tx) ([]change, error) {
		wh, ok, err := tx.Webhook(nsp, wid)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, problem(http.StatusNotFound, "no webhook %s in this namespace", wid)
		}
		if err := tx.DeleteWebhook(nsp, wid); err != nil {
			return nil, err
		}
		return []change{{action: registry.ActWebhookDelete, target: t.prefix + "/" + t.ns + "/webhooks/" + wid,
			before: map[string]any{"url": wh.URL, "kinds": wh.Kinds, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// enableWebhook makes an endpoint active again, its failures forgotten:
// delivery resumes after its cursor at once. An active endpoint is left as
// it is.
func (s *Server) enableWebhook(w http.ResponseWriter, p *principal, t target, nsp, wid string) error {
	var wh registry.Webhook
	err := s.opWriteAs(p.actor(), func(tx registry.Tx) ([]change, error) {
		var ok bool
		var err error
		if wh, ok, err = tx.Webhook(nsp, wid); err != nil {
			return nil, err
		}
		if !ok {
			return nil, problem(http.StatusNotFound, "no webhook %s in this namespace", wid)
		}
		if wh.State == registry.WebhookActive {
			return nil, nil
		}
		before := map[string]any{"state": wh.State, "disabled_reason": wh.DisabledReason}
		wh.State, wh.DisabledAt, wh.DisabledReason = registry.WebhookActive, nil, ""
		wh.Failures, wh.FailingSince, wh.NextAttempt = 0, nil, nil
		if err := tx.PutWebhook(&wh); err != nil {
			return nil, err
		}
		return []change{{action: registry.ActWebhookEnable, target: t.prefix + "/" + t.ns + "/webhooks/" + wid,
			before: before, after: map[string]any{"state": wh.State, "cursor": wh.Cursor}}}, nil
	})
	if err != nil {
		return err
	}
	v := webhookView(&wh)
	writeJSON(w, http.StatusOK, &v)
	return nil
}

func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request, nsp, wid string) error {
	limit := registry.MaxWebhookLog
	if v := r.URL.Query().Get("limit"); v != "" {
		n, ok := parseSeq(v)
		if !ok || n < 1 || n > registry.MaxWebhookLog {
			pr := problem(http.StatusBadRequest, "limit must be an integer from 1 to %d", registry.MaxWebhookLog)
			pr.Errors = []FieldError{{Field: "limit", Message: "must be an integer from 1 to " + strconv.Itoa(registry.MaxWebhookLog)}}
			return pr
		}
		limit = int(n)
	}
	var (
		out WebhookDeliveries
		ok  bool
	)
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		if _, ok, err = tx.Webhook(nsp, wid); err != nil || !ok {
			return err
		}
		out.Deliveries, err = tx.WebhookDeliveries(wid, limit)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return problem(http.StatusNotFound, "no webhook %s in this namespace", wid)
	}
	writeJSON(w, http.StatusOK, &out)
	return nil
}

// webhookRoute is the namespace route tree …/{ns}/webhooks (webhooks
// dispatches under it).
func webhookRoute(s *Server) nsRoute {
	return nsRoute{name: "webhooks", tree: true, h: s.webhooks, ops: []nsOp{
		{"GET", "webhooks", op{summary: "The namespace's webhook endpoints (never their secrets)", auth: "snaa", ok: 200, okSchema: "WebhookList", tag: "snaa"}},
		{"POST", "webhooks", op{summary: "Register a webhook endpoint: the namespace's change feed events of the chosen kinds are POSTed to url, signed (Pidnode-Signature, see README), in order, at least once, retried with backoff for up to 24 h. " +
			"The reply holds the signing secret, shown only this once. At most " + strconv.Itoa(MaxWebhooksPerNamespace) + " per namespace",
			auth: "snaa", request: "WebhookRequest", ok: 201, okSchema: "Webhook", okHeads: []string{"Location"}, errs: []int{409, 422}, tag: "snaa"}},
		{"GET", "webhooks/{webhook_id}", op{summary: "A webhook endpoint and its delivery state: cursor, failures, next attempt, last error, and why the node disabled it", auth: "snaa", ok: 200, okSchema: "Webhook", tag: "snaa"}},
		{"DELETE", "webhooks/{webhook_id}", op{summary: "Remove a webhook endpoint and its delivery log", auth: "snaa", ok: 204, tag: "snaa"}},
		{"POST", "webhooks/{webhook_id}/enable", op{summary: "Enable a disabled webhook endpoint: delivery resumes after its cursor", auth: "snaa", ok: 200, okSchema: "Webhook", tag: "snaa"}},
		{"GET", "webhooks/{webhook_id}/deliveries", op{summary: "The endpoint's last " + strconv.Itoa(registry.MaxWebhookLog) + " delivery attempts, newest first", auth: "snaa", ok: 200, okSchema: "WebhookDeliveries",
			query: []param{{"limit", "1–" + strconv.Itoa(registry.MaxWebhookLog) + ", default " + strconv.Itoa(registry.MaxWebhookLog)}}, tag: "snaa"}},
	}}
}

// webhookSchemas adds the webhook routes' component schemas to m.
func webhookSchemas(m map[string]any) map[string]any {
	u64 := map[string]any{"type": "integer", "minimum": 0}
	kinds := arr(map[string]any{"type": "string", "enum": registry.WebhookKinds})
	m["WebhookRequest"] = obj([]string{"url"}, map[string]any{
		"url":         map[string]any{"type": "string", "maxLength": MaxWebhookURLBytes, "description": "absolute http or https URL without userinfo; connections go only to public addresses unless the operator allows a network (--outbound-allow)"},
		"kinds":       kinds,
		"description": map[string]any{"type": "string", "maxLength": MaxWebhookDescription},
		"after":       u64,
	})
	m["Webhook"] = obj([]string{"id", "url", "kinds", "created", "state", "cursor", "attempts", "failures"}, map[string]any{
		"id": str(), "url": str(), "kinds": kinds, "description": str(), "created": dt(),
		"state":  map[string]any{"type": "string", "enum": []string{registry.WebhookActive, registry.WebhookDisabled}},
		"cursor": u64, "attempts": u64, "failures": u64,
		"failing_since": dt(), "next_attempt": dt(), "last_attempt": dt(), "last_success": dt(), "last_error": str(),
		"disabled_at": dt(), "disabled_reason": str(),
		"secret": map[string]any{"type": "string", "pattern": "^whsec_[A-Za-z0-9_-]{43}$", "description": "only in the reply that registers the endpoint"},
	})
	m["WebhookList"] = obj([]string{"webhooks"}, map[string]any{"webhooks": arr(ref("Webhook"))})
	m["WebhookDeliveries"] = obj([]string{"deliveries"}, map[string]any{"deliveries": arr(obj(
		[]string{"attempt", "time", "first_seq", "last_seq", "events", "ok", "duration_ms"}, map[string]any{
			"attempt": u64, "time": dt(), "first_seq": u64, "last_seq": u64, "events": u64, "ok": map[string]any{"type": "boolean"},
			"status": u64, "error": str(), "detail": str(), "duration_ms": map[string]any{"type": "number"}, "response": str(),
		}))})
	return m
}
