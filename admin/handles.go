package admin

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/stdjson"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// target is the identifier (or namespace) a request addresses, after the
// authorisation checks.
type target struct {
	prefix string // canonical upper case
	ns     string // the SNAA's namespace
}

// checkTarget verifies that the path's prefix belongs to base b and the
// namespace to the caller, and that the caller may write under the prefix.
func (s *Server) checkTarget(r *http.Request, b *base, p *principal, pathPrefix, pathNS string) (target, error) {
	if b.prefix == "" {
		return target{}, problem(http.StatusNotFound, "this node has no test prefix; %s is not available", b.path)
	}
	if pathPrefix != "" && !strings.EqualFold(pathPrefix, b.prefix) {
		other := "/pid/v2"
		if !b.test {
			other = "/testpid/v2"
		}
		return target{}, problem(http.StatusNotFound,
			"%s serves prefix %s only; identifiers under %s are reached through %s if this node serves it",
			b.path, b.prefix, pathPrefix, other)
	}
	if !p.snaa.MayWrite(b.prefix) {
		return target{}, problem(http.StatusForbidden, "SNAA %s may not use prefix %s (allowed: %s)",
			p.snaa.ID, b.prefix, strings.Join(p.snaa.Prefixes, ", "))
	}
	if pathNS != "" && !strings.EqualFold(strings.ReplaceAll(pathNS, "-", ""), p.snaa.Namespace) {
		return target{}, problem(http.StatusForbidden, "namespace %s is not yours; your namespace is %s", pathNS, p.snaa.Namespace)
	}
	return target{prefix: b.prefix, ns: p.snaa.Namespace}, nil
}

func (s *Server) getHandles(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	t, err := s.checkTarget(r, b, p, r.PathValue("prefix"), r.PathValue("ns"))
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	switch {
	case id == "":
		return s.listHandles(w, r, b, t)
	case isWebhookPath(id):
		return s.webhooks(w, r, p, t, id)
	case strings.HasSuffix(id, "/history"):
		return s.history(w, r, t, strings.TrimSuffix(id, "/history"))
	case strings.EqualFold(id, "stats"):
		return s.serveStats(w, r, t, "")
	case strings.EqualFold(id, "events"):
		return s.events(w, r, p, t)
	case strings.EqualFold(id, "linkcheck"):
		return s.linkcheckList(w, r, t)
	case strings.HasSuffix(id, "/linkcheck"):
		return s.linkcheckOne(w, r, t, strings.TrimSuffix(id, "/linkcheck"))
	case strings.HasSuffix(id, "/stats"):
		return s.serveStats(w, r, t, strings.TrimSuffix(id, "/stats"))
	}
	return s.readHandle(w, r, b, t, id)
}

func (s *Server) putHandles(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	t, err := s.checkTarget(r, b, p, r.PathValue("prefix"), r.PathValue("ns"))
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if id == "" {
		return s.create(w, r, b, p, t, "", 0)
	}
	if isWebhookPath(id) {
		return s.webhooks(w, r, p, t, id)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if strings.TrimSpace(inm) != "*" {
			return problem(http.StatusBadRequest, "If-None-Match on PUT must be \"*\" (create only if absent)")
		}
		return s.create(w, r, b, p, t, id, http.StatusPreconditionFailed)
	}
	return s.update(w, r, b, p, t, id)
}

func (s *Server) postHandles(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	t, err := s.checkTarget(r, b, p, r.PathValue("prefix"), r.PathValue("ns"))
	if err != nil {
		if isBulk(r) {
			if lerr := s.limit(p.key.ID, p.snaa.ID); lerr != nil {
				return lerr
			}
		}
		return err
	}
	if id := r.PathValue("id"); isWebhookPath(id) {
		return s.webhooks(w, r, p, t, id)
	} else if strings.EqualFold(id, "bulk") {
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.bulk(w, r, p, t)
	} else if id != "" {
		return problem(http.StatusMethodNotAllowed, "POST creates in a namespace (…/handles/{prefix}/{ns}/); use PUT to update an identifier").
			with("Allow", "GET, PUT")
	}
	return s.create(w, r, b, p, t, "", 0)
}

