package registry

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/internal/stdjson"
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

// Audit appends an entry to the audit log inside the write transaction, so a
// write and its audit entry commit together or not at all. An actor that
// names a person (PersonActor) gets the person's e-mail address as the
// entry's Person, read in the same transaction, so that the log names
// whoever it was even after the person is removed.
func (t Tx) Audit(actor, action, target string, before, after any) error {
	e := &AuditEntry{Actor: actor, Action: action, Target: target, Before: before, After: after}
	if _, id, ok := strings.Cut(actor, " person:"); ok {
		p, found, err := t.People().Person(id)
		if err != nil {
			return err
		}
		if found {
			e.Person = p.Email
		}
	}
	tail, err := AuditTail(e)
	if err != nil {
		return err
	}
	_, err = t.AppendAudit(tail)
	return err
}

// AppendAudit appends the entry whose JSON after "seq" and "time" is tail (see
// AuditTail) and returns its sequence number. Only the sequence number and the
// time are encoded here: the rest is encoded before the write transaction, so
// that a group commit does not wait for JSON encoding.
func (t Tx) AppendAudit(tail []byte) (uint64, error) {
	seq, err := t.NextSequence(store.BucketAudit)
	if err != nil {
		return 0, err
	}
	v := appendAudit(make([]byte, 0, len(tail)+64), seq, t.r.now().UTC(), tail)
	return seq, t.Put(store.BucketAudit, binary.BigEndian.AppendUint64(nil, seq), v)
}

// AuditTail encodes e without its Seq and Time: the JSON object of the
// remaining members, in AuditEntry's order. appendAudit completes it.
func AuditTail(e *AuditEntry) ([]byte, error) {
	if e.Before == nil && e.After == nil {
		return append(appendTailHead(make([]byte, 0, 128), e), '}'), nil
	}
	t := struct {
		Actor   string `json:"actor"`
		KeyName string `json:"key_name,omitempty"`
		Person  string `json:"person,omitempty"`
		Action  string `json:"action"`
		Target  string `json:"target"`
		Before  any    `json:"before,omitempty"`
		After   any    `json:"after,omitempty"`
	}{e.Actor, e.KeyName, e.Person, e.Action, e.Target, e.Before, e.After}
	return json.Marshal(&t)
}

// appendTailHead appends AuditTail's JSON of e's string members, as
// json.Marshal writes them, without the closing '}'.
func appendTailHead(dst []byte, e *AuditEntry) []byte {
	dst = append(dst, `{"actor":`...)
	dst = stdjson.AppendString(dst, e.Actor, true)
	if e.KeyName != "" {
		dst = append(dst, `,"key_name":`...)
		dst = stdjson.AppendString(dst, e.KeyName, true)
	}
	if e.Person != "" {
		dst = append(dst, `,"person":`...)
		dst = stdjson.AppendString(dst, e.Person, true)
	}
	dst = append(dst, `,"action":`...)
	dst = stdjson.AppendString(dst, e.Action, true)
	dst = append(dst, `,"target":`...)
	return stdjson.AppendString(dst, e.Target, true)
}

// AuditTailAfter is AuditTail of e with After set to after, which must be the
// output of json.Marshal (compact, valid, HTML-escaped): it is appended as it
// is, where AuditTail would have encoding/json check and compact a
// json.RawMessage again (a create's hot path). e.After must be nil.
func AuditTailAfter(e *AuditEntry, after []byte) ([]byte, error) {
	if e.Before != nil || e.After != nil {
		tail, err := AuditTail(e)
		if err != nil || len(after) == 0 {
			return tail, err
		}
		out := make([]byte, 0, len(tail)+len(after)+10)
		out = append(out, tail[:len(tail)-1]...) // without the closing '}'
		out = append(out, `,"after":`...)
		out = append(out, after...)
		return append(out, '}'), nil
	}
	out := appendTailHead(make([]byte, 0, 128+len(after)), e)
	if len(after) > 0 {
		out = append(out, `,"after":`...)
		out = append(out, after...)
	}
	return append(out, '}'), nil
}

// appendAudit appends the JSON of an audit entry with seq and t whose other
// members are tail (from AuditTail): the bytes json.Marshal gives for the
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
//	0xFD <created uint64 big-endian> <record storage key> 0x00 <seq uint64 big-endian>
//
// (empty value) in BucketAudit, where created is the record's created time
// as the record holds it when the entry is indexed (store.Tx.RecordCreated),
// or 0 if no record is stored under the key then: a cluster snapshot applies
// the audit bucket before the records. GET …/{id}/history reads the range of
// the record's created time and the range of 0 (HandleAudit). The created
// time leads because record keys are random: a create's entry is then an
// append at the index's end, not an insert at a random page. This relies on
// a record keeping its created time for as long as it exists (every writer,
// Import and a cluster's copy keep it).
//
// Sequence keys are 8 bytes and never start with a tag byte (auditRecordTag
// and above), so the kinds never mix; AuditLog stops at the first index key.
// The key {0xFD} alone says the index is complete (EnsureIndexes). Files
// written before this layout hold the index keyed by record alone under
// legacyRecordTag, which reindexAudit removes.
const (
	auditRecordTag  = 0xFD
	legacyRecordTag = 0xFF
)

