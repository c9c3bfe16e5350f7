package admin

import (
	"log/slog"
	"net/http"
	"time"

	"pidnode/operator"
	"pidnode/registry"
	"pidnode/store"
)

// The bodies and replies of the operator routes are package operator's,
// which makes the decisions the console makes too.
type (
	ApplicationRequest = operator.ApplicationRequest
	ApproveRequest     = operator.ApproveRequest
	ApproveResult      = operator.ApproveResult
	IssuedKey          = operator.IssuedKey
	RejectRequest      = operator.RejectRequest
	SNAAPatch          = operator.SNAAPatch
)

// opsAPI is the operator's routes, /ops/v1/… (docs/product.md §4.1): the
// applications, the SNAAs and their keys, the audit log and the backup,
// each behind the operator key (gate.op). The decisions are package
// operator's and the keys package access's; opsAPI reads the request and
// writes the reply.
type opsAPI struct {
	*gate
	ops     *operator.Service
	reg     *registry.Registry
	db      *store.DB
	maxBody int64
	log     *slog.Logger
	now     func() time.Time
}

// routes registers the operator routes on rt.
func (s *opsAPI) routes(rt *router) {
	rt.handle("POST", "/ops/v1/applications", s.op(s.submitApplication),
		op{summary: "Submit an SNAA application", auth: "operator", request: "ApplicationRequest", ok: 201, okSchema: "Application", okHeads: []string{"Location"}, tag: "operator"})
	rt.handle("GET", "/ops/v1/applications", s.op(s.listApplications),
		op{summary: "List applications", auth: "operator", ok: 200, okSchema: "ApplicationList", query: []param{{"state", "SUBMITTED, APPROVED or REJECTED"}}, tag: "operator"})
	rt.methodFallback("/ops/v1/applications", "GET, POST")
	rt.handle("GET", "/ops/v1/applications/{id}", s.op(s.getApplication),
		op{summary: "Read an application", auth: "operator", ok: 200, okSchema: "Application", tag: "operator"})
	rt.methodFallback("/ops/v1/applications/{id}", "GET")
	rt.handle("POST", "/ops/v1/applications/{id}/approve", s.op(s.approveApplication),
		op{summary: "Approve an application: creates the SNAA, assigns its namespace, issues its first key", auth: "operator", request: "ApproveRequest", ok: 200, okSchema: "ApproveResult", errs: []int{409}, tag: "operator"})
	rt.methodFallback("/ops/v1/applications/{id}/approve", "POST")
	rt.handle("POST", "/ops/v1/applications/{id}/reject", s.op(s.rejectApplication),
		op{summary: "Reject an application", auth: "operator", request: "RejectRequest", ok: 200, okSchema: "Application", errs: []int{409}, tag: "operator"})
	rt.methodFallback("/ops/v1/applications/{id}/reject", "POST")
	rt.handle("GET", "/ops/v1/snaas", s.op(s.listSNAAs),
		op{summary: "List SNAAs (never a key secret)", auth: "operator", ok: 200, okSchema: "SNAAList", tag: "operator"})
	rt.methodFallback("/ops/v1/snaas", "GET")
	rt.handle("GET", "/ops/v1/snaas/{id}", s.op(s.getSNAA),
		op{summary: "Read an SNAA", auth: "operator", ok: 200, okSchema: "SNAA", tag: "operator"})
	rt.handle("PATCH", "/ops/v1/snaas/{id}", s.op(s.patchSNAA),
		op{summary: "Change an SNAA (custom ids, prefixes, suspension, keys it may hold)", auth: "operator", request: "SNAAPatch", ok: 200, okSchema: "SNAA", tag: "operator"})
	rt.methodFallback("/ops/v1/snaas/{id}", "GET, PATCH")
	rt.handle("GET", "/ops/v1/snaas/{id}/keys", s.op(s.listKeys),
		op{summary: "List an SNAA's keys (never a secret)", auth: "operator", ok: 200, okSchema: "KeyList", tag: "operator"})
	rt.handle("POST", "/ops/v1/snaas/{id}/keys", s.op(s.issueKey),
		op{summary: "Issue a key; the only time its secret is shown. 409 (type /problems/key-limit) when the SNAA holds as many unrevoked keys as it may", auth: "operator", request: "KeyRequest", ok: 201, okSchema: "IssuedKey", errs: []int{409}, tag: "operator"})
	rt.methodFallback("/ops/v1/snaas/{id}/keys", "GET, POST")
	rt.handle("DELETE", "/ops/v1/snaas/{id}/keys/{key_id}", s.op(s.revokeKey),
		op{summary: "Revoke a key; it fails from the next request on", auth: "operator", ok: 204, tag: "operator"})
	rt.methodFallback("/ops/v1/snaas/{id}/keys/{key_id}", "DELETE")
	rt.handle("GET", "/ops/v1/audit", s.op(s.listAudit),
		op{summary: "Read the append-only audit log: a page newest first (next names the following page's before), filtered by SNAA, action and time; or, with after, the entries after that sequence number oldest first, to follow the log", auth: "operator", ok: 200, okSchema: "AuditList",
			query: []param{{"limit", "1–1000, default 100"}, {"before", "the page ends below this sequence number (a page's next)"}, {"snaa", "only entries about this SNAA: made with its keys, about it or its keys, or writes in its namespace"}, {"action", "only this action (handle.update), or a family of them with a trailing dot (key.)"}, {"from", "only entries at or after this date (YYYY-MM-DD) or RFC 3339 time"}, {"to", "only entries up to this date (inclusive) or before this RFC 3339 time"}, {"after", "sequence number to start after, oldest first (no other filter applies)"}}, tag: "operator"})
	rt.methodFallback("/ops/v1/audit", "GET")
	rt.handle("GET", "/ops/v1/backup", s.op(s.backup),
		op{summary: "Stream a consistent snapshot of the database (bbolt file)", auth: "operator", ok: 200, okSchema: "", tag: "operator"})
	rt.methodFallback("/ops/v1/backup", "GET")

}

