package operator

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/access"
	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/model"
	"pidnode/registry"
)

// TimeFormat is how the replies write a time (RFC 3339).
const TimeFormat = "2006-01-02T15:04:05Z07:00"

// Config configures New.
type Config struct {
	// Registry reads the applications and SNAAs. Required.
	Registry *registry.Registry
	// Keys commits every write with its audit entries (Keys.Update).
	// Required.
	Keys *access.Keys
	// Namer checks and draws namespaces. Required.
	Namer *handlev.Namer
	// Prefixes are the prefixes the node serves (upper case), which an
	// application may ask for and an SNAA may be granted. Required.
	Prefixes []string
	// ChooseShard names the etcd shard of a new SNAA's namespace (name "":
	// the least full). If nil, the node has no shards and a named one is a
	// faulty field.
	ChooseShard func(name string) (string, error)
	// Policy is the application policy; if nil, DefaultPolicy.
	Policy *Policy
	// Rand is the randomness of ids, secrets and namespaces; if nil,
	// crypto/rand. It must be safe for concurrent use.
	Rand io.Reader
	// Now is the clock; if nil, time.Now.
	Now func() time.Time
	// Logger receives a line per decision; nil discards.
	Logger *slog.Logger
}

// Service makes the operator's decisions. Safe for concurrent use.
type Service struct {
	reg      *registry.Registry
	keys     *access.Keys
	namer    *handlev.Namer
	prefixes []string
	shard    func(string) (string, error)
	policy   *Policy
	rnd      io.Reader
	now      func() time.Time
	log      *slog.Logger
	// actor is who the decisions are audited as (As); "" is the operator.
	actor string
}

// As returns a Service whose decisions (Approve, Reject, PatchSNAA) are
// audited as actor, one of the operator's people ("operator person:<id>"),
// instead of the operator. It shares everything else with s.
func (s *Service) As(actor string) *Service {
	c := *s
	c.actor = actor
	return &c
}

// auditActor is who s's decisions are audited as.
func (s *Service) auditActor() string {
	if s.actor == "" {
		return registry.ActorOperator
	}
	return s.actor
}

