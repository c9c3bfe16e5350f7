package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"pidnode/internal/jsontext"
	"pidnode/store"
)

// Replicated are the buckets whose contents a cluster replicates through
// etcd (docs/product.md §10), in the order a snapshot loads them. The others
// are derived (the URL and search indexes and the audit indexes, rebuilt by ApplyPut in the
// transaction that applies their data) or each node's own (statistics, key
// last-used times, the store's meta).
var Replicated = [][]byte{
	store.BucketSNAAs, store.BucketApplications, store.BucketKeys,
	store.BucketIdempotency, store.BucketSessions, store.BucketAudit, store.BucketRecords,
	store.BucketWebhooks,
	store.BucketLinkcheck, store.BucketPeople,
}

// IsReplicated reports whether bucket is one of Replicated.
func IsReplicated(bucket string) bool {
	for _, b := range Replicated {
		if string(b) == bucket {
			return true
		}
	}
	return false
}

// ApplyPut writes value (nil: delete) under key in a replicated bucket, as
// another node decided it, and keeps the derived data of this database in
// step in the same transaction: a record moves its URL and search index entries, an audit
// entry raises the audit log's sequence past its own, so that this node's
// next entry follows it, and one of an identifier write is indexed by record
// and by namespace (and wakes that namespace's feed readers at commit).
// value must not be modified until the transaction ends.
func (t Tx) ApplyPut(bucket string, key, value []byte) error {
	switch bucket {
	case string(store.BucketRecords):
		return t.applyRecord(string(key), value)
	case string(store.BucketAudit):
		return t.applyAudit(key, value)
	case string(store.BucketWebhooks):
		return t.applyWebhook(key, value)
	}
	if !IsReplicated(bucket) {
		return fmt.Errorf("registry: bucket %q is not replicated", bucket)
	}
	if value == nil {
		return t.bucket([]byte(bucket)).Delete(key)
	}
	return t.Put([]byte(bucket), key, value)
}

// applyRecord writes or deletes a record and moves its record index
// entries (IndexRecord), whatever its namespace (see urlindex.go for why).
func (t Tx) applyRecord(key string, raw []byte) error {
	old, ok, err := t.Record(key)
	if err != nil {
		return err
	}
	var before, after *store.Stored
	if ok {
		before = &old
	}
	if raw == nil {
		if err := t.DeleteRecord(key); err != nil {
			return err
		}
	} else {
		st, err := store.DecodeStored(raw)
		if err != nil {
			return fmt.Errorf("registry: record %q: %w", key, err)
		}
		after = &st
		if err := t.PutRecordRaw(key, raw); err != nil {
			return err
		}
	}
	return t.IndexRecord(key, before, after)
}

// urlOf is the URL the URL index files st under.
func (r *Registry) urlOf(st *store.Stored) string {
	for i := range st.Record.Values {
		if v := &st.Record.Values[i]; v.Index == r.urlIndex {
			return string(v.Data)
		}
	}
	return ""
}

func (t Tx) applyAudit(key, raw []byte) error {
	if len(key) != 8 {
		return fmt.Errorf("registry: audit key %x is not a sequence number", key)
	}
	b := t.bucket(store.BucketAudit)
	if raw == nil {
		return b.Delete(key)
	}
	e, err := auditHead(raw)
	if err != nil {
		return fmt.Errorf("registry: audit entry %x: %w", key, err)
	}
	seq := binary.BigEndian.Uint64(key)
	if e.Seq != seq {
		return fmt.Errorf("registry: audit entry %x holds sequence number %d", key, e.Seq)
	}
	if err := t.Put(store.BucketAudit, key, raw); err != nil {
		return err
	}
	if seq > b.Sequence() {
		if err := b.SetSequence(seq); err != nil {
			return err
		}
	}
	if !feedAction(e.Action) {
		return nil
	}
	rk, _, err := t.r.namer.Key(e.Target)
	if err != nil {
		return nil // not a handle this node can index; the entry itself is kept
	}
	return t.indexHandleAudit(rk, seq)
}

// auditHead decodes an audit entry's members up to its target: the
// sequence number, action and target that applying it needs. The entries'
// member order (AuditEntry, appendAudit) puts them before the values
// before and after, which are checked to be JSON but not decoded. An entry
// that is not a JSON object with those members is an error.
func auditHead(raw []byte) (AuditEntry, error) {
	if !json.Valid(raw) {
		return AuditEntry{}, errors.New("not valid JSON")
	}
	if e, ok := auditHeadScanned(raw); ok {
		return e, nil
	}
	return auditHeadDecoded(raw)
}

