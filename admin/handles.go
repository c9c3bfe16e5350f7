package admin

import (
	"net/http"
	"net/url"
	"strings"

	"pidnode/model"
	"pidnode/read"
	"pidnode/write"
)

// target is the identifier (or namespace) a request addresses, after the
// authorisation checks.
type target struct {
	prefix string // canonical upper case
	ns     string // the SNAA's namespace
}

// write is t as the write service's Target.
func (t target) write() write.Target { return write.Target{Prefix: t.prefix, Namespace: t.ns} }

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
	if id == "" {
		return s.listHandles(w, r, b, t)
	}
	if h, rid, ok := s.ns.routeFor(r.Method, id); ok {
		return h(w, r, p, t, rid)
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
		return s.create(w, r, b, p, t, "", false)
	}
	if h, rid, ok := s.ns.routeFor(r.Method, id); ok {
		return h(w, r, p, t, rid)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if strings.TrimSpace(inm) != "*" {
			return problem(http.StatusBadRequest, "If-None-Match on PUT must be \"*\" (create only if absent)")
		}
		return s.create(w, r, b, p, t, id, true)
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
	id := r.PathValue("id")
	if h, rid, ok := s.ns.routeFor(r.Method, id); ok {
		return h(w, r, p, t, rid)
	} else if id != "" {
		return problem(http.StatusMethodNotAllowed, "POST creates in a namespace (…/handles/{prefix}/{ns}/); use PUT to update an identifier").
			with("Allow", "GET, PUT")
	}
	return s.create(w, r, b, p, t, "", false)
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
	return s.create(w, r, b, p, t, id, false)
}

// deleteOn serves DELETE on base b's identifier pattern: the namespace
// routes (webhooks) with an SNAA's key, identifiers never.
func (s *Server) deleteOn(b *base) handlerFunc {
	routes := s.snaa(b, func(w http.ResponseWriter, r *http.Request, b *base) error {
		p := principalOf(r)
		t, err := s.checkTarget(r, b, p, r.PathValue("prefix"), r.PathValue("ns"))
		if err != nil {
			return err
		}
		h, rid, _ := s.ns.routeFor(r.Method, r.PathValue("id"))
		return h(w, r, p, t, rid)
	})
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, _, ok := s.ns.routeFor(r.Method, r.PathValue("id")); ok {
			return routes(w, r)
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

// create makes a new identifier through the write service: generated
// (customID == "") or custom. ifAbsent: the client sent If-None-Match: *
// (a taken id is 412 rather than 409).
func (s *Server) create(w http.ResponseWriter, r *http.Request, b *base, p *principal, t target, customID string, ifAbsent bool) error {
	a := p.writer()
	if customID != "" {
		// Refused before the body is read; the write service runs the same
		// check again as step 2 of its validation path. A faulty id (not a
		// forbidden one) is reported with the payload's faulty fields.
		if err := s.writes.CheckCustomID(a, t.write(), customID); err != nil && !write.IsFieldError(err) {
			return err
		}
	}
	idem := r.Header.Get("Idempotency-Key")
	if len(idem) > idemKeyMax || model.HasControl(idem) {
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
	req := write.CreateRequest{CustomID: customID, IfAbsent: ifAbsent, Payload: obj}
	if idem != "" {
		req.Idempotency, req.Scope, req.Request, req.Body = idem, b.path, r.URL.Path+"?"+r.URL.RawQuery, body
	}
	res, err := s.writes.Create(a, t.write(), req)
	if err != nil {
		return err
	}
	var ident *Identifier
	if res.Replayed {
		ident = s.read.Identifier(&res.Stored)
	} else {
		s.metrics.creates.Add(1)
		ident = s.read.IdentifierOf(&res.Stored, *res.Content)
		ident.MetaJSON = res.MetaJSON
	}
	w.Header().Set("Location", b.path+"/handles/"+pathEscape(ident.Prefix)+"/"+pathEscape(ident.Namespace)+"/"+pathEscape(ident.ID))
	w.Header().Set("ETag", write.ETag(res.Stored.Version))
	if res.Replayed {
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
	res, err := s.writes.Update(p.writer(), t.write(), write.UpdateRequest{ID: id, Payload: obj, IfMatch: ifMatch})
	if err != nil {
		return err
	}
	if res.Written {
		s.metrics.updates.Add(1)
	}
	w.Header().Set("ETag", write.ETag(res.Stored.Version))
	writeIdentifier(w, http.StatusOK, s.read.Identifier(&res.Stored))
	return nil
}

func (s *Server) readHandle(w http.ResponseWriter, r *http.Request, b *base, t target, id string) error {
	ident, err := s.read.Get(t.prefix, t.ns, id)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", write.ETag(ident.Version))
	if inm := r.Header.Get("If-None-Match"); inm != "" && write.ETagMatches(inm, ident.Version) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	writeIdentifier(w, http.StatusOK, ident)
	return nil
}

// HistoryEntry is one change of an identifier in GET …/{id}/history, from the
// audit log: when, by which key, and the URL and metadata before and after.
type HistoryEntry = read.HistoryEntry

// historyRoute is the namespace route GET …/{id}/history.
func historyRoute(s *Server) nsRoute {
	return nsRoute{suffix: "history", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, id string) error {
		return s.history(w, r, t, id)
	}, ops: []nsOp{{"GET", "history", op{summary: "The identifier's history: every write from the audit log (time, key, URL and metadata before and after), and the record's change log (value index 16)", auth: "snaa", ok: 200, okSchema: "History", okHeads: []string{"ETag"}, tag: "snaa"}}}}
}

// history serves GET …/{id}/history: every audited write of the identifier,
// oldest first (records imported offline have none until their first write
// through the API), and the record's own change log (value index 16) as
// change_log.
func (s *Server) history(w http.ResponseWriter, r *http.Request, t target, id string) error {
	h, err := s.read.History(t.prefix, t.ns, id)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", write.ETag(h.Version))
	writeJSON(w, http.StatusOK, map[string]any{"handle": h.Handle, "version": h.Version, "changes": h.Changes, "change_log": h.ChangeLog})
	return nil
}

// checkStatusFilter refuses a ?status= that no identifier can have, when the
// model's status field lists its values: a typo would otherwise list nothing
// and look like an empty namespace.
func (s *Server) checkStatusFilter(status string) *Problem {
	msg := s.read.StatusFilter(status)
	if msg == "" {
		return nil
	}
	p := problem(http.StatusBadRequest, "status %s", msg)
	p.Errors = []FieldError{{Field: "status", Message: msg}}
	return p
}

// listHandles serves GET …/handles/{prefix}/{ns}/?status=&url=&limit=&cursor=.
// The walk is package read's (Reader.List): the namespace's range, or the URL
// index with url (exact, or a prefix ending in '*'), never records of other
// namespaces; the cursor is opaque and checked to lie inside the namespace.
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
	if ok, err := searchHandles(s.read, s.log, w, r, t, limit); ok || err != nil {
		return err
	}
	items, next, err := s.read.List(t.prefix, t.ns, read.ListQuery{Status: status, URL: q.Get("url"), Cursor: cur, Limit: limit})
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
