package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pidnode/internal/route"
	"pidnode/operator"
	"pidnode/registry"
)

// The operator's pages of the console (docs/product.md §4.2): the
// application queue, SNAAs and their keys, the audit log. The reads and
// the decisions on applications and SNAAs (approve, reject, change) are
// package operator's, the keys package access's: the same functions the
// operator routes call.

func (s *Server) opsConsoleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/ops/applications", s.console(true, s.pageApps))
	mux.HandleFunc("GET /console/ops/application", s.console(true, s.pageApp))
	mux.HandleFunc("POST /console/ops/approve", s.console(true, s.pageApprove))
	mux.HandleFunc("POST /console/ops/reject", s.console(true, s.pageReject))
	mux.HandleFunc("GET /console/ops/snaas", s.console(true, s.pageSNAAs))
	mux.HandleFunc("GET /console/ops/snaa", s.console(true, s.pageSNAA))
	mux.HandleFunc("POST /console/ops/snaa", s.console(true, s.pageSNAAChange))
	mux.HandleFunc("POST /console/ops/keys", s.console(true, s.pageOpsIssueKey))
	mux.HandleFunc("POST /console/ops/keys/revoke", s.console(true, s.pageOpsRevokeKey))
	mux.HandleFunc("GET /console/ops/audit", s.console(true, s.pageAudit))
}

type appsPage struct {
	State string
	Apps  []registry.Application
}

func (s *Server) pageApps(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	state := r.URL.Query().Get("state")
	if state == "" {
		state = registry.StateSubmitted
	}
	if state == "ALL" {
		state = ""
	}
	apps, err := s.cfg.Operator.Applications(state)
	if err != nil {
		return err
	}
	if state == "" {
		state = "ALL"
	}
	d.Title, d.D = "Applications", &appsPage{State: state, Apps: apps}
	s.render(w, http.StatusOK, "ops_apps", d)
	return nil
}

type appPage struct {
	App      registry.Application
	Prefixes []string
	Approved *operator.ApproveResult
	// Form is what was typed into the approve or reject form.
	Form url.Values
}

