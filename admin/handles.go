package admin

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"pidnode/model"
	"pidnode/read"
	"pidnode/write"
)

// snaaAPI is an SNAA's routes (docs/product.md §4) on each base, /pid/v2
// and /testpid/v2, each behind one of the SNAA's keys (gate.snaa): who it
// is (…/me), its own keys (snaakeys.go), and the identifiers of its
// namespace: create, merge update, read, list and search (listsearch.go),
// history, bulk (bulk.go), and the features' routes under the namespace
// from the table (nsroutes.go). The writes are package write's, the reads
// package read's; snaaAPI checks the path against the caller, reads the
// request and writes the reply.
type snaaAPI struct {
	*gate
	// ns is the namespace route table; the write service is handed the
	// custom ids it reserves.
	ns nsTable
	// writes makes the identifier writes (create, update, bulk); read
	// reads them (one, a namespace's page, the history).
	writes  *write.Service
	read    *read.Reader
	model   *model.Model
	maxBody int64
	log     *slog.Logger
}

// routes registers the SNAA routes of base b on rt.
func (s *snaaAPI) routes(rt *router, b *base) {
	p := b.path
	where := "the production prefix"
	if b.test {
		where = "the test prefix"
	}
	idem := param{"Idempotency-Key", "a retried create with the same key and body returns the same identifier"}
	rt.handle("GET", p+"/me", s.snaa(b, s.whoami),
		op{summary: "The calling SNAA, its namespace and whether it may write under " + where, auth: "snaa", ok: 200, okSchema: "WhoAmI", tag: "snaa"})
	rt.methodFallback(p+"/me", "GET")
	s.keyRoutes(rt, b)
	rt.handle("PUT", p, s.snaa(b, s.createCustomQuery),
		op{summary: "Create an identifier with a custom id under " + where + " (namespace from the key)", auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", errs: []int{409}, query: []param{{"customid", "the custom id (required)"}}, headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"})
	rt.methodFallback(p, "PUT")
	// One pattern serves the collection (empty id: create with a generated
	// id, list) and the items (custom ids may hold '/'); ServeMux cannot
	// register "{ns}/{$}" beside "{ns}/{id...}" for different methods.
	// The routes under the collection besides the identifiers come
	// from the namespace table (nsroutes.go), with their operations.
	hp := p + "/handles/{prefix}/{ns}/{id...}"
	coll, item := p+"/handles/{prefix}/{ns}/", p+"/handles/{prefix}/{ns}/{id}"
	get := s.ns.ops("GET", coll, item)
	get[coll] = op{summary: "List the namespace's identifiers: cursor pages, or with q, sort or page numbered pages of a search with their total, or with format (or Accept) an export of every match", auth: "snaa", ok: 200, okSchema: "IdentifierList", query: []param{{"status", "only this status"}, {"url", "only identifiers with this landing page URL; a trailing * matches a URL prefix (reverse lookup through the URL index); cursor pages only"}, {"q", "words, each of which must start a word of the id, label, landing page URL or description (any case; letters and digits make words)"}, {"sort", "id (default), label, created or changed; a leading - reverses the order"}, {"page", "page number from 1 (a search page: total, page, page_size and pages in the reply)"}, {"format", "csv or jsonl: every match of the search as an export (at most 100000), in place of a page"}, {"limit", "1–1000, default 100 (the page size)"}, {"cursor", "next_cursor of the previous page; cursor pages only"}}, headers: []param{{"Accept", "application/json (default), text/csv or application/x-ndjson (an export, as format)"}}, export: "columns " + strings.Join(read.SummaryColumns, ", "), tag: "snaa"}
	get[item] = op{summary: "Read an identifier", auth: "snaa", ok: 200, okSchema: "Identifier", okHeads: []string{"ETag"}, headers: []param{{"If-None-Match", "ETag of a copy you hold: 304 if unchanged"}}, tag: "snaa"}
	rt.handleDocs("GET", hp, s.snaa(b, s.getHandles), get)
	put := s.ns.ops("PUT", coll, item)
	put[coll] = op{summary: "Create an identifier with a generated id under " + where, auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"}
	put[item] = op{summary: "Update an identifier by merge (present fields replace, null removes an optional field, absent fields stay); with If-None-Match: * create it with this custom id. Identifiers are persistent: there is no DELETE (405); to retire one, set metadata.status to OBSOLETED or DEPRECATED", auth: "snaa", request: "HandleUpdate", ok: 200, okSchema: "Identifier", errs: []int{409, 412}, headers: []param{{"If-Match", "ETag (version) the update is based on: 412 if it changed"}, {"If-None-Match", "\"*\": create with this custom id (201, or 412 if it exists)"}, idem}, okHeads: []string{"ETag"}, tag: "snaa"}
	rt.handleDocs("PUT", hp, s.snaa(b, s.putHandles), put)
	post := s.ns.ops("POST", coll, item)
	post[coll] = op{summary: "Create an identifier with a generated id under " + where + " (same as PUT)", auth: "snaa", request: "HandleCreate", ok: 201, okSchema: "Identifier", errs: []int{405}, headers: []param{idem}, okHeads: []string{"Location", "ETag"}, tag: "snaa"}
	rt.handleDocs("POST", hp, s.snaa(b, s.postHandles), post)
	// DELETE on an identifier or the collection is 405 (identifiers are
	// persistent), which the OpenAPI description leaves out: only the
	// namespace routes' DELETEs are operations.
	rt.handleDocs("DELETE", hp, s.deleteOn(b), s.ns.ops("DELETE", coll, item))
	rt.methodFallback(hp, "GET, PUT, POST")
}

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
func (s *snaaAPI) checkTarget(r *http.Request, b *base, p *principal, pathPrefix, pathNS string) (target, error) {
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

func (s *snaaAPI) getHandles(w http.ResponseWriter, r *http.Request, b *base) error {
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

func (s *snaaAPI) putHandles(w http.ResponseWriter, r *http.Request, b *base) error {
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

func (s *snaaAPI) postHandles(w http.ResponseWriter, r *http.Request, b *base) error {
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
func (s *snaaAPI) createCustomQuery(w http.ResponseWriter, r *http.Request, b *base) error {
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
func (s *snaaAPI) deleteOn(b *base) handlerFunc {
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

func (s *snaaAPI) deleteHandle(w http.ResponseWriter, r *http.Request) error {
	return problem(http.StatusMethodNotAllowed,
		"identifiers are persistent and cannot be deleted; to retire one, update metadata.status to OBSOLETED "+
			"(optionally with an IS_OBSOLETED_BY related identifier) or DEPRECATED, and it will resolve to a tombstone page").
		with("Allow", "GET, PUT")
}

func (s *snaaAPI) whoami(w http.ResponseWriter, r *http.Request, b *base) error {
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
func (s *snaaAPI) create(w http.ResponseWriter, r *http.Request, b *base, p *principal, t target, customID string, ifAbsent bool) error {
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

func (s *snaaAPI) update(w http.ResponseWriter, r *http.Request, b *base, p *principal, t target, id string) error {
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

func (s *snaaAPI) readHandle(w http.ResponseWriter, r *http.Request, b *base, t target, id string) error {
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
func historyRoute(s *snaaAPI) nsRoute {
	return nsRoute{suffix: "history", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, id string) error {
		return s.history(w, r, t, id)
	}, ops: []nsOp{{"GET", "history", op{summary: "The identifier's history: every write from the audit log (time, key, URL and metadata before and after), and the record's change log (value index 16)", auth: "snaa", ok: 200, okSchema: "History", okHeads: []string{"ETag"}, tag: "snaa"}}}}
}

// history serves GET …/{id}/history: every audited write of the identifier,
// oldest first (records imported offline have none until their first write
// through the API), and the record's own change log (value index 16) as
// change_log.
func (s *snaaAPI) history(w http.ResponseWriter, r *http.Request, t target, id string) error {
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
func (s *snaaAPI) checkStatusFilter(status string) *Problem {
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
func (s *snaaAPI) listHandles(w http.ResponseWriter, r *http.Request, b *base, t target) error {
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
