package admin

import (
	"errors"
	"net/http"

	"pidnode/access"
	"pidnode/operator"
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

func (s *Server) submitApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApplicationRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	app, err := s.SubmitApplication(req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/ops/v1/applications/"+app.ID)
	writeJSON(w, http.StatusCreated, app)
	return nil
}

// SubmitApplication validates and stores an application in state SUBMITTED.
func (s *Server) SubmitApplication(req ApplicationRequest) (*Application, error) {
	return s.ops.Submit(ActorOperator, req, "", "", 0)
}

func (s *Server) listApplications(w http.ResponseWriter, r *http.Request) error {
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

func (s *Server) getApplication(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.Application(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) approveApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApproveRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	res, err := s.Approve(r.PathValue("id"), req)
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

func (s *Server) rejectApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[RejectRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	app, err := s.ops.Reject(r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app)
	return nil
}

func (s *Server) listSNAAs(w http.ResponseWriter, r *http.Request) error {
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

func (s *Server) getSNAA(w http.ResponseWriter, r *http.Request) error {
	sn, err := s.ops.SNAA(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sn)
	return nil
}

func (s *Server) patchSNAA(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[SNAAPatch](w, r, s.maxBody)
	if err != nil {
		return err
	}
	sn, err := s.ops.PatchSNAA(r.PathValue("id"), req)
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

func (s *Server) issueKey(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[KeyRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	ik, err := s.issueKeyAs(ActorOperator, r.PathValue("id"), req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, ik)
	return nil
}

// issueKeyAs issues a key for SNAA snaaID, audited as actor (the operator,
// or an SNAA rotating its own keys), and counts a refusal by the key limit.
func (s *Server) issueKeyAs(actor, snaaID, name string) (*IssuedKey, error) {
	k, secret, err := s.keys.Issue(actor, snaaID, name)
	if err != nil {
		if errors.Is(err, access.ErrKeyLimit) {
			s.metrics.refused(refusedSNAAKeys)
		}
		return nil, err
	}
	return operator.Issued(k, snaaID, secret), nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.keys.List(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.keys.Revoke(ActorOperator, r.PathValue("id"), r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
