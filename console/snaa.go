package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/read"
	"pidnode/registry"
	"pidnode/write"
)

// The SNAA's pages of the console (docs/product.md §4.2), in the session's
// namespace: reads through package read, writes through package write,
// each admitted through access.Admission as the API admits the same
// request, with the API's checks in the API's order.

func (s *Server) snaaConsoleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/ids", s.console(false, s.pageIDs))
	mux.HandleFunc("GET /console/ids/export", s.console(false, s.pageExport))
	mux.HandleFunc("GET /console/new", s.console(false, s.pageNew))
	mux.HandleFunc("POST /console/new", s.console(false, s.pageNew))
	mux.HandleFunc("GET /console/id", s.console(false, s.pageID))
	mux.HandleFunc("GET /console/edit", s.console(false, s.pageEdit))
	mux.HandleFunc("POST /console/edit", s.console(false, s.pageEdit))
	mux.HandleFunc("POST /console/status", s.console(false, s.pageStatus))
	mux.HandleFunc("GET /console/bulk", s.console(false, s.pageBulk))
	mux.HandleFunc("POST /console/bulk", s.console(false, s.pageBulk))
	mux.HandleFunc("GET /console/bulk/template", s.console(false, s.pageBulkTemplate))
	mux.HandleFunc("GET /console/keys", s.console(false, s.pageKeys))
	mux.HandleFunc("POST /console/keys", s.console(false, s.pageKeys))
	mux.HandleFunc("POST /console/keys/revoke", s.console(false, s.pageRevokeKey))
	mux.HandleFunc("GET /console/links", s.console(false, s.pageLinks))
	mux.HandleFunc("GET /console/stats", s.console(false, s.pageStats))
	mux.HandleFunc("GET /console/events", s.console(false, s.pageEvents))
	mux.HandleFunc("GET /console/webhooks", s.console(false, s.pageWebhooks))
}

// consoleBase is the base a console page works on: "test" is the test
// prefix's, anything else the production prefix's.
func (s *Server) consoleBase(name string) (*base, string) {
	if name == "test" {
		return &s.bases[1], "test"
	}
	return &s.bases[0], "pid"
}

// baseChoice is a base the SNAA may write under, for the page's switch.
type baseChoice struct {
	Name, Prefix string
	Current      bool
}

func (s *Server) baseChoices(u *consoleUser, cur string) []baseChoice {
	var out []baseChoice
	for i, b := range s.bases {
		if b.prefix == "" || !u.SNAA.MayWrite(b.prefix) {
			continue
		}
		n := "pid"
		if i == 1 {
			n = "test"
		}
		out = append(out, baseChoice{Name: n, Prefix: b.prefix, Current: n == cur})
	}
	return out
}

// statusField is the model's field of type STATUS (what the fronts read to
// hide a record or show a tombstone), or nil.
func (s *Server) statusField() *model.FieldSpec {
	for _, f := range s.cfg.Model.Fields {
		if f.Type == "STATUS" && f.Schema != nil && f.Schema.Type == "string" {
			return f
		}
	}
	return nil
}

func (s *Server) statuses() []string {
	if f := s.statusField(); f != nil {
		return f.Schema.Enum
	}
	return nil
}

// formPage is the data of the create and edit forms.
type formPage struct {
	Base    string
	Bases   []baseChoice
	Form    *formNode
	ID      string // edit: the identifier's id; create: the custom id typed
	Custom  bool   // the SNAA may choose custom ids
	Version uint64 // edit: the version the form was filled from
	Handle  string
	// Conflict is set when the edit was refused because a newer version
	// was saved meanwhile (412): the form then carries that version.
	Conflict *conflict
}

// conflict is the current version of an identifier beside an edit that
// was made on an older one: Changes has the current values as Before and
// the edit's as After.
type conflict struct {
	Version uint64
	Updated time.Time
	Changes []fieldChange
}

// listOp is the list button pressed, if any ("add:…" or "remove:…").
func listOp(f url.Values) string {
	if v := f.Get("list"); strings.HasPrefix(v, "add:") || strings.HasPrefix(v, "remove:") {
		return v
	}
	return ""
}