// auditRecordPrefix is the index range of the record key whose entries were
// indexed with the created time created.
func auditRecordPrefix(created int64, key string) []byte {
	pre := make([]byte, 0, 1+8+len(key)+1+8)
	pre = append(pre, auditRecordTag)
	pre = binary.BigEndian.AppendUint64(pre, uint64(created))
	return append(append(pre, key...), 0)
}

// AppendHandleAudit appends an identifier write's audit entry (tail from
// AuditTail) and indexes it under the record's storage key. The record is
// read from the transaction, so write it first.
func (t Tx) AppendHandleAudit(key string, tail []byte) error {
	seq, err := t.AppendAudit(tail)
	if err != nil {
		return err
	}
	return t.indexHandleAudit(key, seq)
}

// indexHandleAudit files the audit entry seq of an identifier write under
// the record's storage key and under its namespace, and wakes the
// namespace's feed readers at commit. The index keys go to the bucket
// directly, not through store.Tx.Put: they are derived, so a cluster
// rehearsal does not send them to etcd (each node derives its own in
// applyAudit).
func (t Tx) indexHandleAudit(key string, seq uint64) error {
	created := t.RecordCreated(key)
	if err := t.PutDerived(store.BucketAudit, binary.BigEndian.AppendUint64(auditRecordPrefix(created, key), seq), []byte{}); err != nil {
		return err
	}
	nsp := t.r.namer.NamespaceOf([]byte(key))
	if nsp == nil {
		return nil
	}
	t.Signal(auditTopic(nsp))
	return t.PutDerived(store.BucketAudit, binary.BigEndian.AppendUint64(auditNSPrefix(nsp), seq), []byte{})
}

// The audit entries of identifier writes are also indexed by namespace, for
// the change feed (GET …/{ns}/events, docs/product.md §4.3): the key
//
//	0xFE <namespace key prefix> <seq uint64 big-endian>
//
// (empty value) in BucketAudit, where the namespace key prefix is the one of
// the URL index (Namer.NamespaceOf: "21.12345/SVC/NS/", ending in '/', so one
// namespace's range never holds another's). A namespace's feed is one key
// range in sequence order. Like the per-record index, only the entries of
// feedAction are indexed: operator actions never reach a feed.
// The key {0xFE} alone says the index is complete (EnsureIndexes).
const auditNSTag = 0xFE

// feedAction reports whether audit entries of action are about one
// identifier and indexed by record and namespace: identifier writes and the
// link checker's state changes (docs/product.md §4.3, §4.4).
func feedAction(action string) bool {
	switch action {
	case ActHandleCreate, ActHandleUpdate, ActLinkBroken, ActLinkRecovered:
		return true
	}
	return false
}

func auditNSPrefix(nsp []byte) []byte {
	return append([]byte{auditNSTag}, nsp...)
}

// auditTopic is the store.DB.Wait topic of a namespace's audit entries.
func auditTopic(nsp []byte) string { return "audit " + string(nsp) }

// NamespaceAudit returns up to limit audit entries of identifier writes in
// the namespace whose key prefix is nsp (Registry.NamespaceKey), with a
// sequence number above after, in sequence order. It reads the namespace
// index's range only.
func (t Tx) NamespaceAudit(nsp string, after uint64, limit int) ([]AuditEntry, error) {
	pre := auditNSPrefix([]byte(nsp))
	if after == math.MaxUint64 {
		return []AuditEntry{}, nil
	}
	return indexedAudit(t.bucket(store.BucketAudit), pre, binary.BigEndian.AppendUint64(pre, after+1), limit)
}

// WaitNamespaceAudit returns a channel closed after the next commit that
// adds an entry to the namespace nsp's audit (or replaces the database).
// Call it before NamespaceAudit, so that an entry committed between the two
// is not missed.
func (r *Registry) WaitNamespaceAudit(nsp string) <-chan struct{} {
	return r.db.Wait(auditTopic([]byte(nsp)))
}

