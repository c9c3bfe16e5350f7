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
	res, err := s.cfg.Operator.Approve(id, req)
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
	if _, err := s.cfg.Operator.Reject(id, operator.RejectRequest{Note: r.PostForm.Get("note")}); err != nil {
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
	return pg, nil
}

func (s *Server) pageSNAA(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	pg, err := s.snaaPage(r, r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	switch r.URL.Query().Get("done") {
	case "changed":
		d.Flash = "The SNAA was changed."
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
	switch f.Get("action") {
	case "suspend", "reinstate":
		v := f.Get("action") == "suspend"
		patch.Suspended = &v
	default:
		v := f.Get("custom_ids") == "true"
		patch.CustomIDs = &v
		// None ticked leaves the prefixes as they are, as the API does
		// when its body names none.
		patch.Prefixes = f["prefixes"]
	}
	if _, err := s.cfg.Operator.PatchSNAA(id, patch); err != nil {
		return err
	}
	http.Redirect(w, r, "/console/ops/snaa?done=changed&id="+url.QueryEscape(id), http.StatusSeeOther)
	return nil
}

func (s *Server) pageOpsIssueKey(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	id := r.PostForm.Get("id")
	ik, ierr := s.issueKey(registry.ActorOperator, id, r.PostForm.Get("name"))
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
	if err := s.cfg.Keys.Revoke(registry.ActorOperator, id, keyID); err != nil {
		return err
	}
	http.Redirect(w, r, "/console/ops/snaa?done=revoked&id="+url.QueryEscape(id), http.StatusSeeOther)
	return nil
}

type auditPage struct {
	Entries []auditRow
	Next    string
}

type auditRow struct {
	registry.AuditEntry
	Before, After string
}

func (s *Server) pageAudit(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		var err error
		if after, err = strconv.ParseUint(a, 10, 64); err != nil {
			return problem(http.StatusBadRequest, "after must be a sequence number")
		}
	}
	var list struct{ Entries []registry.AuditEntry }
	var err error
	if list.Entries, err = s.cfg.Registry.AuditLog(after, 100); err != nil {
		return err
	}
	pg := &auditPage{}
	for _, e := range list.Entries {
		row := auditRow{AuditEntry: e}
		if e.Before != nil {
			b, _ := route.Marshal(e.Before)
			row.Before = strings.TrimSpace(string(b))
		}
		if e.After != nil {
			b, _ := route.Marshal(e.After)
			row.After = strings.TrimSpace(string(b))
		}
		pg.Entries = append(pg.Entries, row)
	}
	if n := len(list.Entries); n == 100 {
		pg.Next = strconv.FormatUint(list.Entries[n-1].Seq, 10)
	}
	d.Title, d.D = "Audit log", pg
	s.render(w, http.StatusOK, "ops_audit", d)
	return nil
}
