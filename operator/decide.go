package operator

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/access"
	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
)

// ApproveRequest is the body of POST /ops/v1/applications/{id}/approve
// and the console's approve form. Prefixes and CustomIDs, when absent
// (nil), grant what the application asked for: its prefixes (every prefix
// the node serves if it named none) and its custom_ids.
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
	Application registry.Application `json:"application"`
	SNAA        registry.SNAA        `json:"snaa"`
	Key         IssuedKey            `json:"key"`
}

// IssuedKey is a new key with its secret.
type IssuedKey struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	SNAAID  string `json:"snaa_id"`
	Secret  string `json:"secret"`
	Created string `json:"created"`
}

// Issued is k, just issued to SNAA snaaID with secret, as its reply.
func Issued(k registry.Key, snaaID, secret string) *IssuedKey {
	return &IssuedKey{ID: k.ID, Name: k.Name, SNAAID: snaaID, Secret: secret, Created: k.Created.Format(TimeFormat)}
}

// spellsName reports whether a random namespace spells (part of) the
// organisation's name or its initials (docs/product.md §2: never a word
// that spells an organisation's name).
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

// chooseShard is the shard a new SNAA's namespace goes to (Config.ChooseShard).
func (s *Service) chooseShard(name string) (string, error) {
	if s.shard != nil {
		return s.shard(name)
	}
	if name != "" {
		return "", errNoShards
	}
	return "", nil
}

