package write

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// CreateRequest is one create.
type CreateRequest struct {
	// CustomID is the id chosen by the SNAA; empty for a generated one.
	CustomID string
	// IfAbsent makes a taken custom id ErrPrecondition (the client asked
	// for "create only if absent") instead of ErrExists.
	IfAbsent bool
	// Payload is the decoded request body ("url", "metadata").
	Payload map[string]any
	// Idempotency, if not empty, is the client's Idempotency-Key. It is
	// remembered per SNAA and Scope (the API base the request came
	// through). Request is what identifies the request besides its body
	// (its path and query) and Body its body: a repeat of the same key
	// with another Request or Body is ErrIdempotencyMismatch.
	Idempotency, Scope string
	Request            string
	Body               []byte
}

// Result is what a create or update wrote (or found).
type Result struct {
	// Key is the record's storage key; Stored the record as it is now.
	Key    string
	Stored store.Stored
	// Written: the write made a new version. An update that changes
	// nothing and a replayed create write nothing.
	Written bool
	// Replayed: a create answered from its Idempotency-Key record.
	Replayed bool
	// Content is what the caller shows of a fresh create's record, and
	// MetaJSON its metadata as JSON without HTML escaping (nil if not
	// encoded); both are set only for a create that wrote.
	Content  *model.Content
	MetaJSON []byte
}