// createCustomQuery serves PUT {base}?customid={id}: the namespace is the key's.
func (s *Server) createCustomQuery(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	t, err := s.checkTarget(r, b, p, "", "")
	if err != nil {
		return err
	}
	id := r.URL.Query().Get("customid")
	if id == "" {
		return problem(http.StatusBadRequest, "PUT %s needs ?customid={id}; to create with a generated id PUT %s/handles/%s/%s/",
			b.path, b.path, t.prefix, t.ns)
	}
	return s.create(w, r, b, p, t, id, http.StatusConflict)
}

// deleteOn serves DELETE on base b's identifier pattern: the webhook
// routes (webhooks.go) with an SNAA's key, identifiers never.
func (s *Server) deleteOn(b *base) handlerFunc {
	hooks := s.snaa(b, func(w http.ResponseWriter, r *http.Request, b *base) error {
		p := principalOf(r)
		t, err := s.checkTarget(r, b, p, r.PathValue("prefix"), r.PathValue("ns"))
		if err != nil {
			return err
		}
		return s.webhooks(w, r, p, t, r.PathValue("id"))
	})
	return func(w http.ResponseWriter, r *http.Request) error {
		if isWebhookPath(r.PathValue("id")) {
			return hooks(w, r)
		}
		return s.deleteHandle(w, r)
	}
}

func (s *Server) deleteHandle(w http.ResponseWriter, r *http.Request) error {
	return problem(http.StatusMethodNotAllowed,
		"identifiers are persistent and cannot be deleted; to retire one, update metadata.status to OBSOLETED "+
			"(optionally with an IS_OBSOLETED_BY related identifier) or DEPRECATED, and it will resolve to a tombstone page").
		with("Allow", "GET, PUT")
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"snaa":       p.snaa,
		"key":        map[string]string{"id": p.key.ID, "name": p.key.Name},
		"base":       b.path,
		"prefix":     b.prefix,
		"may_write":  b.prefix != "" && p.snaa.MayWrite(b.prefix),
		"collection": b.path + "/handles/" + b.prefix + "/" + p.snaa.Namespace + "/",
	})
	return nil
}

// idemKeyMax bounds the Idempotency-Key header.
const idemKeyMax = 255