func (s *Server) pageNew(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	pg := &formPage{Base: bn, Bases: s.baseChoices(u, bn), Custom: u.SNAA.CustomIDs, ID: strings.TrimSpace(q.Get("custom_id"))}
	d.Title, d.D = "New identifier", pg
	if r.Method == http.MethodGet {
		pg.Form = buildForm("", "", s.payloadSchema(), true, nil, true)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	payload := s.formPayload(r.PostForm, false)
	if op := listOp(r.PostForm); op != "" {
		editList(payload, op)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	ident, err := s.consoleCreate(r, u, b, pg.ID, payload)
	if err != nil {
		d.Problem, _ = problemOf(err)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, d.Problem.Status, "edit", d)
		return nil
	}
	http.Redirect(w, r, idURL(bn, ident.ID, "created"), http.StatusSeeOther)
	return nil
}

// consoleCreate creates an identifier from a form's payload through the
// write service, with the API's checks in the API's order: admitted as a
// PUT, the custom id checked before the payload, the body's size limit,
// the payload decoded as the API decodes a body.
func (s *Server) consoleCreate(r *http.Request, u *consoleUser, b *base, customID string, payload map[string]any) (*read.Identifier, error) {
	t, err := s.consoleTarget(r, u, b, http.MethodPut)
	if err != nil {
		return nil, err
	}
	if customID != "" {
		if err := s.cfg.Writes.CheckCustomID(u.writer(), t, customID); err != nil && !write.IsFieldError(err) {
			return nil, err
		}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	obj, err := s.consoleBody(body)
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Writes.Create(u.writer(), t, write.CreateRequest{CustomID: customID, Payload: obj})
	if err != nil {
		return nil, err
	}
	s.written(1, 0)
	return s.cfg.Read.IdentifierOf(&res.Stored, *res.Content), nil
}

// consoleUpdate updates identifier id from a form's JSON body through the
// write service, as the API's PUT with If-Match ifMatch ("" for none).
func (s *Server) consoleUpdate(r *http.Request, u *consoleUser, b *base, id, ifMatch string, body []byte) error {
	t, err := s.consoleTarget(r, u, b, http.MethodPut)
	if err != nil {
		return err
	}
	obj, err := s.consoleBody(body)
	if err != nil {
		return err
	}
	res, err := s.cfg.Writes.Update(u.writer(), t, write.UpdateRequest{ID: id, Payload: obj, IfMatch: ifMatch})
	if err == nil && res.Written {
		s.written(0, 1)
	}
	return err
}

// consoleBody is a form's JSON body as the API reads a request's: within
// its size limit, decoded strictly.
func (s *Server) consoleBody(body []byte) (map[string]any, error) {
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		return nil, problem(http.StatusRequestEntityTooLarge, "request body of %d bytes exceeds the limit of %d bytes", len(body), s.cfg.MaxBodyBytes)
	}
	return model.DecodeObject(body)
}

func idURL(base, id, done string) string {
	v := url.Values{"base": {base}, "id": {id}}
	if done != "" {
		v.Set("done", done)
	}
	return "/console/id?" + v.Encode()
}

// consoleTarget admits a request of u on its namespace on base b as the
// API admits one with method (suspension, rate limit, and for a write
// maintenance mode; a form's POST also reads) and checks that u may write
// under the base's prefix.
func (s *Server) consoleTarget(r *http.Request, u *consoleUser, b *base, method string) (write.Target, error) {
	if err := s.cfg.Admission.Admit(u.Key, u.SNAA, method != http.MethodGet && method != http.MethodHead, false); err != nil {
		return write.Target{}, err
	}
	return checkBase(b, u)
}

// checkBase is u's namespace under base b's prefix, if u may write there:
// the API's checks of a path in u's own namespace.
func checkBase(b *base, u *consoleUser) (write.Target, error) {
	if b.prefix == "" {
		return write.Target{}, problem(http.StatusNotFound, "this node has no test prefix; %s is not available", b.path)
	}
	if !u.SNAA.MayWrite(b.prefix) {
		return write.Target{}, problem(http.StatusForbidden, "SNAA %s may not use prefix %s (allowed: %s)",
			u.SNAA.ID, b.prefix, strings.Join(u.SNAA.Prefixes, ", "))
	}
	return write.Target{Prefix: b.prefix, Namespace: u.SNAA.Namespace}, nil
}

// readIdent reads identifier id through package read, its values as the
// API's reply gives them (read.Plain).
func (s *Server) readIdent(r *http.Request, u *consoleUser, b *base, id string) (*read.Identifier, error) {
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return nil, err
	}
	ident, err := s.cfg.Read.Get(t.Prefix, t.Namespace, id)
	if err != nil {
		return nil, err
	}
	return ident.Plain(), nil
}