// Create makes a new identifier in t for a.
func (s *Service) Create(a *Actor, t Target, req CreateRequest) (*Result, error) {
	w, err := s.checkCreate(a, t, req.CustomID, req.Payload)
	if err != nil {
		return nil, err
	}
	var idemKey, bodyHash string
	if req.Idempotency != "" {
		idemKey = a.SNAA.ID + " " + req.Scope + " " + req.Idempotency
		h := sha256.New()
		h.Write([]byte(req.Request + "\n"))
		h.Write(req.Body)
		bodyHash = hex.EncodeToString(h.Sum(nil))
	}
	now := s.now()
	// Everything but the id's collision check and the bucket writes is done
	// here, before the write joins a commit group.
	pc, perr, err := s.prepareCreate(a, t, req.CustomID, *w.Payload.URL, w.Meta, now)
	if err != nil {
		return nil, err
	}
	if perr != nil {
		return nil, perr
	}
	pc.ifAbsent = req.IfAbsent
	var (
		o   outcome
		res Result
	)
	err = s.w.CommitAs(a.SNAA.ID, 1, func(tx registry.Tx) error {
		o, res = outcome{}, Result{}
		if idemKey != "" {
			ir, ok, err := tx.Idem(idemKey)
			if err != nil {
				return err
			}
			if ok && now.Sub(ir.Created) < s.idemTTL {
				if ir.BodyHash != bodyHash {
					return o.fail(refuse(ErrIdempotencyMismatch, fmt.Sprintf(
						"Idempotency-Key %q was already used with a different request; use a new key for a new identifier", req.Idempotency)))
				}
				st, found, err := tx.Record(ir.Key)
				if err != nil {
					return err
				}
				if found {
					res = Result{Key: ir.Key, Stored: st, Replayed: true}
					return nil
				}
			}
		}
		wr, err := s.txCreatePrepared(tx, &pc)
		if err != nil {
			return o.refused(err)
		}
		res = Result{Key: wr.key, Stored: wr.stored, Written: true, Content: &pc.content, MetaJSON: pc.metaJSON}
		if idemKey != "" {
			return tx.PutIdem(idemKey, &registry.IdemRecord{BodyHash: bodyHash, Key: wr.key, Created: now})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.err != nil {
		return nil, o.err
	}
	if res.Written {
		s.invalidate(res.Key)
	}
	return &res, nil
}

// preparedCreate is a create with everything that does not need the write
// transaction done: id checked, record values built, audit entry encoded.
type preparedCreate struct {
	a        *Actor
	t        Target
	customID string
	ifAbsent bool
	// display and key: the custom id's, or a generated candidate that the
	// transaction keeps unless it is taken.
	display, key string
	vals         []handlev.Value
	url          string
	now          time.Time
	content      model.Content // what the caller shows of vals
	metaJSON     []byte        // content.Metadata as JSON (Result.MetaJSON), or nil
	after        []byte        // the audit entry's "after", JSON
	auditTail    []byte        // the audit entry for display
}

// prepareCreate does the work of a create that needs no transaction:
// building the values (change log JSON included), the audit entry's JSON and a
// generated id candidate. perr is the client's fault (a custom id that makes
// no key, a record over the store's limits). u and meta must be validated.
func (s *Service) prepareCreate(a *Actor, t Target, customID string, u string, meta map[string]any, now time.Time) (pc preparedCreate, perr, err error) {
	pc = preparedCreate{a: a, t: t, customID: customID, url: u, now: now}
	if customID != "" {
		pc.display = s.namer.Full(t.Prefix, t.Namespace, customID)
		k, _, err := s.namer.Key(pc.display)
		if err != nil {
			return pc, invalidField("id", err.Error()), nil
		}
		pc.key = k
	} else if pc.display, pc.key, err = s.mintKey(t); err != nil {
		return pc, nil, err
	}
	// The values do not depend on the id: the record holds its admin handle,
	// not its own name.
	pc.vals, _ = s.model.Build(model.BuildInput{Display: pc.display, AdminHandle: s.namer.Full(t.Prefix, t.Namespace, "ADMIN"), URL: u,
		Metadata: meta, Agent: a.agent(), Now: now, Create: true})
	if perr := s.model.CheckRecord(pc.display, pc.vals); perr != nil {
		return pc, perr, nil
	}
	pc.content = s.model.CreatedContent(u, meta, pc.vals)
	if pc.after, pc.metaJSON, err = AuditContentJSON(pc.content); err != nil {
		return pc, nil, err
	}
	pc.auditTail, err = createAuditTail(a, pc.display, pc.after)
	return pc, nil, err
}

// mintKey returns a fresh generated id's display handle and storage key.
func (s *Service) mintKey(t Target) (display, key string, err error) {
	id, err := handlev.Mint(t.Namespace, s.rnd)
	if err != nil {
		return "", "", err
	}
	display = s.namer.Full(t.Prefix, t.Namespace, id)
	key, _, err = s.namer.Key(display)
	return display, key, err
}

// maxMintTries bounds the generated ids a create tries before it gives up.
const maxMintTries = 16

// txCreatePrepared writes a prepared create inside tx: the id's collision
// check (a taken generated candidate is replaced by a new one), the record,
// its record index entries and its audit entry. It does not modify pc, so that a
// commit group can run it again. A client's error comes as a refusal.
func (s *Service) txCreatePrepared(tx registry.Tx, pc *preparedCreate) (w writeResult, err error) {
	display, tail := pc.display, pc.auditTail
	w.key = pc.key
	if tx.HasRecord(w.key) {
		if pc.customID != "" {
			kind := ErrExists
			if pc.ifAbsent {
				kind = ErrPrecondition
			}
			return w, refusal{refuse(kind, "identifier "+display+" already exists; update it with PUT (without If-None-Match)")}
		}
		for try := 1; ; try++ {
			if try == maxMintTries {
				return w, errors.New("write: no free generated id after 16 tries")
			}
			if display, w.key, err = s.mintKey(pc.t); err != nil {
				return w, err
			}
			if !tx.HasRecord(w.key) {
				break
			}
		}
		if tail, err = createAuditTail(pc.a, display, pc.after); err != nil {
			return w, err
		}
	}
	w.stored = store.Stored{Record: handlev.Record{Handle: display, Values: pc.vals}, Version: 1, Created: pc.now, Updated: pc.now}
	if err := tx.PutRecord(w.key, &w.stored); err != nil {
		return w, s.storeRefusal(err)
	}
	w.written = true
	if err := tx.IndexRecord(w.key, nil, &w.stored); err != nil {
		return w, err
	}
	return w, tx.AppendHandleAudit(w.key, tail)
}

// storeRefusal is the client's error (a refusal) for a record the store
// refused as not storable, which model.Model.CheckRecord should have refused
// first: the write fails alone (in a bulk, as one item) as invalid, and the
// operator's log gets a warning, since the checks missed a limit. Any other
// error is returned as it is and aborts the transaction.
func (s *Service) storeRefusal(err error) error {
	if !errors.Is(err, store.ErrNotStorable) {
		return err
	}
	s.log.Warn("the store refused a record the checks accepted", "err", err)
	return refusal{invalidField("(record)", strings.TrimPrefix(err.Error(), "store: "))}
}
