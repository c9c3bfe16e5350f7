package admin

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"pidnode/access"
	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
)

var emailRE = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)

// ApplicationRequest is the body of POST /ops/v1/applications.
type ApplicationRequest struct {
	Organisation          string  `json:"organisation"`
	TechnicalContact      Contact `json:"technical_contact"`
	AdministrativeContact Contact `json:"administrative_contact"`
	PolicyVersion         string  `json:"policy_version"`
	MaintenanceStatement  string  `json:"maintenance_statement"`
	// Prefixes the organisation asks for (none: every prefix the node
	// serves) and whether it asks to choose custom ids.
	Prefixes  []string `json:"prefixes,omitempty"`
	CustomIDs bool     `json:"custom_ids,omitempty"`
}

func (a *ApplicationRequest) validate() []FieldError {
	var v validator
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
	contact := func(field string, c Contact) {
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
	return s.submitApplicationAs(ActorOperator, req, "", "", 0)
}

// submitApplicationAs is the one path of a new application, the operator's
// route and the public form's (apply.go) alike: the request's checks, then
// in one transaction the limit of maxOpen (0: none) applications in state
// SUBMITTED that name one of its contact e-mail addresses, the write and its
// audit entry. statusHash is the hash of the public status token, if any;
// policy, if set, is the only policy version accepted.
func (s *Server) submitApplicationAs(actor string, req ApplicationRequest, statusHash, policy string, maxOpen int) (*Application, error) {
	fe := req.validate()
	if policy != "" && strings.TrimSpace(req.PolicyVersion) != "" && req.PolicyVersion != policy {
		fe = append(fe, FieldError{Field: "policy_version", Message: fmt.Sprintf("must be the current policy's version, %q: agree to the current policy", policy)})
	}
	var prefixes []string
	if len(req.Prefixes) > 0 {
		var pe []FieldError
		prefixes, pe = s.checkPrefixes("prefixes", req.Prefixes)
		fe = append(fe, pe...)
	}
	if len(fe) > 0 {
		return nil, &model.ValidationError{Errors: fe}
	}
	id, err := s.newID("app_")
	if err != nil {
		return nil, err
	}
	app := Application{
		ID: id, Organisation: req.Organisation, TechnicalContact: req.TechnicalContact,
		AdministrativeContact: req.AdministrativeContact, PolicyVersion: req.PolicyVersion,
		MaintenanceStatement: req.MaintenanceStatement, Prefixes: prefixes, CustomIDs: req.CustomIDs,
		StatusHash: statusHash, State: StateSubmitted, Submitted: s.now().UTC(),
	}
	err = s.opWriteAs(actor, func(tx registry.Tx) ([]change, error) {
		if maxOpen > 0 {
			open, err := tx.Applications(StateSubmitted)
			if err != nil {
				return nil, err
			}
			mine := func(c Contact) bool {
				return strings.EqualFold(c.Email, req.TechnicalContact.Email) || strings.EqualFold(c.Email, req.AdministrativeContact.Email)
			}
			n := 0
			for _, a := range open {
				if mine(a.TechnicalContact) || mine(a.AdministrativeContact) {
					n++
				}
			}
			if n >= maxOpen {
				return nil, problem(http.StatusConflict, "%d applications naming these contact e-mail addresses are already waiting for a decision; wait for it, or ask the operator", n)
			}
		}
		return []change{{ActApplicationSubmit, app.ID, nil, &app}}, tx.PutApplication(&app)
	})
	if err != nil {
		return nil, err
	}
	return &app, nil
}

func (s *Server) listApplications(w http.ResponseWriter, r *http.Request) error {
	state := strings.ToUpper(r.URL.Query().Get("state"))
	if state != "" && state != StateSubmitted && state != StateApproved && state != StateRejected {
		return problem(http.StatusBadRequest, "state must be SUBMITTED, APPROVED or REJECTED")
	}
	var out []Application
	err := s.reg.View(func(tx registry.Tx) (err error) {
		out, err = tx.Applications(state)
		return err
	})
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
	var a Application
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		a, ok, err = tx.Application(r.PathValue("id"))
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		return problem(http.StatusNotFound, "no application %q", r.PathValue("id"))
	}
	writeJSON(w, http.StatusOK, &a)
	return nil
}