func (s *Server) pageEdit(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	id := q.Get("id")
	pg := &formPage{Base: bn, ID: id}
	d.Title, d.D = "Edit "+id, pg
	if r.Method == http.MethodGet {
		ident, err := s.readIdent(r, u, b, id)
		if err != nil {
			return err
		}
		pg.Version, pg.Handle = ident.Version, ident.Handle
		pg.Form = buildForm("", "", s.payloadSchema(), true, map[string]any{"url": ident.URL, "metadata": ident.Metadata}, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	pg.Version, _ = strconv.ParseUint(q.Get("version"), 10, 64)
	pg.Handle = q.Get("handle")
	if op := listOp(r.PostForm); op != "" {
		payload := s.formPayload(r.PostForm, false)
		editList(payload, op)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	payload := s.formPayload(r.PostForm, true)
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	ifMatch := ""
	if pg.Version > 0 {
		ifMatch = write.ETag(pg.Version)
	}
	if err := s.consoleUpdate(r, u, b, id, ifMatch, body); err != nil {
		d.Problem, _ = problemOf(err)
		mine := s.formPayload(r.PostForm, false)
		pg.Form = buildForm("", "", s.payloadSchema(), true, mine, false)
		if d.Problem.Status == http.StatusPreconditionFailed {
			// Someone saved a newer version: show it beside this edit, and
			// let the form save on top of it (its ETag) when sent again.
			cur, err := s.readIdent(r, u, b, id)
			if err != nil {
				return err
			}
			pg.Conflict = &conflict{Version: cur.Version, Updated: cur.Updated,
				Changes: fieldChanges(map[string]any{"url": cur.URL, "metadata": cur.Metadata}, mine)}
			pg.Version, pg.Handle = cur.Version, cur.Handle
			d.Problem.Detail = fmt.Sprintf("version %d was saved while you were editing version %s; nothing of your edit is lost", cur.Version, q.Get("version"))
		}
		s.render(w, d.Problem.Status, "edit", d)
		return nil
	}
	http.Redirect(w, r, idURL(bn, id, "saved"), http.StatusSeeOther)
	return nil
}

// historyRow is one write of an identifier, as the page shows it: who,
// when, and each field's value before and after.
type historyRow struct {
	read.HistoryEntry
	Changes []fieldChange
}

type idPage struct {
	Base     string
	Ident    *read.Identifier
	History  []historyRow
	Chart    *chart
	Statuses []string
	Status   string
	Done     string
}

func (s *Server) pageID(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	id := q.Get("id")
	ident, err := s.readIdent(r, u, b, id)
	if err != nil {
		return err
	}
	pg := &idPage{Base: bn, Ident: ident, Statuses: s.statuses()}
	switch q.Get("done") {
	case "created":
		d.Flash = "The identifier was created."
	case "saved":
		d.Flash = "Your changes were saved."
	case "status":
		d.Flash = "The status was changed."
	}
	if f := s.statusField(); f != nil {
		pg.Status, _ = ident.Metadata[f.Name].(string)
	}
	d.Title, d.D = ident.Handle, pg
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	hist, err := s.cfg.Read.History(t.Prefix, t.Namespace, id)
	if err != nil {
		return err
	}
	for i := len(hist.Changes) - 1; i >= 0; i-- {
		h := hist.Changes[i]
		h.Before, h.After = read.Plain(h.Before), read.Plain(h.After)
		pg.History = append(pg.History, historyRow{HistoryEntry: h, Changes: fieldChanges(h.Before, h.After)})
	}
	if s.cfg.Stats != nil {
		// The API's GET …/{id}/stats, admitted as one more request.
		if err := s.cfg.Admission.Admit(u.Key, u.SNAA, false, false); err != nil {
			return err
		}
		from, to := s.cfg.StatsDays()
		st, err := s.cfg.Stats(r.Context(), route.Target{Prefix: t.Prefix, Namespace: t.Namespace}, id, from, to)
		if err != nil {
			return err
		}
		pg.Chart = newChart(st)
	}
	s.render(w, http.StatusOK, "id", d)
	return nil
}

// tombstone is what the resolver's tombstone page will show of a record,
// read by value type as the fronts read it (docs/metadata-model.md).
type tombstone struct {
	Status, Label, Description, Contact string
	Related                             []string
}

func (s *Server) tombstoneOf(ident *read.Identifier, status string) *tombstone {
	t := &tombstone{Status: status}
	for _, f := range s.cfg.Model.Fields {
		v := ident.Metadata[f.Name]
		switch f.Type {
		case "RESOURCE":
			// The field as JSON text again, read as the resolver's
			// tombstone reads the stored value.
			text, _ := json.Marshal(v)
			r, _, _ := handlev.ReadResource(text, nil)
			t.Label, t.Description = string(r.Label), string(r.Description)
		case "EMAIL":
			t.Contact, _ = v.(string)
		case "RELATED":
			list, _ := v.([]any)
			for _, it := range list {
				m, _ := it.(map[string]any)
				ri, _ := m["related_identifier"].(map[string]any)
				t.Related = append(t.Related, fmt.Sprintf("%v %v", m["relation_type"], ri["identifier"]))
			}
		}
	}
	return t
}

type statusPage struct {
	Base, ID, Status string
	Version          uint64
	Ident            *read.Identifier
	Tomb             *tombstone
}

// pageStatus changes an identifier's status. A change that makes it a
// tombstone (OBSOLETED, DEPRECATED) first shows what the tombstone page
// will show and asks for confirmation.
func (s *Server) pageStatus(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	f := s.statusField()
	if f == nil {
		return problem(http.StatusNotFound, "the metadata model has no status field")
	}
	b, bn := s.consoleBase(r.PostForm.Get("base"))
	id, status := r.PostForm.Get("id"), r.PostForm.Get("status")
	version, _ := strconv.ParseUint(r.PostForm.Get("version"), 10, 64)
	if (status == "OBSOLETED" || status == "DEPRECATED") && r.PostForm.Get("confirm") != "yes" {
		ident, err := s.readIdent(r, u, b, id)
		if err != nil {
			return err
		}
		d.Title = "Make " + ident.Handle + " a tombstone?"
		d.D = &statusPage{Base: bn, ID: id, Status: status, Version: version, Ident: ident, Tomb: s.tombstoneOf(ident, status)}
		s.render(w, http.StatusOK, "status", d)
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{f.Name: status}})
	if err != nil {
		return err
	}
	ifMatch := ""
	if version > 0 {
		ifMatch = write.ETag(version)
	}
	if err := s.consoleUpdate(r, u, b, id, ifMatch, body); err != nil {
		return err
	}
	http.Redirect(w, r, idURL(bn, id, "status"), http.StatusSeeOther)
	return nil
}

type keysPage struct {
	Keys   []registry.Key
	Issued *operator.IssuedKey
	Mine   string // the session's key id
	Name   string
}

// pageKeys lists the SNAA's keys and issues a new one (self-service
// rotation: issue a second key, then revoke the first). The new key's
// secret is shown once, on the reply to the POST, never in a URL.
func (s *Server) pageKeys(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	pg := &keysPage{Mine: u.Key.ID}
	d.Title, d.D = "Your API keys", pg
	if r.Method == http.MethodGet && r.URL.Query().Get("done") == "revoked" {
		d.Flash = "The key was revoked."
	}
	if r.Method == http.MethodPost {
		pg.Name = r.PostForm.Get("name")
		ik, err := s.issueKey(u.actor(), u.SNAA.ID, pg.Name)
		if err != nil {
			p, ok := problemOf(err)
			if !ok {
				return err
			}
			d.Problem = p
		} else {
			pg.Issued, pg.Name = ik, ""
			s.log.Info("console: key issued by its SNAA", "snaa", u.SNAA.ID, "key", ik.ID)
		}
	}
	keys, err := s.cfg.Keys.List(u.SNAA.ID)
	if err != nil {
		return err
	}
	pg.Keys = keys
	status := http.StatusOK
	if d.Problem != nil {
		status = d.Problem.Status
	}
	s.render(w, status, "keys", d)
	return nil
}

func (s *Server) pageRevokeKey(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	keyID := r.PostForm.Get("key_id")
	keys, err := s.cfg.Keys.List(u.SNAA.ID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(keys, func(k registry.Key) bool { return k.ID == keyID })
	if i < 0 {
		return problem(http.StatusNotFound, "you have no key %q", keyID)
	}
	says := []string{"Revoke key “" + keys[i].Name + "” (" + keyID + ")? Every request made with it fails from then on; a revoked key cannot be restored."}
	if keyID == u.Key.ID {
		says = append(says, "It is the key you signed in with: revoking it ends this session.")
	}
	if !s.confirmed(w, r, d, "Revoke this key?", &confirmPage{Says: says, Action: "/console/keys/revoke", Button: "Revoke the key",
		Cancel: "/console/keys", Fields: map[string]string{"key_id": keyID}}) {
		return nil
	}
	if err := s.cfg.Keys.Revoke(u.actor(), u.SNAA.ID, keyID); err != nil {
		return err
	}
	// Revoking the session's own key ends the session with the next request.
	http.Redirect(w, r, "/console/keys?done=revoked", http.StatusSeeOther)
	return nil
}
