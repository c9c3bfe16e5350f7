package admin

import (
	"errors"
	"net"
	"net/http"

	"pidnode/operator"
)

// The public application route (docs/product.md §4.2): an organisation
// applies without a key. The JSON route (POST /apply/v1/applications), as
// the console's form (POST /apply), charges the client's address
// (applyRL, which the console shares) and ends in
// operator.Service.SubmitPublic, the operator's route's path with the
// abuse limits of the policy.

// Policy is the application policy (--policy-file), package operator's.
type Policy = operator.Policy

// DefaultPolicy returns the built-in policy, used when Config.Policy is nil.
func DefaultPolicy() *Policy { return operator.DefaultPolicy() }

// CheckPolicy checks a policy and fills in its defaults
// (operator.CheckPolicy); a refusal is a *ConfigError for field Policy
// whose Reason says why.
func CheckPolicy(p *Policy) error {
	err := operator.CheckPolicy(p)
	if err == nil {
		return nil
	}
	reason := err.Error()
	var pe *operator.PolicyError
	if errors.As(err, &pe) {
		reason = pe.Reason
	}
	return &ConfigError{Pkg: "admin", Field: "Policy", Reason: reason, Err: ErrConfig}
}

// applyMaxBody bounds the body of an application (form or JSON).
const applyMaxBody = 64 << 10

// clientAddr is the address a request came from (the proxy's, behind one).
func clientAddr(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// applyRoutes registers the public application routes.
func (s *Server) applyRoutes() {
	s.handle("POST", "/apply/v1/applications", s.applyJSON,
		op{summary: "Apply to become an SNAA, without a key (the public form's route): 201 with the application id and a status token, shown only this once. Limited per client address, per contact e-mail (open applications) and to 64 KiB; policy_version must be the node's current policy version (GET /apply shows the policy)", auth: "", request: "ApplicationRequest", ok: 201, okSchema: "ApplicationReceipt", okHeads: []string{"Location"}, errs: []int{409, 429}, tag: "apply"})
	s.methodFallback("/apply/v1/applications", "POST")
	s.handle("GET", "/apply/v1/applications/{id}", s.applyStatusJSON,
		op{summary: "An application's state (SUBMITTED, APPROVED, REJECTED with the reason), with its status token as the bearer token; any mismatch is 404", auth: "statusToken", ok: 200, okSchema: "ApplicationStatus", errs: []int{401}, tag: "apply"})
	s.methodFallback("/apply/v1/applications/{id}", "GET")
}

// ApplicationReceipt and ApplicationStatus are the public route's replies.
type (
	ApplicationReceipt = operator.ApplicationReceipt
	ApplicationStatus  = operator.ApplicationStatus
)

func (s *Server) applyJSON(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApplicationRequest](w, r, applyMaxBody)
	if err != nil {
		return err
	}
	// The per-address limit, shared with the console's form, then the one
	// path of a public application.
	if err := s.applyRL.Take(clientAddr(r), "applications"); err != nil {
		return err
	}
	rc, err := s.ops.SubmitPublic(clientAddr(r), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", rc.StatusURL)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, rc)
	return nil
}

func (s *Server) applyStatusJSON(w http.ResponseWriter, r *http.Request) error {
	tok, p := bearer(r)
	if p != nil {
		return p
	}
	st, err := s.ops.Status(r.PathValue("id"), tok)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, st)
	return nil
}