// ApproveRequest is the body of POST /ops/v1/applications/{id}/approve.
// Prefixes and CustomIDs, when absent (nil), grant what the application
// asked for: its prefixes (every prefix the node serves if it named none)
// and its custom_ids.
type ApproveRequest struct {
	Namespace string   `json:"namespace,omitempty"`
	Prefixes  []string `json:"prefixes,omitempty"`
	CustomIDs *bool    `json:"custom_ids,omitempty"`
	Note      string   `json:"note,omitempty"`
	// Shard names the etcd shard of the namespace (a cluster of several);
	// empty: the cluster picks the least full.
	Shard string `json:"shard,omitempty"`
}

// ApproveResult is the reply to an approval: the new SNAA and its first key
// (the only time its secret is shown).
type ApproveResult struct {
	Application Application `json:"application"`
	SNAA        SNAA        `json:"snaa"`
	Key         IssuedKey   `json:"key"`
}

// IssuedKey is a new key with its secret.
type IssuedKey struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	SNAAID  string `json:"snaa_id"`
	Secret  string `json:"secret"`
	Created string `json:"created"`
}

// checkPrefixes canonicalises requested prefixes; nil means every base's prefix.
func (s *Server) checkPrefixes(field string, ps []string) ([]string, []FieldError) {
	var served []string
	for _, b := range s.bases {
		if b.prefix != "" {
			served = append(served, b.prefix)
		}
	}
	if ps == nil {
		return served, nil
	}
	var v validator
	var out []string
	for i, p := range ps {
		up := strings.ToUpper(strings.TrimSpace(p))
		if !slices.Contains(served, up) {
			v.Add(fmt.Sprintf("%s[%d]", field, i), "must be one of %s", strings.Join(served, ", "))
			continue
		}
		if !slices.Contains(out, up) {
			out = append(out, up)
		}
	}
	return out, v.Errors()
}

// spellsName reports whether a random namespace spells (part of) the
// organisation's name or its initials (docs/product.md §2: never a word that spells an
// organisation's name).
func spellsName(ns, org string) bool {
	var alnum, initials strings.Builder
	newWord := true
	for _, r := range strings.ToUpper(org) {
		if r < 128 && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			alnum.WriteRune(r)
			if newWord {
				initials.WriteRune(r)
			}
			newWord = false
		} else {
			newWord = true
		}
	}
	return strings.Contains(alnum.String(), ns) || strings.Contains(initials.String(), ns)
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