// HandleAudit returns the audit entries of the record stored under key,
// oldest first: those indexed under its created time and those indexed
// before the record was there (created 0).
func (t Tx) HandleAudit(key string) ([]AuditEntry, error) {
	b := t.bucket(store.BucketAudit)
	created := t.RecordCreated(key)
	pre := auditRecordPrefix(created, key)
	out, err := indexedAudit(b, pre, pre, -1)
	if err != nil || created == 0 {
		return out, err
	}
	pre = auditRecordPrefix(0, key)
	early, err := indexedAudit(b, pre, pre, -1)
	if err != nil || len(early) == 0 {
		return out, err
	}
	out = append(early, out...)
	slices.SortFunc(out, func(a, b AuditEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// indexedAudit returns up to limit (negative: every) audit entries of the
// index range pre (index keys pre + 8-byte sequence number), from the key
// start on, in sequence order.
func indexedAudit(b *bbolt.Bucket, pre, start []byte, limit int) ([]AuditEntry, error) {
	out := []AuditEntry{}
	c := b.Cursor()
	for k, _ := c.Seek(start); k != nil && len(out) != limit && len(k) == len(pre)+8 && bytes.HasPrefix(k, pre); k, _ = c.Next() {
		v := b.Get(k[len(pre):])
		if v == nil {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("registry: audit entry %x: %w", k[len(pre):], err)
		}
		out = append(out, e)
	}
	return out, nil
}

// auditReindexChunk is how many keys one transaction of reindexAudit
// deletes, or how many log entries it indexes: it bounds the memory a
// rebuild over a long log holds. A variable for the tests.
var auditReindexChunk = 20000

// reindexAudit rebuilds the per-record and the per-namespace audit index
// from the log; EnsureIndexes runs it once for a database written before an
// index existed (its marker absent), before the node serves. Rebuilding the
// per-record index first removes what it held and the legacy one. It works
// in transactions of auditReindexChunk and sets the markers in the last, so
// an interrupted rebuild is redone at the next start.
func (r *Registry) reindexAudit() error {
	var byRecord, byNS bool
	if err := r.db.View(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketAudit)
		byRecord = b.Get([]byte{auditRecordTag}) == nil
		byNS = b.Get([]byte{auditNSTag}) == nil
		return nil
	}); err != nil || (!byRecord && !byNS) {
		return err
	}
	if byRecord { // from scratch: an entry's created time may have been learnt since
		for _, tag := range []byte{auditRecordTag, legacyRecordTag} {
			if err := r.clearAuditIndex(tag); err != nil {
				return err
			}
		}
	}
	for next, more := uint64(0), true; more; {
		err := r.db.Update(func(tx *store.Tx) error {
			b := tx.Bolt().Bucket(store.BucketAudit)
			var puts [][]byte
			c := b.Cursor()
			n := 0
			k, v := c.Seek(binary.BigEndian.AppendUint64(nil, next))
			for ; len(k) == 8 && n < auditReindexChunk; k, v = c.Next() {
				n++
				var e AuditEntry
				if json.Unmarshal(v, &e) != nil || !feedAction(e.Action) {
					continue
				}
				key, _, err := r.namer.Key(e.Target)
				if err != nil {
					continue
				}
				if byRecord {
					created := tx.RecordCreated(key)
					puts = append(puts, binary.BigEndian.AppendUint64(auditRecordPrefix(created, key), e.Seq))
				}
				if nsp := r.namer.NamespaceOf([]byte(key)); byNS && nsp != nil {
					puts = append(puts, binary.BigEndian.AppendUint64(auditNSPrefix(nsp), e.Seq))
				}
			}
			if more = len(k) == 8; more {
				next = binary.BigEndian.Uint64(k)
			}
			for _, k := range puts {
				if err := b.Put(k, nil); err != nil {
					return err
				}
			}
			if more {
				return nil
			}
			if err := b.Put([]byte{auditRecordTag}, nil); err != nil {
				return err
			}
			return b.Put([]byte{auditNSTag}, nil)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// clearAuditIndex deletes every key of BucketAudit that starts with tag,
// in transactions of auditReindexChunk keys.
func (r *Registry) clearAuditIndex(tag byte) error {
	for more := true; more; {
		err := r.db.Update(func(tx *store.Tx) error {
			b := tx.Bolt().Bucket(store.BucketAudit)
			var dels [][]byte
			c := b.Cursor()
			for k, _ := c.Seek([]byte{tag}); k != nil && k[0] == tag && len(dels) < auditReindexChunk; k, _ = c.Next() {
				dels = append(dels, bytes.Clone(k))
			}
			more = len(dels) == auditReindexChunk
			for _, k := range dels {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// AuditLog returns up to limit entries with a sequence number above after.
func (r *Registry) AuditLog(after uint64, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := r.db.View(func(tx *store.Tx) error {
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, after+1)); len(k) == 8 && len(out) < limit; k, v = c.Next() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("registry: audit entry %x: %w", k, err)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
