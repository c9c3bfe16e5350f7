package write

import (
	"fmt"
	"time"

	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// UpdateRequest is one update of an existing identifier: a merge of Payload
// ("url", "metadata") into the stored record.
type UpdateRequest struct {
	// ID is the identifier's id in the Target's namespace.
	ID      string
	Payload map[string]any
	// IfMatch, if not empty, is an If-Match list of ETags (ETag): the
	// update is made only if it names the stored version.
	IfMatch string
}

// Update merges req.Payload into the identifier req.ID of t for a. An
// update that changes nothing writes nothing (Result.Written false).
func (s *Service) Update(a *Actor, t Target, req UpdateRequest) (*Result, error) {
	w, err := model.CheckPayload(req.Payload)
	if err != nil {
		return nil, err
	}
	display := s.namer.Full(t.Prefix, t.Namespace, req.ID)
	key, _, err := s.namer.Key(display)
	if err != nil {
		return nil, refuse(ErrNotFound, fmt.Sprintf("no identifier %s: %v", display, err))
	}
	now := s.now()
	var (
		o   outcome
		res Result
	)
	err = s.w.CommitAs(a.SNAA.ID, 1, func(tx registry.Tx) error {
		o, res = outcome{}, Result{}
		wr, err := s.txUpdate(tx, a, t, key, display, w, req.IfMatch, now)
		if err != nil {
			return o.refused(err)
		}
		res = Result{Key: key, Stored: wr.stored, Written: wr.written}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.err != nil {
		return nil, o.err
	}
	if res.Written {
		s.invalidate(key)
	}
	return &res, nil
}

// txUpdate merges req into the identifier stored under key inside tx.
// It is step 4 of the validation path (check.go) of an update. A client's
// error comes as a refusal.
func (s *Service) txUpdate(tx registry.Tx, a *Actor, t Target, key, display string, req *model.Write, ifMatch string, now time.Time) (w writeResult, err error) {
	w.key = key
	old, ok, err := tx.Record(key)
	if err != nil {
		return w, err
	}
	if !ok {
		return w, refusal{refuse(ErrNotFound, "no identifier "+display+"; to create it with this custom id send If-None-Match: *")}
	}
	if ifMatch != "" && !ETagMatches(ifMatch, old.Version) {
		return w, refusal{refuse(ErrPrecondition, fmt.Sprintf("identifier %s is at version %d (ETag %s), not %s; read it again and retry",
			old.Record.Handle, old.Version, ETag(old.Version), ifMatch))}
	}
	before := s.model.Extract(old.Record.Values)
	newURL, meta, verr := s.model.Merge(before, req)
	if verr != nil {
		return w, refusal{verr}
	}
	vals, entries := s.model.Build(model.BuildInput{Display: old.Record.Handle, AdminHandle: s.namer.Full(t.Prefix, t.Namespace, "ADMIN"),
		URL: newURL, Metadata: meta, Old: old.Record.Values, Agent: a.agent(), Now: now})
	if entries == nil {
		w.stored = old // nothing changed: no write, no new version
		return w, nil
	}
	if perr := s.model.CheckRecord(old.Record.Handle, vals); perr != nil {
		return w, refusal{perr}
	}
	w.stored = store.Stored{Record: handlev.Record{Handle: old.Record.Handle, Values: vals},
		Version: old.Version + 1, Created: old.Created, Updated: now}
	if err := tx.PutRecord(key, &w.stored); err != nil {
		return w, s.storeRefusal(err)
	}
	w.written = true
	if err := tx.IndexRecord(key, &old, &w.stored); err != nil {
		return w, err
	}
	return w, auditHandle(tx, a, registry.ActHandleUpdate, key, old.Record.Handle, AuditContent(before), AuditContent(s.model.Extract(vals)))
}