// create makes a new identifier: generated (id == "") or custom. existsStatus
// is the reply when a custom id is taken (409 for ?customid, 412 for If-None-Match).
func (s *Server) create(w http.ResponseWriter, r *http.Request, b *base, p *principal, t target, customID string, existsStatus int) error {
	if customID != "" {
		// Refused before the body is read; the bulk route runs the same
		// check as the first step of checkCreate.
		if err := checkCustomID(p, t, customID); err != nil {
			return err
		}
	}
	idem := r.Header.Get("Idempotency-Key")
	if len(idem) > idemKeyMax || hasControl(idem) {
		return problem(http.StatusBadRequest, "Idempotency-Key must be at most %d printable characters", idemKeyMax)
	}
	body, err := readBody(w, r, s.maxBody)
	if err != nil {
		return err
	}
	obj, err := model.DecodeObject(body)
	if err != nil {
		return err
	}
	req, err := s.checkCreate(p, t, customID, obj)
	if err != nil {
		return err
	}
	var idemKey []byte
	var bodyHash string
	if idem != "" {
		idemKey = []byte(p.snaa.ID + " " + b.path + " " + idem)
		h := sha256.New()
		h.Write([]byte(r.URL.Path + "?" + r.URL.RawQuery + "\n"))
		h.Write(body)
		bodyHash = hex.EncodeToString(h.Sum(nil))
	}
	now := s.now()
	// Everything but the id's collision check and the bucket writes is done
	// here, before the write joins a commit group (commit.go).
	pc, perr, err := s.prepareCreate(p, t, customID, *req.Payload.URL, req.Meta, now)
	if err != nil {
		return err
	}
	if perr != nil {
		return perr
	}

	var (
		o        outcome
		key      string
		stored   store.Stored
		replayed bool
	)
	err = s.w.CommitAs(p.snaa.ID, 1, func(tx registry.Tx) error {
		o, replayed = outcome{}, false
		if idemKey != nil {
			ir, ok, err := tx.Idem(string(idemKey))
			if err != nil {
				return err
			}
			if ok && now.Sub(ir.Created) < s.idemTTL {
				if ir.BodyHash != bodyHash {
					return o.fail(problem(http.StatusUnprocessableEntity,
						"Idempotency-Key %q was already used with a different request; use a new key for a new identifier", idem))
				}
				st, found, err := tx.Record(ir.Key)
				if err != nil {
					return err
				}
				if found {
					key, stored, replayed = ir.Key, st, true
					return nil
				}
			}
		}
		res, perr, err := s.txCreatePrepared(tx, &pc, existsStatus)
		if err != nil || perr != nil {
			o.err = perr
			return err
		}
		key, stored = res.key, res.stored
		if idemKey != nil {
			if err := tx.PutIdem(string(idemKey), &registry.IdemRecord{BodyHash: bodyHash, Key: key, Created: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if o.err != nil {
		return o.err
	}
	var ident *Identifier
	if replayed {
		ident = s.identifier(&stored)
	} else {
		s.metrics.creates.Add(1)
		if s.inv != nil {
			s.inv.Invalidate(key)
		}
		ident = s.identifierOf(&stored, pc.content)
		ident.metaJSON = pc.metaJSON
	}
	w.Header().Set("Location", b.path+"/handles/"+pathEscape(ident.Prefix)+"/"+pathEscape(ident.Namespace)+"/"+pathEscape(ident.ID))
	w.Header().Set("ETag", etag(stored.Version))
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeIdentifier(w, http.StatusCreated, ident)
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, b *base, p *principal, t target, id string) error {
	ifMatch := r.Header.Get("If-Match")
	body, err := readBody(w, r, s.maxBody)
	if err != nil {
		return err
	}
	obj, err := model.DecodeObject(body)
	if err != nil {
		return err
	}
	req, err := model.CheckPayload(obj)
	if err != nil {
		return err
	}
	display := s.namer.Full(t.prefix, t.ns, id)
	key, _, err := s.namer.Key(display)
	if err != nil {
		return problem(http.StatusNotFound, "no identifier %s: %v", display, err)
	}
	now := s.now()
	var (
		o       outcome
		stored  store.Stored
		written bool
	)
	err = s.w.CommitAs(p.snaa.ID, 1, func(tx registry.Tx) error {
		o, written = outcome{}, false
		res, perr, err := s.txUpdate(tx, p, t, key, display, req, ifMatch, now)
		if err != nil || perr != nil {
			o.err = perr
			return err
		}
		stored, written = res.stored, res.written
		return nil
	})
	if err != nil {
		return err
	}
	if o.err != nil {
		return o.err
	}
	if written {
		s.metrics.updates.Add(1)
		if s.inv != nil {
			s.inv.Invalidate(key)
		}
	}
	w.Header().Set("ETag", etag(stored.Version))
	writeIdentifier(w, http.StatusOK, s.identifier(&stored))
	return nil
}

func (s *Server) readHandle(w http.ResponseWriter, r *http.Request, b *base, t target, id string) error {
	display := s.namer.Full(t.prefix, t.ns, id)
	key, _, err := s.namer.Key(display)
	if err != nil {
		return problem(http.StatusNotFound, "no identifier %s: %v", display, err)
	}
	st, ok, err := s.db.Get(key)
	if err != nil {
		return err
	}
	if !ok {
		return problem(http.StatusNotFound, "no identifier %s", display)
	}
	w.Header().Set("ETag", etag(st.Version))
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, st.Version) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	writeIdentifier(w, http.StatusOK, s.identifier(&st))
	return nil
}

// HistoryEntry is one change of an identifier in GET …/{id}/history, from the
// audit log: when, by which key, and the URL and metadata before and after.
type HistoryEntry struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Action  string    `json:"action"`
	KeyID   string    `json:"key_id,omitempty"`
	KeyName string    `json:"key_name,omitempty"`
	Before  any       `json:"before,omitempty"`
	After   any       `json:"after,omitempty"`
}

// history serves GET …/{id}/history: every audited write of the identifier,
// oldest first (records imported offline have none until their first write
// through the API), and the record's own change log (value index 16) as
// change_log.
func (s *Server) history(w http.ResponseWriter, r *http.Request, t target, id string) error {
	display := s.namer.Full(t.prefix, t.ns, id)
	key, _, err := s.namer.Key(display)
	if err != nil {
		return problem(http.StatusNotFound, "no identifier %s: %v", display, err)
	}
	var (
		st      store.Stored
		ok      bool
		entries []AuditEntry
	)
	err = s.reg.View(func(tx registry.Tx) error {
		var err error
		if st, ok, err = tx.Record(key); err != nil || !ok {
			return err
		}
		entries, err = tx.HandleAudit(key)
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		return problem(http.StatusNotFound, "no identifier %s", display)
	}
	changes := make([]HistoryEntry, len(entries))
	for i, e := range entries {
		_, kid, _ := strings.Cut(e.Actor, " key:")
		changes[i] = HistoryEntry{Seq: e.Seq, Time: e.Time, Action: e.Action, KeyID: kid, KeyName: e.KeyName, Before: e.Before, After: e.After}
	}
	c := s.model.Extract(st.Record.Values)
	if c.Changes == nil {
		c.Changes = []json.RawMessage{}
	}
	w.Header().Set("ETag", etag(st.Version))
	writeJSON(w, http.StatusOK, map[string]any{"handle": st.Record.Handle, "version": st.Version, "changes": changes, "change_log": c.Changes})
	return nil
}

// checkStatusFilter refuses a ?status= that no identifier can have, when the
// model's status field lists its values: a typo would otherwise list nothing
// and look like an empty namespace.
func (s *Server) checkStatusFilter(status string) *Problem {
	f := s.model.Field("status")
	if status == "" || f == nil || f.Schema == nil || len(f.Schema.Enum) == 0 {
		return nil
	}
	for _, v := range f.Schema.Enum {
		if strings.EqualFold(v, status) {
			return nil
		}
	}
	msg := "must be one of " + strings.Join(f.Schema.Enum, ", ")
	p := problem(http.StatusBadRequest, "status %s", msg)
	p.Errors = []FieldError{{Field: "status", Message: msg}}
	return p
}

// listHandles serves GET …/handles/{prefix}/{ns}/?status=&url=&limit=&cursor=.
// Without url it walks the namespace's range of the records bucket; with url
// (exact, or a prefix ending in '*') it walks the URL index (urlindex.go), so
// neither reads records of other namespaces. status filters what either walk
// finds. The cursor is the last key returned (record key or index key), opaque
// to the client and checked to lie inside the caller's namespace.
func (s *Server) listHandles(w http.ResponseWriter, r *http.Request, b *base, t target) error {
	cur, limit, p := pageParams(r)
	if p != nil {
		return p
	}
	q := r.URL.Query()
	status := strings.ToUpper(q.Get("status"))
	if perr := s.checkStatusFilter(status); perr != nil {
		return perr
	}
	wantURL := q.Get("url")
	rng, err := s.reg.NamespaceRange(t.prefix, t.ns, wantURL)
	if err != nil {
		return err
	}
	start := rng
	if cur != "" {
		c, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || !bytes.HasPrefix(c, rng) {
			return problem(http.StatusBadRequest, "invalid cursor")
		}
		start = append(c, 0)
	}
	items := []Identifier{}
	next := ""
	err = s.reg.View(func(tx registry.Tx) error {
		return tx.ScanNamespace(wantURL != "", rng, start, func(k []byte, st *store.Stored) (bool, error) {
			if len(items) == limit {
				next = base64.RawURLEncoding.EncodeToString([]byte(items[len(items)-1].key))
				return false, nil
			}
			if st == nil {
				return true, nil
			}
			ident := s.identifier(st)
			if status != "" {
				if sv, _ := ident.Metadata["status"].(string); !strings.EqualFold(sv, status) {
					return true, nil
				}
			}
			ident.key = string(k)
			items = append(items, *ident)
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	out := map[string]any{"items": items}
	if next != "" {
		out["next_cursor"] = next
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// identifier builds the reply body of a stored record.
func (s *Server) identifier(st *store.Stored) *Identifier {
	return s.identifierOf(st, s.model.Extract(st.Record.Values))
}

// identifierOf is identifier with the record's content already extracted.
func (s *Server) identifierOf(st *store.Stored, c model.Content) *Identifier {
	prefix, ns, id := splitDisplay(st.Record.Handle)
	// The resolve link is the no-redirect one without its query.
	noRedirect := s.public + "/" + prefix + "/" + ns + "/" + id + "?noredirect"
	ident := &Identifier{
		Handle: st.Record.Handle, Prefix: prefix, Namespace: ns, ID: id, Metadata: c.Metadata,
		Version: st.Version, Created: st.Created.UTC().Truncate(time.Second), Updated: st.Updated.UTC().Truncate(time.Second),
		Links: Links{
			Resolve:    noRedirect[:len(noRedirect)-len("?noredirect")],
			API:        s.public + "/api/handles/" + st.Record.Handle,
			NoRedirect: noRedirect,
		},
	}
	if c.URL != nil {
		ident.URL = *c.URL
	}
	return ident
}

// auditContent is the before/after of a handle write in the audit log.
func auditContent(c model.Content) map[string]any {
	m := map[string]any{"metadata": c.Metadata}
	if c.URL != nil {
		m["url"] = *c.URL
	}
	return m
}

// marshalAuditContent is json.Marshal(auditContent(c)), without reflection
// where stdjson can encode c's metadata. meta is the metadata's JSON without
// HTML escaping (the reply's, Identifier.metaJSON), nil if not encoded: it is
// encoded once for both unless it holds <, > or &, the only characters
// HTML escaping changes.
func marshalAuditContent(c model.Content) (after, meta []byte, err error) {
	meta, ok := stdjson.AppendObject(make([]byte, 0, 1024), c.Metadata, false)
	if !ok {
		after, err = json.Marshal(auditContent(c))
		return after, nil, err
	}
	after = make([]byte, 0, len(meta)+64)
	after = append(after, `{"metadata":`...)
	if bytes.ContainsAny(meta, "<>&") {
		after, _ = stdjson.AppendObject(after, c.Metadata, true)
	} else {
		after = append(after, meta...)
	}
	if c.URL != nil {
		after = append(after, `,"url":`...)
		after = stdjson.AppendString(after, *c.URL, true)
	}
	return append(after, '}'), meta, nil
}

func etag(v uint64) string { return `"` + strconv.FormatUint(v, 10) + `"` }

// etagMatches reports whether an If-Match / If-None-Match list names version v.
func etagMatches(h string, v uint64) bool {
	want := etag(v)
	for _, t := range strings.Split(h, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

func pathEscape(s string) string {
	if !needsPathEscape(s) {
		return s
	}
	// Custom ids may hold '/', which stays a path separator.
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// outcome carries a handler's verdict out of a (possibly re-run) Commit
// callback: a callback that refuses returns nil without writing, so that the
// other writes of its group are not rolled back and re-run.
type outcome struct{ err error }

func (o *outcome) fail(err error) error { o.err = err; return nil }

// writeResult is the effect of one create or update inside a transaction.
type writeResult struct {
	key     string
	stored  store.Stored
	written bool
}

func agentOf(p *principal) model.Agent {
	return model.Agent{Name: p.snaa.Organisation, EmailAddress: p.snaa.TechnicalContact.Email, Role: "OWNER"}
}

// preparedCreate is a create with everything that does not need the write
// transaction done: id checked, record values built, audit entry encoded.
type preparedCreate struct {
	p        *principal
	t        target
	customID string
	// display and key: the custom id's, or a generated candidate that the
	// transaction keeps unless it is taken.
	display, key string
	vals         []handlev.Value
	url          string
	now          time.Time
	content      model.Content // what the API shows of vals
	metaJSON     []byte        // content.Metadata as the reply writes it (Identifier.metaJSON), or nil
	after        []byte        // the audit entry's "after", JSON
	auditTail    []byte        // the audit entry for display (auditTail)
}

// prepareCreate does the work of a create that needs no transaction:
// building the values (change log JSON included), the audit entry's JSON and a
// generated id candidate. perr is the client's fault (a custom id that makes
// no key). u and meta must be validated.
func (s *Server) prepareCreate(p *principal, t target, customID string, u string, meta map[string]any, now time.Time) (pc preparedCreate, perr, err error) {
	pc = preparedCreate{p: p, t: t, customID: customID, url: u, now: now}
	if customID != "" {
		pc.display = s.namer.Full(t.prefix, t.ns, customID)
		k, _, err := s.namer.Key(pc.display)
		if err != nil {
			return pc, &model.ValidationError{Errors: []FieldError{{Field: "id", Message: err.Error()}}}, nil
		}
		pc.key = k
	} else if pc.display, pc.key, err = s.mintKey(t); err != nil {
		return pc, nil, err
	}
	// The values do not depend on the id: the record holds its admin handle,
	// not its own name.
	pc.vals, _ = s.model.Build(model.BuildInput{Display: pc.display, AdminHandle: s.namer.Full(t.prefix, t.ns, "ADMIN"), URL: u,
		Metadata: meta, Agent: agentOf(p), Now: now, Create: true})
	if perr := s.model.CheckRecord(pc.display, pc.vals); perr != nil {
		return pc, perr, nil
	}
	pc.content = s.model.CreatedContent(u, meta, pc.vals)
	if pc.after, pc.metaJSON, err = marshalAuditContent(pc.content); err != nil {
		return pc, nil, err
	}
	pc.auditTail, err = s.createAuditTail(p, pc.display, pc.after)
	return pc, nil, err
}

// mintKey returns a fresh generated id's display handle and storage key.
func (s *Server) mintKey(t target) (display, key string, err error) {
	id, err := handlev.Mint(t.ns, s.rnd)
	if err != nil {
		return "", "", err
	}
	display = s.namer.Full(t.prefix, t.ns, id)
	key, _, err = s.namer.Key(display)
	return display, key, err
}

func (s *Server) createAuditTail(p *principal, display string, after []byte) ([]byte, error) {
	return registry.AuditTailAfter(&AuditEntry{Actor: p.actor(), KeyName: p.key.Name, Action: ActHandleCreate, Target: display}, after)
}

// txCreatePrepared writes a prepared create inside tx: the id's collision
// check (a taken generated candidate is replaced by a new one), the record,
// its URL index entry and its audit entry. It does not modify pc, so that a
// commit group can run it again.
func (s *Server) txCreatePrepared(tx registry.Tx, pc *preparedCreate, existsStatus int) (w writeResult, perr, err error) {
	display, tail := pc.display, pc.auditTail
	w.key = pc.key
	if tx.HasRecord(w.key) {
		if pc.customID != "" {
			return w, problem(existsStatus, "identifier %s already exists; update it with PUT (without If-None-Match)", display), nil
		}
		for try := 1; ; try++ {
			if try == 16 {
				return w, nil, errors.New("admin: no free generated id after 16 tries")
			}
			if display, w.key, err = s.mintKey(pc.t); err != nil {
				return w, nil, err
			}
			if !tx.HasRecord(w.key) {
				break
			}
		}
		if tail, err = s.createAuditTail(pc.p, display, pc.after); err != nil {
			return w, nil, err
		}
	}
	w.stored = store.Stored{Record: handlev.Record{Handle: display, Values: pc.vals}, Version: 1, Created: pc.now, Updated: pc.now}
	if err := tx.PutRecord(w.key, &w.stored); err != nil {
		return w, s.notStorable(err), nonStorable(err)
	}
	w.written = true
	if err := tx.IndexURL(w.key, "", pc.url); err != nil {
		return w, nil, err
	}
	return w, nil, tx.AppendHandleAudit(w.key, tail)
}

// txUpdate merges pl into the identifier stored under key inside tx.
// It is step 4 of the validation path (check.go) of an update.
func (s *Server) txUpdate(tx registry.Tx, p *principal, t target, key, display string, req *model.Write, ifMatch string, now time.Time) (w writeResult, perr, err error) {
	w.key = key
	old, ok, err := tx.Record(key)
	if err != nil {
		return w, nil, err
	}
	if !ok {
		return w, problem(http.StatusNotFound,
			"no identifier %s; to create it with this custom id send If-None-Match: *", display), nil
	}
	if ifMatch != "" && !etagMatches(ifMatch, old.Version) {
		return w, problem(http.StatusPreconditionFailed,
			"identifier %s is at version %d (ETag %s), not %s; read it again and retry", old.Record.Handle, old.Version, etag(old.Version), ifMatch), nil
	}
	before := s.model.Extract(old.Record.Values)
	newURL, meta, verr := s.model.Merge(before, req)
	if verr != nil {
		return w, verr, nil
	}
	vals, entries := s.model.Build(model.BuildInput{Display: old.Record.Handle, AdminHandle: s.namer.Full(t.prefix, t.ns, "ADMIN"),
		URL: newURL, Metadata: meta, Old: old.Record.Values, Agent: agentOf(p), Now: now})
	if entries == nil {
		w.stored = old // nothing changed: no write, no new version
		return w, nil, nil
	}
	if perr := s.model.CheckRecord(old.Record.Handle, vals); perr != nil {
		return w, perr, nil
	}
	w.stored = store.Stored{Record: handlev.Record{Handle: old.Record.Handle, Values: vals},
		Version: old.Version + 1, Created: old.Created, Updated: now}
	if err := tx.PutRecord(key, &w.stored); err != nil {
		return w, s.notStorable(err), nonStorable(err)
	}
	w.written = true
	oldURL := ""
	if before.URL != nil {
		oldURL = *before.URL
	}
	if err := tx.IndexURL(key, oldURL, newURL); err != nil {
		return w, nil, err
	}
	return w, nil, s.auditHandle(tx, p, ActHandleUpdate, key, old.Record.Handle, auditContent(before), auditContent(s.model.Extract(vals)))
}

// notStorable is the client's error for a record the store refused as not
// storable, which model.Model.CheckRecord should have refused first: the
// write fails alone (in a bulk, as one item) with 422, and the operator's log
// gets a warning, since the checks missed a limit. Other errors are nil here
// and fatal (nonStorable).
func (s *Server) notStorable(err error) error {
	if !errors.Is(err, store.ErrNotStorable) {
		return nil
	}
	s.log.Warn("the store refused a record the checks accepted", "err", err)
	return &model.ValidationError{Errors: []FieldError{{Field: "(record)", Message: strings.TrimPrefix(err.Error(), "store: ")}}}
}

// nonStorable is err unless it is the store's refusal of a record (notStorable).
func nonStorable(err error) error {
	if errors.Is(err, store.ErrNotStorable) {
		return nil
	}
	return err
}

// needsPathEscape reports whether pathEscape could change s: whether it
// holds a byte other than '/' and those url.PathEscape never escapes
// (RFC 3986 unreserved characters).
func needsPathEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
		default:
			return true
		}
	}
	return false
}

// splitDisplay cuts "<PREFIX>/<svc>/<NS>/<ID>" into its parts (the ID may
// hold '/'); "<PREFIX>/<NS>/<ID>" too.
func splitDisplay(h string) (prefix, ns, id string) {
	i := strings.IndexByte(h, '/')
	if i < 0 {
		return h, "", ""
	}
	rest := h[i+1:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return h, "", ""
	}
	last := rest[j+1:]
	if k := strings.IndexByte(last, '/'); k >= 0 {
		return h[:i], last[:k], last[k+1:]
	}
	return h[:i], rest[:j], last
}