// Approve approves a SUBMITTED application: it creates the SNAA with its
// namespace and prefixes and issues its first key, in one transaction.
func (s *Server) Approve(appID string, req ApproveRequest) (*ApproveResult, error) {
	var v validator
	ns := strings.ToUpper(strings.TrimSpace(req.Namespace))
	if ns != "" {
		if err := s.namer.CheckNamespace(ns); err != nil {
			v.Add("namespace", "%s", strings.TrimPrefix(err.Error(), "handlev: "))
		}
	}
	var prefixes []string
	if req.Prefixes != nil {
		var pe []FieldError
		prefixes, pe = s.checkPrefixes("prefixes", req.Prefixes)
		for _, e := range pe {
			v.Add(e.Field, "%s", e.Message)
		}
		if len(prefixes) == 0 && len(pe) == 0 {
			v.Add("prefixes", "must name at least one prefix")
		}
	}
	if utf8.RuneCountInString(req.Note) > 10000 {
		v.Add("note", "must be at most 10000 characters")
	}
	shard, err := chooseShard(s.w, req.Shard)
	if err != nil {
		if _, ok := unavailableProblem(err); ok {
			return nil, err
		}
		v.Add("shard", "%s", err)
	}
	if errs := v.Errors(); len(errs) > 0 {
		return nil, &model.ValidationError{Errors: errs}
	}
	snaaID, err := s.newID("snaa_")
	if err != nil {
		return nil, err
	}
	keyID, err := s.newID("key_")
	if err != nil {
		return nil, err
	}
	secret, err := access.NewSecret(s.rnd)
	if err != nil {
		return nil, err
	}
	// Candidate namespaces drawn outside the transaction (a re-run must not
	// depend on fresh randomness to be correct; it just picks the first free one).
	var cands []string
	if ns == "" {
		for len(cands) < 32 {
			c, err := handlev.NewNamespace(s.rnd)
			if err != nil {
				return nil, err
			}
			if s.namer.CheckNamespace(c) == nil {
				cands = append(cands, c)
			}
		}
	}
	now := s.now().UTC()
	var res ApproveResult
	err = s.opWrite(func(tx registry.Tx) ([]change, error) {
		app, ok, err := tx.Application(appID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, problem(http.StatusNotFound, "no application %q", appID)
		}
		if app.State != StateSubmitted {
			return nil, problem(http.StatusConflict, "application %s is already %s", appID, app.State)
		}
		grant, customIDs := prefixes, app.CustomIDs
		if req.Prefixes == nil {
			// The application's prefixes, checked again: the node may have
			// stopped serving one since it was submitted.
			var pe []FieldError
			if grant, pe = s.checkPrefixes("prefixes", app.Prefixes); len(pe) > 0 {
				return nil, &model.ValidationError{Errors: pe}
			}
		}
		if req.CustomIDs != nil {
			customIDs = *req.CustomIDs
		}
		chosen := ns
		if chosen != "" {
			taken, err := tx.NamespaceTaken(chosen)
			if err != nil {
				return nil, err
			}
			if taken {
				return nil, problem(http.StatusConflict, "namespace %s is already assigned to another SNAA", chosen)
			}
		} else {
			for _, c := range cands {
				if spellsName(c, app.Organisation) {
					continue
				}
				taken, err := tx.NamespaceTaken(c)
				if err != nil {
					return nil, err
				}
				if !taken {
					chosen = c
					break
				}
			}
			if chosen == "" {
				return nil, errors.New("admin: no free namespace found; name one")
			}
		}
		before := app
		sn := SNAA{
			ID: snaaID, Organisation: app.Organisation, Namespace: chosen, Prefixes: grant,
			CustomIDs: customIDs, ApplicationID: app.ID, TechnicalContact: app.TechnicalContact,
			Created: now, Updated: now, Shard: shard,
		}
		sum := access.Hash(secret)
		k := Key{ID: keyID, SNAAID: snaaID, Name: "initial", Hash: hex.EncodeToString(sum[:]), Created: now}
		app.State = StateApproved
		app.Decided = &now
		app.Note = req.Note
		app.SNAAID = snaaID
		if err := tx.PutApplication(&app); err != nil {
			return nil, err
		}
		if err := tx.PutSNAA(&sn); err != nil {
			return nil, err
		}
		if err := tx.PutKey(k.Hash, &k); err != nil {
			return nil, err
		}
		res = ApproveResult{Application: app, SNAA: sn, Key: IssuedKey{ID: k.ID, Name: k.Name, SNAAID: sn.ID, Secret: secret, Created: now.Format(timeFormat)}}
		kv := access.KeyView(k)
		return []change{
			{ActApplicationApprove, app.ID, &before, &app},
			{ActSNAACreate, sn.ID, nil, &sn},
			{ActKeyIssue, sn.ID + "/" + k.ID, nil, &kv},
		}, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("application approved", "application", appID, "snaa", res.SNAA.ID, "namespace", res.SNAA.Namespace)
	// Records imported into the namespace before its SNAA existed become
	// searchable by URL now (the index skips namespaces nobody owns).
	if n, err := s.reg.IndexNamespace(res.SNAA.Namespace); err != nil {
		s.log.Error("indexing the new namespace's records by URL", "namespace", res.SNAA.Namespace, "err", err)
	} else if n > 0 {
		s.log.Info("indexed imported records by URL", "namespace", res.SNAA.Namespace, "entries", n)
	}
	return &res, nil
}

const timeFormat = "2006-01-02T15:04:05Z07:00"

// RejectRequest is the body of POST /ops/v1/applications/{id}/reject.
type RejectRequest struct {
	Note string `json:"note"`
}

func (s *Server) rejectApplication(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[RejectRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	if strings.TrimSpace(req.Note) == "" {
		return &model.ValidationError{Errors: []FieldError{{Field: "note", Message: "is required: tell the applicant why"}}}
	}
	id := r.PathValue("id")
	now := s.now().UTC()
	var app Application
	err = s.opWrite(func(tx registry.Tx) ([]change, error) {
		var ok bool
		var err error
		app, ok, err = tx.Application(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, problem(http.StatusNotFound, "no application %q", id)
		}
		if app.State != StateSubmitted {
			return nil, problem(http.StatusConflict, "application %s is already %s", id, app.State)
		}
		before := app
		app.State = StateRejected
		app.Decided = &now
		app.Note = req.Note
		return []change{{ActApplicationReject, id, &before, &app}}, tx.PutApplication(&app)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, &app)
	return nil
}

func (s *Server) listSNAAs(w http.ResponseWriter, r *http.Request) error {
	var out []SNAA
	err := s.reg.View(func(tx registry.Tx) (err error) {
		out, err = tx.SNAAs()
		return err
	})
	if err != nil {
		return err
	}
	if out == nil {
		out = []SNAA{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"snaas": out})
	return nil
}

func (s *Server) loadSNAA(id string) (SNAA, bool, error) {
	var sn SNAA
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		sn, ok, err = tx.SNAA(id)
		return err
	})
	return sn, ok, err
}

func (s *Server) getSNAA(w http.ResponseWriter, r *http.Request) error {
	sn, ok, err := s.loadSNAA(r.PathValue("id"))
	if err != nil {
		return err
	}
	if !ok {
		return problem(http.StatusNotFound, "no SNAA %q", r.PathValue("id"))
	}
	writeJSON(w, http.StatusOK, &sn)
	return nil
}

// SNAAPatch is the body of PATCH /ops/v1/snaas/{id}.
type SNAAPatch struct {
	CustomIDs *bool    `json:"custom_ids,omitempty"`
	Prefixes  []string `json:"prefixes,omitempty"`
	Suspended *bool    `json:"suspended,omitempty"`
	// MaxKeys sets how many unrevoked keys the SNAA may hold (1 to
	// MaxKeysPerSNAA; 0: back to DefaultKeysPerSNAA). Lowering it below the
	// keys the SNAA holds revokes none: new keys are refused until enough
	// are revoked.
	MaxKeys *int `json:"max_keys,omitempty"`
}

func (s *Server) patchSNAA(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[SNAAPatch](w, r, s.maxBody)
	if err != nil {
		return err
	}
	var prefixes []string
	if req.Prefixes != nil {
		var pe []FieldError
		prefixes, pe = s.checkPrefixes("prefixes", req.Prefixes)
		if len(pe) > 0 {
			return &model.ValidationError{Errors: pe}
		}
	}
	if req.MaxKeys != nil && (*req.MaxKeys < 0 || *req.MaxKeys > MaxKeysPerSNAA) {
		return &model.ValidationError{Errors: []FieldError{{Field: "max_keys", Message: fmt.Sprintf("must be an integer from 1 to %d, or 0 for the default (%d)", MaxKeysPerSNAA, DefaultKeysPerSNAA)}}}
	}
	id := r.PathValue("id")
	var sn SNAA
	err = s.opWrite(func(tx registry.Tx) ([]change, error) {
		var ok bool
		var err error
		sn, ok, err = tx.SNAA(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, problem(http.StatusNotFound, "no SNAA %q", id)
		}
		before := sn
		if req.CustomIDs != nil {
			sn.CustomIDs = *req.CustomIDs
		}
		if req.Suspended != nil {
			sn.Suspended = *req.Suspended
		}
		if prefixes != nil {
			sn.Prefixes = prefixes
		}
		if req.MaxKeys != nil {
			sn.MaxKeys = *req.MaxKeys
		}
		sn.Updated = s.now().UTC()
		return []change{{ActSNAAUpdate, id, &before, &sn}}, tx.PutSNAA(&sn)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, &sn)
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
	return &IssuedKey{ID: k.ID, Name: k.Name, SNAAID: snaaID, Secret: secret, Created: k.Created.Format(timeFormat)}, nil
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