func (s *opsAPI) submitApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApplicationRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	app, err := s.ops.Submit(ActorOperator, req, "", "", 0)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/ops/v1/applications/"+app.ID)
	writeJSON(w, http.StatusCreated, app)
	return nil
}

// opActor is who an operator request is audited as: its session's person, or the operator.
func opActor(r *http.Request) string {
	if p := principalOf(r); p != nil && p.person != nil {
		return p.actor()
	}
	return ActorOperator
}

// SubmitApplication validates and stores an application in state SUBMITTED.
func (s *Server) SubmitApplication(req ApplicationRequest) (*Application, error) {
	return s.ops.Submit(ActorOperator, req, "", "", 0)
}

func (s *opsAPI) listApplications(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.Applications(r.URL.Query().Get("state"))
	if err != nil {
		return err
	}
	if out == nil {
		out = []Application{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"applications": out})
	return nil
}

func (s *opsAPI) getApplication(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.Application(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *opsAPI) approveApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApproveRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	res, err := s.ops.As(opActor(r)).Approve(r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// Approve approves a SUBMITTED application (operator.Service.Approve).
func (s *Server) Approve(appID string, req ApproveRequest) (*ApproveResult, error) {
	return s.ops.Approve(appID, req)
}

func (s *opsAPI) rejectApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[RejectRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	app, err := s.ops.As(opActor(r)).Reject(r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app)
	return nil
}

func (s *opsAPI) listSNAAs(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.SNAAs()
	if err != nil {
		return err
	}
	if out == nil {
		out = []SNAA{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"snaas": out})
	return nil
}

func (s *opsAPI) getSNAA(w http.ResponseWriter, r *http.Request) error {
	sn, err := s.ops.SNAA(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sn)
	return nil
}

func (s *opsAPI) patchSNAA(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[SNAAPatch](w, r, s.maxBody)
	if err != nil {
		return err
	}
	sn, err := s.ops.As(opActor(r)).PatchSNAA(r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sn)
	return nil
}

// KeyRequest is the body of POST /ops/v1/snaas/{id}/keys.
type KeyRequest struct {
	Name string `json:"name"`
}

func (s *opsAPI) issueKey(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[KeyRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	ik, err := s.issueKeyAs(opActor(r), r.PathValue("id"), req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, ik)
	return nil
}

func (s *opsAPI) listKeys(w http.ResponseWriter, r *http.Request) error {
	return s.writeKeys(w, r.PathValue("id"))
}

func (s *opsAPI) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.keys.Revoke(opActor(r), r.PathValue("id"), r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// backup streams a consistent snapshot of the database (docs/product.md §8).
func (s *opsAPI) backup(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="pidnode-`+s.now().UTC().Format("20060102T150405Z")+`.db"`)
	if _, err := s.db.Backup(w); err != nil {
		// Headers are gone; the client sees a truncated body and the log the cause.
		s.log.Error("backup failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}