// New returns the Service of cfg.
func New(cfg Config) (*Service, error) {
	for _, f := range []struct {
		name  string
		unset bool
	}{{"Registry", cfg.Registry == nil}, {"Keys", cfg.Keys == nil}, {"Namer", cfg.Namer == nil}, {"Rand", cfg.Rand == nil}} {
		if f.unset {
			return nil, cfgerr.Required("operator", f.name, ErrConfig)
		}
	}
	s := &Service{reg: cfg.Registry, keys: cfg.Keys, namer: cfg.Namer, prefixes: cfg.Prefixes,
		shard: cfg.ChooseShard, policy: cfg.Policy, rnd: cfg.Rand, now: cfg.Now, log: cfg.Logger}
	if s.policy == nil {
		s.policy = DefaultPolicy()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Policy returns the application policy.
func (s *Service) Policy() *Policy { return s.policy }

// Prefixes returns the prefixes the node serves.
func (s *Service) Prefixes() []string { return slices.Clone(s.prefixes) }

var emailRE = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)

// ApplicationRequest is an application: the body of POST
// /ops/v1/applications and /apply/v1/applications, and the application
// form.
type ApplicationRequest struct {
	Organisation          string           `json:"organisation"`
	TechnicalContact      registry.Contact `json:"technical_contact"`
	AdministrativeContact registry.Contact `json:"administrative_contact"`
	PolicyVersion         string           `json:"policy_version"`
	MaintenanceStatement  string           `json:"maintenance_statement"`
	// Prefixes the organisation asks for (none: every prefix the node
	// serves) and whether it asks to choose custom ids.
	Prefixes  []string `json:"prefixes,omitempty"`
	CustomIDs bool     `json:"custom_ids,omitempty"`
}

func (a *ApplicationRequest) validate() []model.FieldError {
	var v model.Collector
	text := func(field, s string, max int) {
		switch {
		case strings.TrimSpace(s) == "":
			v.Add(field, "is required")
		case utf8.RuneCountInString(s) > max:
			v.Add(field, "must be at most %d characters", max)
		case model.HasControl(strings.NewReplacer("\n", "", "\r", "", "\t", "").Replace(s)):
			v.Add(field, "must not contain control characters")
		}
	}
	contact := func(field string, c registry.Contact) {
		text(field+".name", c.Name, 200)
		if !emailRE.MatchString(c.Email) || len(c.Email) > 254 {
			v.Add(field+".email", "must be an e-mail address")
		}
	}
	text("organisation", a.Organisation, 300)
	contact("technical_contact", a.TechnicalContact)
	contact("administrative_contact", a.AdministrativeContact)
	text("policy_version", a.PolicyVersion, 50)
	text("maintenance_statement", a.MaintenanceStatement, 10000)
	return v.Errors()
}

// Submit validates and stores an application in state SUBMITTED, audited
// as actor. It is the one path of a new application, the operator's route
// and the public ones alike: the request's checks, then in one transaction
// the limit of maxOpen (0: none) applications in state SUBMITTED that name
// one of its contact e-mail addresses, the write and its audit entry.
// statusHash is the hash of the public status token, if any; policy, if
// set, is the only policy version accepted.
func (s *Service) Submit(actor string, req ApplicationRequest, statusHash, policy string, maxOpen int) (*registry.Application, error) {
	fe := req.validate()
	if policy != "" && strings.TrimSpace(req.PolicyVersion) != "" && req.PolicyVersion != policy {
		fe = append(fe, model.FieldError{Field: "policy_version", Message: fmt.Sprintf("must be the current policy's version, %q: agree to the current policy", policy)})
	}
	var prefixes []string
	if len(req.Prefixes) > 0 {
		var pe []model.FieldError
		prefixes, pe = s.CheckPrefixes("prefixes", req.Prefixes)
		fe = append(fe, pe...)
	}
	if len(fe) > 0 {
		return nil, &model.ValidationError{Errors: fe}
	}
	id, err := access.NewID(s.rnd, "app_")
	if err != nil {
		return nil, err
	}
	app := registry.Application{
		ID: id, Organisation: req.Organisation, TechnicalContact: req.TechnicalContact,
		AdministrativeContact: req.AdministrativeContact, PolicyVersion: req.PolicyVersion,
		MaintenanceStatement: req.MaintenanceStatement, Prefixes: prefixes, CustomIDs: req.CustomIDs,
		StatusHash: statusHash, State: registry.StateSubmitted, Submitted: s.now().UTC(),
	}
	err = s.keys.Update(actor, nil, func(tx registry.Tx) ([]access.Change, error) {
		if maxOpen > 0 {
			open, err := tx.Applications(registry.StateSubmitted)
			if err != nil {
				return nil, err
			}
			mine := func(c registry.Contact) bool {
				return strings.EqualFold(c.Email, req.TechnicalContact.Email) || strings.EqualFold(c.Email, req.AdministrativeContact.Email)
			}
			n := 0
			for _, a := range open {
				if mine(a.TechnicalContact) || mine(a.AdministrativeContact) {
					n++
				}
			}
			if n >= maxOpen {
				return nil, refuse(ErrConflict, fmt.Sprintf("%d applications naming these contact e-mail addresses are already waiting for a decision; wait for it, or ask the operator", n))
			}
		}
		return []access.Change{{Action: registry.ActApplicationSubmit, Target: app.ID, After: &app}}, tx.PutApplication(&app)
	})
	if err != nil {
		return nil, err
	}
	return &app, nil
}

// ApplicationReceipt is the reply to a public application: its id and the
// status token, shown this once.
type ApplicationReceipt struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	StatusToken string `json:"status_token"`
	StatusURL   string `json:"status_url"`
}

// SubmitPublic is the one path of a public application (the form and the
// JSON route), once the front has charged the client's address: the
// policy's version and its limit per contact e-mail, a fresh status token.
// from is the client's address, for the audit entry and the log.
func (s *Service) SubmitPublic(from string, req ApplicationRequest) (*ApplicationReceipt, error) {
	tok, err := access.NewSecret(s.rnd)
	if err != nil {
		return nil, err
	}
	tok = "ast_" + strings.TrimPrefix(tok, access.KeyPrefix)
	sum := sha256.Sum256([]byte(tok))
	app, err := s.Submit("applicant:"+from, req, hex.EncodeToString(sum[:]), s.policy.Version, s.policy.MaxOpenPerEmail)
	if err != nil {
		return nil, err
	}
	s.log.Info("application submitted", "application", app.ID, "from", from)
	return &ApplicationReceipt{ID: app.ID, State: app.State, StatusToken: tok, StatusURL: "/apply/v1/applications/" + app.ID}, nil
}

