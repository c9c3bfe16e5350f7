package admin

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"go.etcd.io/bbolt"

	"pidnode/store"
)

// Audit actions.
const (
	ActApplicationSubmit  = "application.submit"
	ActApplicationApprove = "application.approve"
	ActApplicationReject  = "application.reject"
	ActSNAACreate         = "snaa.create"
	ActSNAAUpdate         = "snaa.update"
	ActKeyIssue           = "key.issue"
	ActKeyRevoke          = "key.revoke"
	ActHandleCreate       = "handle.create"
	ActHandleUpdate       = "handle.update"
)

// ActorOperator is the audit actor of operator-key requests.
const ActorOperator = "operator"

// audit appends an entry to the audit log inside the write transaction, so a
// write and its audit entry commit together or not at all.
func (s *Server) audit(tx *store.Tx, actor, action, target string, before, after any) error {
	b := tx.Bolt().Bucket(store.BucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	e := AuditEntry{Seq: seq, Time: s.now().UTC(), Actor: actor, Action: action, Target: target, Before: before, After: after}
	v, err := json.Marshal(&e)
	if err != nil {
		return err
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// AuditLog returns up to limit entries with a sequence number above after.
func (s *Server) AuditLog(after uint64, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.View(func(tx *store.Tx) error {
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, after+1)); k != nil && len(out) < limit; k, v = c.Next() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("admin: audit entry %x: %w", k, err)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	after, limit, p := pageParams(r)
	if p != nil {
		return p
	}
	var a uint64
	if after != "" {
		var err error
		if a, err = strconv.ParseUint(after, 10, 64); err != nil {
			return problem(http.StatusBadRequest, "after must be a sequence number")
		}
	}
	es, err := s.AuditLog(a, limit)
	if err != nil {
		return err
	}
	if es == nil {
		es = []AuditEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": es})
	return nil
}

// pageParams reads ?after= (or cursor=) and ?limit= (default 100, at most 1000).
func pageParams(r *http.Request) (after string, limit int, p *Problem) {
	q := r.URL.Query()
	after = q.Get("after")
	if after == "" {
		after = q.Get("cursor")
	}
	limit = 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return "", 0, problem(http.StatusBadRequest, "limit must be an integer from 1 to 1000")
		}
		limit = n
	}
	return after, limit, nil
}

// getJSON reads and decodes a JSON value of bucket b; false if absent.
func getJSON(b *bbolt.Bucket, key string, v any) (bool, error) {
	raw := b.Get([]byte(key))
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("admin: %s: %w", key, err)
	}
	return true, nil
}

// putJSON encodes v into bucket b under key.
func putJSON(b *bbolt.Bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), raw)
}
