package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pidnode/store"

	"go.etcd.io/bbolt"
)

// AuditQuery selects a page of the audit log, newest first: the entries
// below Before (all if 0) that pass every filter given, at most Limit.
type AuditQuery struct {
	// Before is the sequence number the page ends below; 0 starts at the
	// newest entry.
	Before uint64
	// Limit bounds the page's entries; it must be positive.
	Limit int
	// SNAA keeps the entries about one SNAA: made with its keys, about the
	// SNAA or its keys, or writing in its namespace.
	SNAA string
	// Action keeps one action ("handle.update"), or with a trailing "."
	// one family of them ("key.").
	Action string
	// From and To keep the entries at or after From and before To (zero:
	// no bound).
	From, To time.Time
	// Follow asks for the entries after After, oldest first, unfiltered
	// (AuditLog): a reader following the log. AuditPage ignores both.
	Follow bool
	After  uint64
}

// auditScanMax bounds the entries one page reads, so that a filter matching
// nothing in a long log answers quickly; the page then ends early with a
// cursor to read on from.
const auditScanMax = 200_000

// AuditPage returns one page of the audit log newest first, and the Before
// of the next page (0 when the log has no older entry to read).
func (r *Registry) AuditPage(q AuditQuery) (entries []AuditEntry, next uint64, err error) {
	entries = []AuditEntry{}
	err = r.View(func(tx Tx) error {
		ns, nsps := "", map[string]bool{}
		if q.SNAA != "" {
			sn, ok, err := tx.SNAA(q.SNAA)
			if err != nil {
				return err
			}
			if ok {
				ns = sn.Namespace
				for _, p := range []string{r.namer.Prefix(), r.namer.TestPrefix()} {
					if nsp, err := r.NamespaceKey(p, ns); err == nil && p != "" {
						nsps[nsp] = true
					}
				}
			}
		}
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		// Entries are the 8-byte keys below the index keys (auditRecordTag
		// and above): start below the first index key or below Before.
		start := []byte{auditRecordTag}
		if q.Before != 0 {
			start = binary.BigEndian.AppendUint64(nil, q.Before)
		}
		var k, v []byte
		if k, _ = c.Seek(start); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for scanned := 0; k != nil; k, v = c.Prev() {
			if len(k) != 8 || k[0] >= auditRecordTag {
				continue
			}
			seq := binary.BigEndian.Uint64(k)
			if len(entries) == q.Limit || scanned == auditScanMax {
				next = seq + 1
				return nil
			}
			scanned++
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("registry: audit entry %x: %w", k, err)
			}
			if !q.To.IsZero() && !e.Time.Before(q.To) {
				continue
			}
			if !q.From.IsZero() && e.Time.Before(q.From) {
				// The log is in time order: nothing older can match.
				return nil
			}
			if q.Action != "" && e.Action != q.Action && !(strings.HasSuffix(q.Action, ".") && strings.HasPrefix(e.Action, q.Action)) {
				continue
			}
			if q.SNAA != "" && !r.aboutSNAA(&e, q.SNAA, ns, nsps) {
				continue
			}
			entries = append(entries, e)
		}
		return nil
	})
	return entries, next, err
}

// aboutSNAA reports whether e is about SNAA id of namespace ns (key
// prefixes nsps): made with one of its keys, about the SNAA or one of its
// keys, the approval of its application, or a write in its namespace (an
// identifier's handle, or a webhook's "<prefix>/<ns>/webhooks/…").
func (r *Registry) aboutSNAA(e *AuditEntry, id, ns string, nsps map[string]bool) bool {
	if e.Actor == "snaa:"+id || strings.HasPrefix(e.Actor, "snaa:"+id+" ") {
		return true
	}
	if e.Target == id || strings.HasPrefix(e.Target, id+"/") {
		return true
	}
	if m, ok := e.After.(map[string]any); ok && m["snaa_id"] == id {
		return true // the approval of its application
	}
	if ns == "" {
		return false
	}
	if key, _, err := r.namer.Key(e.Target); err == nil {
		if nsp := r.namer.NamespaceOf([]byte(key)); nsp != nil && nsps[string(nsp)] {
			return true
		}
	}
	_, rest, ok := strings.Cut(e.Target, "/")
	if !ok {
		return false
	}
	seg, _, _ := strings.Cut(rest, "/")
	return strings.EqualFold(seg, ns)
}

// NamespaceAuditNewest returns up to limit audit entries of identifier
// writes in the namespace whose key prefix is nsp (as NamespaceAudit), with
// a sequence number below before (0: the newest on), newest first, and the
// before of the next page (0 if none).
func (r *Registry) NamespaceAuditNewest(nsp string, before uint64, limit int) (out []AuditEntry, next uint64, err error) {
	err = r.View(func(t Tx) (err error) {
		out, next, err = namespaceAuditNewest(t.bucket(store.BucketAudit), nsp, before, limit)
		return err
	})
	return out, next, err
}

func namespaceAuditNewest(b *bbolt.Bucket, nsp string, before uint64, limit int) ([]AuditEntry, uint64, error) {
	pre := auditNSPrefix([]byte(nsp))
	c := b.Cursor()
	var k []byte
	if before == 0 {
		// The range's end: the prefix with its last byte ('/') raised by one.
		end := append(append([]byte(nil), pre[:len(pre)-1]...), pre[len(pre)-1]+1)
		if k, _ = c.Seek(end); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
	} else {
		if k, _ = c.Seek(binary.BigEndian.AppendUint64(append([]byte{}, pre...), before)); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
	}
	out := []AuditEntry{}
	for ; k != nil && len(k) == len(pre)+8 && bytes.HasPrefix(k, pre); k, _ = c.Prev() {
		seq := k[len(pre):]
		if len(out) == limit {
			return out, binary.BigEndian.Uint64(seq) + 1, nil
		}
		v := b.Get(seq)
		if v == nil {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, 0, fmt.Errorf("registry: audit entry %x: %w", seq, err)
		}
		out = append(out, e)
	}
	return out, 0, nil
}