// Approve approves a SUBMITTED application as the operator: it creates the
// SNAA with its namespace and prefixes and issues its first key, in one
// transaction.
func (s *Service) Approve(appID string, req ApproveRequest) (*ApproveResult, error) {
	var v model.Collector
	ns := strings.ToUpper(strings.TrimSpace(req.Namespace))
	if ns != "" {
		if err := s.namer.CheckNamespace(ns); err != nil {
			v.Add("namespace", "%s", strings.TrimPrefix(err.Error(), "handlev: "))
		}
	}
	var prefixes []string
	if req.Prefixes != nil {
		var pe []model.FieldError
		prefixes, pe = s.CheckPrefixes("prefixes", req.Prefixes)
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
	shard, err := s.chooseShard(req.Shard)
	if err != nil {
		// A Writer that cannot decide now (etcd unreachable) is not a
		// faulty field: the front answers it as unavailable.
		var u interface{ RetryAfter() time.Duration }
		if errors.As(err, &u) {
			return nil, err
		}
		v.Add("shard", "%s", err)
	}
	if errs := v.Errors(); len(errs) > 0 {
		return nil, &model.ValidationError{Errors: errs}
	}
	snaaID, err := access.NewID(s.rnd, "snaa_")
	if err != nil {
		return nil, err
	}
	keyID, err := access.NewID(s.rnd, "key_")
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
	err = s.keys.Update(s.auditActor(), nil, func(tx registry.Tx) ([]access.Change, error) {
		app, ok, err := tx.Application(appID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(ErrNotFound, fmt.Sprintf("no application %q", appID))
		}
		if app.State != registry.StateSubmitted {
			return nil, refuse(ErrConflict, fmt.Sprintf("application %s is already %s", appID, app.State))
		}
		grant, customIDs := prefixes, app.CustomIDs
		if req.Prefixes == nil {
			// The application's prefixes, checked again: the node may have
			// stopped serving one since it was submitted.
			var pe []model.FieldError
			if grant, pe = s.CheckPrefixes("prefixes", app.Prefixes); len(pe) > 0 {
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
				return nil, refuse(ErrConflict, fmt.Sprintf("namespace %s is already assigned to another SNAA", chosen))
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
				return nil, errors.New("operator: no free namespace found; name one")
			}
		}
		before := app
		sn := registry.SNAA{
			ID: snaaID, Organisation: app.Organisation, Namespace: chosen, Prefixes: grant,
			CustomIDs: customIDs, ApplicationID: app.ID, TechnicalContact: app.TechnicalContact,
			Created: now, Updated: now, Shard: shard,
		}
		sum := access.Hash(secret)
		k := registry.Key{ID: keyID, SNAAID: snaaID, Name: "initial", Hash: hex.EncodeToString(sum[:]), Created: now}
		app.State = registry.StateApproved
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
		res = ApproveResult{Application: app, SNAA: sn, Key: *Issued(k, sn.ID, secret)}
		kv := access.KeyView(k)
		return []access.Change{
			{Action: registry.ActApplicationApprove, Target: app.ID, Before: &before, After: &app},
			{Action: registry.ActSNAACreate, Target: sn.ID, After: &sn},
			{Action: registry.ActKeyIssue, Target: sn.ID + "/" + k.ID, After: &kv},
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

// RejectRequest is the body of POST /ops/v1/applications/{id}/reject and
// the console's reject form.
type RejectRequest struct {
	Note string `json:"note"`
}

// Reject rejects a SUBMITTED application as the operator; the note (why)
// is required.
func (s *Service) Reject(id string, req RejectRequest) (*registry.Application, error) {
	if strings.TrimSpace(req.Note) == "" {
		return nil, &model.ValidationError{Errors: []model.FieldError{{Field: "note", Message: "is required: tell the applicant why"}}}
	}
	now := s.now().UTC()
	var app registry.Application
	err := s.keys.Update(s.auditActor(), nil, func(tx registry.Tx) ([]access.Change, error) {
		var ok bool
		var err error
		app, ok, err = tx.Application(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(ErrNotFound, fmt.Sprintf("no application %q", id))
		}
		if app.State != registry.StateSubmitted {
			return nil, refuse(ErrConflict, fmt.Sprintf("application %s is already %s", id, app.State))
		}
		before := app
		app.State = registry.StateRejected
		app.Decided = &now
		app.Note = req.Note
		return []access.Change{{Action: registry.ActApplicationReject, Target: id, Before: &before, After: &app}}, tx.PutApplication(&app)
	})
	if err != nil {
		return nil, err
	}
	return &app, nil
}

// SNAAPatch is the body of PATCH /ops/v1/snaas/{id} and the console's SNAA
// forms.
type SNAAPatch struct {
	CustomIDs *bool    `json:"custom_ids,omitempty"`
	Prefixes  []string `json:"prefixes,omitempty"`
	Suspended *bool    `json:"suspended,omitempty"`
	// MaxKeys sets how many unrevoked keys the SNAA may hold (1 to
	// access.MaxKeysPerSNAA; 0: back to access.DefaultKeysPerSNAA).
	// Lowering it below the keys the SNAA holds revokes none: new keys are
	// refused until enough are revoked.
	MaxKeys *int `json:"max_keys,omitempty"`
}

// PatchSNAA changes SNAA id as the operator: what the patch sets.
func (s *Service) PatchSNAA(id string, req SNAAPatch) (*registry.SNAA, error) {
	var prefixes []string
	if req.Prefixes != nil {
		var pe []model.FieldError
		prefixes, pe = s.CheckPrefixes("prefixes", req.Prefixes)
		if len(pe) > 0 {
			return nil, &model.ValidationError{Errors: pe}
		}
	}
	if req.MaxKeys != nil && (*req.MaxKeys < 0 || *req.MaxKeys > access.MaxKeysPerSNAA) {
		return nil, &model.ValidationError{Errors: []model.FieldError{{Field: "max_keys", Message: fmt.Sprintf("must be an integer from 1 to %d, or 0 for the default (%d)", access.MaxKeysPerSNAA, access.DefaultKeysPerSNAA)}}}
	}
	var sn registry.SNAA
	err := s.keys.Update(s.auditActor(), nil, func(tx registry.Tx) ([]access.Change, error) {
		var ok bool
		var err error
		sn, ok, err = tx.SNAA(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(ErrNotFound, fmt.Sprintf("no SNAA %q", id))
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
		return []access.Change{{Action: registry.ActSNAAUpdate, Target: id, Before: &before, After: &sn}}, tx.PutSNAA(&sn)
	})
	if err != nil {
		return nil, err
	}
	return &sn, nil
}