// ApplicationStatus is what an applicant sees of its application.
type ApplicationStatus struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Submitted string `json:"submitted"`
	Decided   string `json:"decided,omitempty"`
	// Reason is the operator's note of a rejection.
	Reason string `json:"reason,omitempty"`
	// Contact is who to contact for the key, once approved.
	Contact string `json:"contact,omitempty"`
	// Namespace and Prefixes are what an approval granted: the SNAA's
	// namespace and the prefixes it may write under.
	Namespace string   `json:"namespace,omitempty"`
	Prefixes  []string `json:"prefixes,omitempty"`
}

// Status returns the state of application id if tok is its status token;
// any mismatch is the same ErrNotFound, so that ids cannot be probed.
func (s *Service) Status(id, tok string) (*ApplicationStatus, error) {
	var a registry.Application
	var sn registry.SNAA
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		if a, ok, err = tx.Application(id); err != nil || !ok || a.SNAAID == "" {
			return err
		}
		sn, _, err = tx.SNAA(a.SNAAID)
		return err
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(tok))
	want, _ := hex.DecodeString(a.StatusHash)
	if !ok || len(want) != len(sum) || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
		return nil, refuse(ErrNotFound, "no application with this id and status token")
	}
	st := &ApplicationStatus{ID: a.ID, State: a.State, Submitted: a.Submitted.UTC().Format(TimeFormat)}
	if a.Decided != nil {
		st.Decided = a.Decided.UTC().Format(TimeFormat)
	}
	switch a.State {
	case registry.StateRejected:
		st.Reason = a.Note
	case registry.StateApproved:
		st.Contact = s.policy.Contact
		st.Namespace, st.Prefixes = sn.Namespace, sn.Prefixes
	}
	return st, nil
}

// CheckPrefixes canonicalises requested prefixes (field names them in the
// errors); nil means every prefix the node serves.
func (s *Service) CheckPrefixes(field string, ps []string) ([]string, []model.FieldError) {
	if ps == nil {
		return slices.Clone(s.prefixes), nil
	}
	var v model.Collector
	var out []string
	for i, p := range ps {
		up := strings.ToUpper(strings.TrimSpace(p))
		if !slices.Contains(s.prefixes, up) {
			v.Add(fmt.Sprintf("%s[%d]", field, i), "must be one of %s", strings.Join(s.prefixes, ", "))
			continue
		}
		if !slices.Contains(out, up) {
			out = append(out, up)
		}
	}
	return out, v.Errors()
}

// Applications lists the applications in state, in any case (all if "");
// another state is ErrBadRequest.
func (s *Service) Applications(state string) ([]registry.Application, error) {
	state = strings.ToUpper(state)
	if state != "" && state != registry.StateSubmitted && state != registry.StateApproved && state != registry.StateRejected {
		return nil, refuse(ErrBadRequest, "state must be SUBMITTED, APPROVED or REJECTED")
	}
	var out []registry.Application
	err := s.reg.View(func(tx registry.Tx) (err error) {
		out, err = tx.Applications(state)
		return err
	})
	return out, err
}

// Application returns application id, or ErrNotFound.
func (s *Service) Application(id string) (*registry.Application, error) {
	var a registry.Application
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		a, ok, err = tx.Application(id)
		return err
	})
	if err == nil && !ok {
		err = refuse(ErrNotFound, fmt.Sprintf("no application %q", id))
	}
	return &a, err
}

// SNAAs lists every SNAA.
func (s *Service) SNAAs() ([]registry.SNAA, error) {
	var out []registry.SNAA
	err := s.reg.View(func(tx registry.Tx) (err error) {
		out, err = tx.SNAAs()
		return err
	})
	return out, err
}

// SNAA returns SNAA id, or ErrNotFound.
func (s *Service) SNAA(id string) (*registry.SNAA, error) {
	var sn registry.SNAA
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		sn, ok, err = tx.SNAA(id)
		return err
	})
	if err == nil && !ok {
		err = refuse(ErrNotFound, fmt.Sprintf("no SNAA %q", id))
	}
	return &sn, err
}

// errNoShards is the refusal of a named shard by a node that has none.
var errNoShards = errors.New("this node has no etcd shards")