// auditHeadScanned is auditHead for valid JSON through the one tokenizer
// (internal/jsontext) in its strict mode: it reports false, for
// auditHeadDecoded to read, where a member auditHead needs is repeated or
// its value is not a plain integer or a string the strict mode decodes;
// where it reports true, both give the same entry.
func auditHeadScanned(raw []byte) (AuditEntry, bool) {
	var e AuditEntry
	s := jsontext.Scanner{B: raw}
	var seq, action, target bool
	_, ok := s.Object(s.Space(0), func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "seq":
			end, n, isInt, ok := s.Number(j)
			if !ok || !isInt || raw[j] == '-' || seq {
				return 0, false
			}
			e.Seq, seq = uint64(n), true
			return end, true
		case "action", "target":
			v, end, ok := s.String(j)
			dst, seen := &e.Action, &action
			if string(key) == "target" {
				dst, seen = &e.Target, &target
			}
			if !ok || *seen {
				return 0, false
			}
			*dst, *seen = string(v), true
			return end, true
		}
		return s.Skip(j, 1)
	})
	return e, ok && seq && action && target
}

// auditHeadDecoded is auditHead for valid JSON of any layout.
func auditHeadDecoded(raw []byte) (AuditEntry, error) {
	var e AuditEntry
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return e, errors.New("not a JSON object")
	}
	var have int
	for d.More() && have < 3 {
		t, err := d.Token()
		if err != nil {
			return e, err
		}
		name, _ := t.(string)
		switch name {
		case "seq":
			err = d.Decode(&e.Seq)
			have++
		case "action":
			err = d.Decode(&e.Action)
			have++
		case "target":
			err = d.Decode(&e.Target)
			have++
		default:
			var skip json.RawMessage
			err = d.Decode(&skip)
		}
		if err != nil {
			return e, fmt.Errorf("member %q: %w", name, err)
		}
	}
	if have < 3 {
		return e, errors.New("seq, action or target missing")
	}
	return e, nil
}

// ApplyAuditAt applies an audit entry that another node wrote without its
// sequence number (AuditWithoutSeq), numbered seq: the entry as this node's
// log holds it is raw with "seq" put back in front. A cluster derives seq
// from where etcd committed the entry, so that every node numbers it alike.
func (t Tx) ApplyAuditAt(seq uint64, raw []byte) error {
	if len(raw) < 2 || raw[0] != '{' {
		return fmt.Errorf("registry: audit entry %d is not a JSON object", seq)
	}
	v := make([]byte, 0, len(raw)+32)
	v = append(v, `{"seq":`...)
	v = strconv.AppendUint(v, seq, 10)
	if raw[1] != '}' {
		v = append(v, ',')
	}
	v = append(v, raw[1:]...)
	return t.applyAudit(binary.BigEndian.AppendUint64(nil, seq), v)
}

// AuditWithoutSeq is an audit entry's JSON (as the log holds it) without its
// "seq" member, for a cluster to write to etcd; ApplyAuditAt puts a number
// back. It fails on bytes that do not start like an entry of this log.
func AuditWithoutSeq(v []byte) ([]byte, error) {
	const head = `{"seq":`
	if !bytes.HasPrefix(v, []byte(head)) {
		return nil, errors.New("registry: not an audit entry: no leading seq")
	}
	i := len(head)
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == len(head) || i == len(v) || (v[i] != ',' && v[i] != '}') {
		return nil, errors.New("registry: not an audit entry: malformed seq")
	}
	out := make([]byte, 0, len(v)-i+1)
	out = append(out, '{')
	if v[i] == ',' {
		i++
	}
	return append(out, v[i:]...), nil
}

// Rehearse runs fn in a write transaction that is rolled back and returns the
// writes it made to replicated data, with the applied etcd revision of the
// state fn saw (store.DB.Rehearse). A cluster node sends those writes to etcd
// in place of committing them.
func (r *Registry) Rehearse(fn func(tx Tx) error) ([]store.Write, int64, error) {
	return r.db.Rehearse(func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// RehearseShard is Rehearse with the applied revision of etcd shard name
// (store.DB.RehearseShard).
func (r *Registry) RehearseShard(name string, fn func(tx Tx) error) ([]store.Write, int64, error) {
	return r.db.RehearseShard(name, func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// On returns a registry of db with r's configuration: a cluster node builds
// a fresh copy of its database through it.
func (r *Registry) On(db *store.DB) (*Registry, error) {
	return New(Config{DB: db, Namer: r.namer, URLIndex: r.urlIndex, Now: r.now})
}

// MarkIndexesBuilt records that the URL and search indexes and the per-record and
// per-namespace audit indexes of a database filled by ApplyPut are complete
// (ApplyPut maintains them), so that EnsureIndexes does not rebuild them.
func (r *Registry) MarkIndexesBuilt() error {
	return r.db.Update(func(tx *store.Tx) error {
		for _, idx := range [][]byte{store.BucketURLIndex, store.BucketSearch} {
			if err := tx.Bolt().Bucket(idx).Put(urlIndexMarker, markerValue(idx)); err != nil {
				return err
			}
		}
		b := tx.Bolt().Bucket(store.BucketAudit)
		if err := b.Put([]byte{auditRecordTag}, nil); err != nil {
			return err
		}
		return b.Put([]byte{auditNSTag}, nil)
	})
}
