package operator

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"pidnode/access"
	"pidnode/internal/storetest"
	"pidnode/model"
	"pidnode/registry"
)

func newService(t *testing.T) (*Service, *registry.Registry, *access.Keys) {
	t.Helper()
	db, namer := storetest.Open(t)
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := access.New(access.Config{Registry: reg, OperatorKey: "operator-secret-123", LastUsedInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg, Keys: keys, Namer: namer, Prefixes: []string{"21.12345", "21.T12345"}, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	return s, reg, keys
}

func request(org, email string) ApplicationRequest {
	return ApplicationRequest{Organisation: org, PolicyVersion: "1", MaintenanceStatement: "We keep them.",
		TechnicalContact:      registry.Contact{Name: "T", Email: email},
		AdministrativeContact: registry.Contact{Name: "A", Email: "admin-" + email}}
}

// TestDecisions: an application submitted, approved (SNAA, namespace and
// a first key that looks up), a second one rejected, the SNAA changed;
// every decision audited, every refusal typed and committing nothing.
func TestDecisions(t *testing.T) {
	s, reg, keys := newService(t)
	app, err := s.Submit(registry.ActorOperator, request("Example Org", "t@example.org"), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ve *model.ValidationError
	if _, err := s.Submit(registry.ActorOperator, ApplicationRequest{Prefixes: []string{"21.NOPE"}}, "", "", 0); !errors.As(err, &ve) || len(ve.Errors) < 5 {
		t.Errorf("empty application: %v, want the faulty fields", err)
	}
	if _, err := s.Approve(app.ID, ApproveRequest{Prefixes: []string{}}); !errors.As(err, &ve) || ve.Errors[0].Field != "prefixes" {
		t.Errorf("approve with no prefixes: %v, want a faulty prefixes", err)
	}
	res, err := s.Approve(app.ID, ApproveRequest{Namespace: "EXO1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SNAA.Namespace != "EXO1" || len(res.SNAA.Prefixes) != 2 || res.Application.State != registry.StateApproved {
		t.Errorf("approved: %+v", res)
	}
	if k, sn, err := keys.Lookup(res.Key.Secret); err != nil || sn.ID != res.SNAA.ID || k.ID != res.Key.ID {
		t.Errorf("the first key looks up as %v, %v, %v", k, sn, err)
	}
	if _, err := s.Approve(app.ID, ApproveRequest{}); !errors.Is(err, ErrConflict) {
		t.Errorf("approving twice: %v, want ErrConflict", err)
	}
	if _, err := s.Approve("app_none", ApproveRequest{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("approving no application: %v, want ErrNotFound", err)
	}

	other, err := s.Submit(registry.ActorOperator, request("Other Org", "o@example.org"), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(other.ID, ApproveRequest{Namespace: "EXO1"}); !errors.Is(err, ErrConflict) {
		t.Errorf("a taken namespace: %v, want ErrConflict", err)
	}
	if _, err := s.Reject(other.ID, RejectRequest{}); !errors.As(err, &ve) || ve.Errors[0].Field != "note" {
		t.Errorf("reject without a note: %v, want a faulty note", err)
	}
	if a, err := s.Reject(other.ID, RejectRequest{Note: "not a research body"}); err != nil || a.State != registry.StateRejected {
		t.Errorf("reject: %+v, %v", a, err)
	}

	yes := true
	if sn, err := s.PatchSNAA(res.SNAA.ID, SNAAPatch{Suspended: &yes, Prefixes: []string{"21.t12345"}}); err != nil || !sn.Suspended || len(sn.Prefixes) != 1 || sn.Prefixes[0] != "21.T12345" {
		t.Errorf("patch: %+v, %v", sn, err)
	}
	big := access.MaxKeysPerSNAA + 1
	if _, err := s.PatchSNAA(res.SNAA.ID, SNAAPatch{MaxKeys: &big}); !errors.As(err, &ve) || ve.Errors[0].Field != "max_keys" {
		t.Errorf("patch beyond the key limit: %v", err)
	}
	if _, err := s.PatchSNAA("snaa_none", SNAAPatch{Suspended: &yes}); !errors.Is(err, ErrNotFound) {
		t.Errorf("patch of no SNAA: %v, want ErrNotFound", err)
	}

	log, err := reg.AuditLog(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, e := range log {
		acts = append(acts, e.Action)
	}
	want := []string{registry.ActApplicationSubmit, registry.ActApplicationApprove, registry.ActSNAACreate, registry.ActKeyIssue,
		registry.ActApplicationSubmit, registry.ActApplicationReject, registry.ActSNAAUpdate}
	if strings.Join(acts, " ") != strings.Join(want, " ") {
		t.Errorf("audit log %v, want %v (refusals commit nothing)", acts, want)
	}
}

// TestSubmitPublic: the policy's version, the open applications per
// contact e-mail, and the status token that alone reads the state.
func TestSubmitPublic(t *testing.T) {
	s, _, _ := newService(t)
	s.policy = &Policy{Version: "7", Title: "T", Text: "Be good.", Contact: "ops@example.org", MaxOpenPerEmail: 1}
	req := request("Org", "same@example.org")
	var ve *model.ValidationError
	if _, err := s.SubmitPublic("192.0.2.1", req); !errors.As(err, &ve) || ve.Errors[0].Field != "policy_version" {
		t.Errorf("an old policy version: %v", err)
	}
	req.PolicyVersion = "7"
	rc, err := s.SubmitPublic("192.0.2.1", req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SubmitPublic("192.0.2.1", req); !errors.Is(err, ErrConflict) {
		t.Errorf("a second open application naming the address: %v, want ErrConflict", err)
	}
	if st, err := s.Status(rc.ID, rc.StatusToken); err != nil || st.State != registry.StateSubmitted {
		t.Errorf("status: %+v, %v", st, err)
	}
	if _, err := s.Status(rc.ID, "ast_wrong"); !errors.Is(err, ErrNotFound) {
		t.Errorf("status with a wrong token: %v, want ErrNotFound", err)
	}
	if _, err := s.Approve(rc.ID, ApproveRequest{}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Status(rc.ID, rc.StatusToken); err != nil || st.Contact != "ops@example.org" || st.Decided == "" {
		t.Errorf("status once approved: %+v, %v", st, err)
	}
	if CheckPolicy(&Policy{Version: "1", Title: "T"}) == nil {
		t.Error("a policy without text was accepted")
	}
}