func (s *Server) pageApp(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	a, err := s.cfg.Operator.Application(r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	f := url.Values{"prefixes": a.Prefixes}
	if a.CustomIDs {
		f.Set("custom_ids", "true")
	}
	d.Title, d.D = "Application "+a.ID, &appPage{App: *a, Prefixes: s.cfg.Operator.Prefixes(), Form: f}
	s.render(w, http.StatusOK, "ops_app", d)
	return nil
}

func (s *Server) pageApprove(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	f := r.PostForm
	id := f.Get("id")
	customIDs := f.Get("custom_ids") == "true"
	// None ticked (no prefixes) grants what the application asked for, as
	// the API does when its body names none.
	req := operator.ApproveRequest{Namespace: strings.TrimSpace(f.Get("namespace")), Prefixes: f["prefixes"], CustomIDs: &customIDs, Note: f.Get("note")}
	res, err := s.cfg.Operator.As(u.actor()).Approve(id, req)
	if err != nil {
		a, lerr := s.cfg.Operator.Application(id)
		if lerr != nil {
			return err
		}
		d.Problem, _ = problemOf(err)
		d.Title, d.D = "Application "+a.ID, &appPage{App: *a, Prefixes: s.cfg.Operator.Prefixes(), Form: f}
		s.render(w, d.Problem.Status, "ops_app", d)
		return nil
	}
	d.Title, d.D = "Application approved", &appPage{App: res.Application, Approved: res}
	s.render(w, http.StatusOK, "ops_approved", d)
	return nil
}

func (s *Server) pageReject(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	id := r.PostForm.Get("id")
	if _, err := s.cfg.Operator.As(u.actor()).Reject(id, operator.RejectRequest{Note: r.PostForm.Get("note")}); err != nil {
		cur, lerr := s.cfg.Operator.Application(id)
		if lerr != nil {
			return err
		}
		d.Problem, _ = problemOf(err)
		d.Title, d.D = "Application "+cur.ID, &appPage{App: *cur, Prefixes: s.cfg.Operator.Prefixes(), Form: r.PostForm}
		s.render(w, d.Problem.Status, "ops_app", d)
		return nil
	}
	http.Redirect(w, r, "/console/ops/application?id="+url.QueryEscape(id), http.StatusSeeOther)
	return nil
}

func (s *Server) pageSNAAs(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	snaas, err := s.cfg.Operator.SNAAs()
	if err != nil {
		return err
	}
	d.Title, d.D = "SNAAs", snaas
	s.render(w, http.StatusOK, "ops_snaas", d)
	return nil
}

type snaaPage struct {
	SNAA     registry.SNAA
	Keys     []registry.Key
	Prefixes []string
	Issued   *operator.IssuedKey
	// Stats are the namespace's resolutions per prefix from From to To.
	Stats    []prefixTotal
	From, To string
}

func (s *Server) snaaPage(r *http.Request, id string) (*snaaPage, error) {
	pg := &snaaPage{Prefixes: s.cfg.Operator.Prefixes()}
	sn, err := s.cfg.Operator.SNAA(id)
	if err != nil {
		return nil, err
	}
	pg.SNAA = *sn
	keys, err := s.cfg.Keys.List(id)
	if err != nil {
		return nil, err
	}
	pg.Keys = keys
	if s.cfg.Stats != nil {
		// The namespace's resolutions per prefix, as GET …/{ns}/stats.
		from, to := s.cfg.StatsDays()
		for _, p := range sn.Prefixes {
			st, err := s.cfg.Stats(r.Context(), route.Target{Prefix: p, Namespace: sn.Namespace}, "", from, to)
			if err != nil {
				return nil, err
			}
			c := newChart(st)
			pg.Stats = append(pg.Stats, prefixTotal{Prefix: p, Total: c.Total, Max: c.Max})
			pg.From, pg.To = c.From, c.To
		}
	}
	return pg, nil
}

func (s *Server) pageSNAA(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	pg, err := s.snaaPage(r, r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	switch r.URL.Query().Get("done") {
	case "changed":
		d.Flash = "The SNAA's permissions were saved."
	case "suspended":
		d.Flash = "The SNAA is suspended: its keys are refused until you reinstate it."
	case "reinstated":
		d.Flash = "The SNAA is reinstated: its keys work again."
	case "revoked":
		d.Flash = "The key was revoked."
	}
	d.Title, d.D = "SNAA "+pg.SNAA.Organisation, pg
	s.render(w, http.StatusOK, "ops_snaa", d)
	return nil
}

// pageSNAAChange suspends or reinstates an SNAA, or changes its custom-id
// permission and prefixes (PATCH /ops/v1/snaas/{id}).
func (s *Server) pageSNAAChange(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	f := r.PostForm
	id := f.Get("id")
	var patch operator.SNAAPatch
	done := "changed"
	switch f.Get("action") {
	case "suspend", "reinstate":
		v := f.Get("action") == "suspend"
		patch.Suspended = &v
		done = "reinstated"
		if v {
			done = "suspended"
			sn, err := s.cfg.Operator.SNAA(id)
			if err != nil {
				return err
			}
			if !s.confirmed(w, r, d, "Suspend "+sn.Organisation+"?", &confirmPage{
				Says: []string{"While suspended, every request with a key of " + sn.Organisation + " (" + sn.Namespace + ") is refused and its console sessions end; its identifiers keep resolving.",
					"You can reinstate it later from its page."},
				Action: "/console/ops/snaa", Button: "Suspend " + sn.Organisation, Cancel: "/console/ops/snaa?id=" + url.QueryEscape(id),
				Fields: map[string]string{"id": id, "action": "suspend"}}) {
				return nil
			}
		}
	default:
		v := f.Get("custom_ids") == "true"
		patch.CustomIDs = &v
		// None ticked leaves the prefixes as they are, as the API does
		// when its body names none.
		patch.Prefixes = f["prefixes"]
	}
	if _, err := s.cfg.Operator.As(u.actor()).PatchSNAA(id, patch); err != nil {
		return err
	}
	http.Redirect(w, r, "/console/ops/snaa?done="+done+"&id="+url.QueryEscape(id), http.StatusSeeOther)
	return nil
}

func (s *Server) pageOpsIssueKey(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	id := r.PostForm.Get("id")
	ik, ierr := s.issueKey(u.actor(), id, r.PostForm.Get("name"))
	pg, err := s.snaaPage(r, id)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if ierr != nil {
		d.Problem, _ = problemOf(ierr)
		status = d.Problem.Status
	} else {
		pg.Issued = ik
	}
	d.Title, d.D = "SNAA "+pg.SNAA.Organisation, pg
	s.render(w, status, "ops_snaa", d)
	return nil
}

func (s *Server) pageOpsRevokeKey(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	id, keyID := r.PostForm.Get("id"), r.PostForm.Get("key_id")
	sn, err := s.cfg.Operator.SNAA(id)
	if err != nil {
		return err
	}
	if !s.confirmed(w, r, d, "Revoke this key?", &confirmPage{
		Says:   []string{"Revoke key " + keyID + " of " + sn.Organisation + " (" + sn.Namespace + ")? Every request made with it fails from then on; a revoked key cannot be restored."},
		Action: "/console/ops/keys/revoke", Button: "Revoke the key", Cancel: "/console/ops/snaa?id=" + url.QueryEscape(id),
		Fields: map[string]string{"id": id, "key_id": keyID}}) {
		return nil
	}
	if err := s.cfg.Keys.Revoke(u.actor(), id, keyID); err != nil {
		return err
	}
	http.Redirect(w, r, "/console/ops/snaa?done=revoked&id="+url.QueryEscape(id), http.StatusSeeOther)
	return nil
}

type auditPage struct {
	Entries []auditRow
	// Filter is the page's query (snaa, action, from, to); Next and
	// Newest link the next (older) page and the first, "" if none.
	Filter       url.Values
	Next, Newest string
	SNAAs        []registry.SNAA
	Actions      []string
}

// auditRow is one audit entry as a sentence, its changes folded below it.
type auditRow struct {
	registry.AuditEntry
	Who, What string
	Changes   []fieldChange
}

// auditActions are the actions the audit page filters by.
var auditActions = []string{
	registry.ActApplicationSubmit, registry.ActApplicationApprove, registry.ActApplicationReject,
	registry.ActSNAACreate, registry.ActSNAAUpdate, registry.ActKeyIssue, registry.ActKeyRevoke,
	registry.ActHandleCreate, registry.ActHandleUpdate, registry.ActLinkBroken, registry.ActLinkRecovered,
	registry.ActWebhookCreate, registry.ActWebhookDelete, registry.ActWebhookEnable, registry.ActWebhookDisable,
	registry.ActPersonInvite, registry.ActPersonJoin, registry.ActPersonRole, registry.ActPersonRemove, registry.ActPersonWithdraw,
}

// auditVerbs say what an action did, before its target.
var auditVerbs = map[string]string{
	registry.ActApplicationSubmit: "submitted application", registry.ActApplicationApprove: "approved application",
	registry.ActApplicationReject: "rejected application", registry.ActSNAACreate: "created SNAA",
	registry.ActSNAAUpdate: "changed SNAA", registry.ActKeyIssue: "issued key", registry.ActKeyRevoke: "revoked key",
	registry.ActHandleCreate: "created identifier", registry.ActHandleUpdate: "changed identifier",
	registry.ActLinkBroken: "found a broken link of", registry.ActLinkRecovered: "found the link working again of",
	registry.ActWebhookCreate: "created webhook", registry.ActWebhookDelete: "deleted webhook",
	registry.ActWebhookEnable: "enabled webhook", registry.ActWebhookDisable: "disabled webhook",
	registry.ActPersonInvite: "invited", registry.ActPersonJoin: "joined as",
	registry.ActPersonRole: "changed the role of person", registry.ActPersonRemove: "removed person",
	registry.ActPersonWithdraw: "withdrew the invitation of",
}

// auditWho names an entry's actor for a person: the operator or one of
// the operator's people, the link checker, or an SNAA (by its organisation
// if names has it) with the key or the person it used.
func auditWho(e *registry.AuditEntry, names map[string]string) string {
	switch {
	case e.Actor == registry.ActorOperator:
		return "The operator"
	case strings.HasPrefix(e.Actor, registry.ActorOperator+" person:"):
		return "The operator's person " + auditPerson(e, strings.TrimPrefix(e.Actor, registry.ActorOperator+" person:"))
	case strings.HasPrefix(e.Actor, "snaa:"):
		sn, key, _ := strings.Cut(strings.TrimPrefix(e.Actor, "snaa:"), " key:")
		sn, person, isPerson := strings.Cut(sn, " person:")
		who := "SNAA " + sn
		if n := names[sn]; n != "" {
			who = n
		}
		switch {
		case isPerson:
			who += ", person " + auditPerson(e, person)
		case e.KeyName != "":
			who += " with key “" + e.KeyName + "”"
		case key != "":
			who += " with key " + key
		}
		return who
	case e.Actor == "":
		return "Someone"
	}
	return strings.ToUpper(e.Actor[:1]) + e.Actor[1:]
}

// auditPerson names the person of an entry: by e-mail address, which every
// entry a person's session wrote has (registry.Tx.Audit), else by id.
func auditPerson(e *registry.AuditEntry, id string) string {
	if e.Person != "" {
		return e.Person
	}
	return id
}

func (s *Server) pageAudit(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	pg := &auditPage{Actions: auditActions, Filter: url.Values{}}
	for _, k := range []string{"snaa", "action", "from", "to"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			pg.Filter.Set(k, v)
		}
	}
	d.Title, d.D = "Audit log", pg
	if q.Get("before") != "" {
		pg.Newest = "/console/ops/audit?" + pg.Filter.Encode()
	}
	snaas, err := s.cfg.Operator.SNAAs()
	if err != nil {
		return err
	}
	pg.SNAAs = snaas
	names := map[string]string{}
	for _, sn := range snaas {
		names[sn.ID] = sn.Organisation + " (" + sn.Namespace + ")"
	}
	aq, err := operator.AuditQuery(q.Get, 50)
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "ops_audit", d)
		return nil
	}
	entries, next, err := s.cfg.Operator.Audit(aq)
	if err != nil {
		return err
	}
	for _, e := range entries {
		what := auditVerbs[e.Action]
		if what == "" {
			what = e.Action
		}
		pg.Entries = append(pg.Entries, auditRow{AuditEntry: e, Who: auditWho(&e, names), What: what,
			Changes: fieldChanges(e.Before, e.After)})
	}
	if next != 0 {
		nq := url.Values{}
		for k, v := range pg.Filter {
			nq[k] = v
		}
		nq.Set("before", strconv.FormatUint(next, 10))
		pg.Next = "/console/ops/audit?" + nq.Encode()
	}
	s.render(w, http.StatusOK, "ops_audit", d)
	return nil
}
