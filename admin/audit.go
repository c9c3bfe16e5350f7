package admin

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

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
	_, err := s.auditEntry(tx, AuditEntry{Actor: actor, Action: action, Target: target, Before: before, After: after})
	return err
}

func (s *Server) auditEntry(tx *store.Tx, e AuditEntry) (uint64, error) {
	tail, err := auditTail(&e)
	if err != nil {
		return 0, err
	}
	return s.putAudit(tx, tail)
}

// putAudit appends the entry whose JSON after "seq" and "time" is tail (see
// auditTail) and returns its sequence number. Only the sequence number and the
// time are encoded here: the rest is encoded before the write transaction, so
// that a group commit does not wait for JSON encoding.
func (s *Server) putAudit(tx *store.Tx, tail []byte) (uint64, error) {
	b := tx.Bolt().Bucket(store.BucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	v := appendAudit(make([]byte, 0, len(tail)+64), seq, s.now().UTC(), tail)
	return seq, b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// auditTail encodes e without its Seq and Time: the JSON object of the
// remaining members, in AuditEntry's order. appendAudit completes it.
func auditTail(e *AuditEntry) ([]byte, error) {
	t := struct {
		Actor   string `json:"actor"`
		KeyName string `json:"key_name,omitempty"`
		Action  string `json:"action"`
		Target  string `json:"target"`
		Before  any    `json:"before,omitempty"`
		After   any    `json:"after,omitempty"`
	}{e.Actor, e.KeyName, e.Action, e.Target, e.Before, e.After}
	return json.Marshal(&t)
}

// auditTailAfter is auditTail of e with After set to after, which must be the
// output of json.Marshal (compact, valid, HTML-escaped): it is appended as it
// is, where auditTail would have encoding/json check and compact a
// json.RawMessage again (a create's hot path). e.After must be nil.
func auditTailAfter(e *AuditEntry, after []byte) ([]byte, error) {
	tail, err := auditTail(e)
	if err != nil || len(after) == 0 {
		return tail, err
	}
	out := make([]byte, 0, len(tail)+len(after)+10)
	out = append(out, tail[:len(tail)-1]...) // without the closing '}'
	out = append(out, `,"after":`...)
	out = append(out, after...)
	return append(out, '}'), nil
}

// appendAudit appends the JSON of an audit entry with seq and t whose other
// members are tail (from auditTail): the bytes json.Marshal gives for the
// whole AuditEntry.
func appendAudit(dst []byte, seq uint64, t time.Time, tail []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = t.AppendFormat(dst, time.RFC3339Nano) // what time.Time.MarshalJSON writes
	dst = append(dst, '"', ',')
	return append(dst, tail[1:]...)
}

// Audit entries of identifier writes are also indexed by record: the key
//
//	0xFF <record storage key> 0x00 <seq uint64 big-endian>
//
// (empty value) in BucketAudit, so GET …/{id}/history reads one key range
// instead of the whole log. Sequence keys are 8 bytes and never start with
// 0xFF, so the two kinds never mix; AuditLog stops at the first index key.
const auditIndexTag = 0xFF

func auditIndexPrefix(key string) []byte {
	return append(append([]byte{auditIndexTag}, key...), 0)
}

// auditHandle audits an identifier write by an SNAA key and indexes the entry
// under the record's storage key.
func (s *Server) auditHandle(tx *store.Tx, p *principal, action, key, display string, before, after any) error {
	tail, err := auditTail(&AuditEntry{Actor: p.actor(), KeyName: p.key.Name, Action: action, Target: display, Before: before, After: after})
	if err != nil {
		return err
	}
	return s.putHandleAudit(tx, key, tail)
}

// putHandleAudit appends an identifier write's audit entry (tail from
// auditTail) and indexes it under the record's storage key.
func (s *Server) putHandleAudit(tx *store.Tx, key string, tail []byte) error {
	seq, err := s.putAudit(tx, tail)
	if err != nil {
		return err
	}
	return tx.Bolt().Bucket(store.BucketAudit).Put(binary.BigEndian.AppendUint64(auditIndexPrefix(key), seq), nil)
}

// handleAudit returns the audit entries of the record stored under key, oldest first.
func (s *Server) handleAudit(tx *store.Tx, key string) ([]AuditEntry, error) {
	b := tx.Bolt().Bucket(store.BucketAudit)
	pre := auditIndexPrefix(key)
	out := []AuditEntry{}
	c := b.Cursor()
	for k, _ := c.Seek(pre); k != nil && len(k) == len(pre)+8 && string(k[:len(pre)]) == string(pre); k, _ = c.Next() {
		v := b.Get(k[len(pre):])
		if v == nil {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("admin: audit entry %x: %w", k[len(pre):], err)
		}
		out = append(out, e)
	}
	return out, nil
}

// reindexAudit rebuilds the per-record audit index from the log; New runs it
// once for a database written before the index existed (marker absent).
func (s *Server) reindexAudit() error {
	marker := []byte{auditIndexTag}
	return s.db.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketAudit)
		if b.Get(marker) != nil {
			return nil
		}
		var puts [][]byte
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(k) == 8; k, v = c.Next() {
			var e AuditEntry
			if json.Unmarshal(v, &e) != nil || (e.Action != ActHandleCreate && e.Action != ActHandleUpdate) {
				continue
			}
			key, _, err := s.namer.Key(e.Target)
			if err != nil {
				continue
			}
			puts = append(puts, binary.BigEndian.AppendUint64(auditIndexPrefix(key), e.Seq))
		}
		for _, k := range puts {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		return b.Put(marker, nil)
	})
}

// AuditLog returns up to limit entries with a sequence number above after.
func (s *Server) AuditLog(after uint64, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.View(func(tx *store.Tx) error {
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, after+1)); k != nil && len(k) == 8 && len(out) < limit; k, v = c.Next() {
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
