package registry

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// TestHandleAuditByCreatedTime: a record's history is the entries indexed
// under its created time plus those indexed before the record was there (a
// cluster snapshot applies the audit bucket before the records), merged in
// sequence order; creates of records whose keys are out of order land in
// the index in creation order (appends); a file with the legacy index keyed
// by record alone, or without the index, gets it rebuilt by EnsureIndexes,
// in transactions of a bounded size.
func TestHandleAuditByCreatedTime(t *testing.T) {
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.EnsureIndexes(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type rec struct{ display, key string }
	recOf := func(id string) rec {
		display := namer.Full("21.12345", "NS", id)
		key, _, err := namer.Key(display)
		if err != nil {
			t.Fatal(err)
		}
		return rec{display, key}
	}
	stored := func(rc rec, created time.Time) *store.Stored {
		return &store.Stored{Record: handlev.Record{Handle: rc.display, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/" + rc.display)}}}, Version: 1, Created: created, Updated: created}
	}
	tailOf := func(action string, rc rec) []byte {
		tail, err := AuditTail(&AuditEntry{Actor: "snaa:x key:y", Action: action, Target: rc.display})
		if err != nil {
			t.Fatal(err)
		}
		return tail
	}
	want := map[string][]string{} // key → actions, oldest first
	// Creates in an order unlike the keys', through the write path.
	ids := []string{"Z9", "A1", "M5", "B2"}
	for i, id := range ids {
		rc := recOf(id)
		err := r.Update(func(tx Tx) error {
			if err := tx.PutRecord(rc.key, stored(rc, t0.Add(time.Duration(i)*time.Second))); err != nil {
				return err
			}
			return tx.AppendHandleAudit(rc.key, tailOf(ActHandleCreate, rc))
		})
		if err != nil {
			t.Fatal(err)
		}
		want[rc.key] = append(want[rc.key], ActHandleCreate)
	}
	// The creates' index keys follow one another in creation order.
	var seqs []uint64
	if err := db.View(func(tx *store.Tx) error {
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		for k, _ := c.Seek([]byte{auditRecordTag, 0}); k != nil && k[0] == auditRecordTag; k, _ = c.Next() {
			seqs = append(seqs, binary.BigEndian.Uint64(k[len(k)-8:]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(seqs) || len(seqs) != len(ids) {
		t.Errorf("per-record index in key order holds sequence numbers %v, want %d in creation order", seqs, len(ids))
	}
	// An update of the first record is filed under its created time.
	first := recOf("Z9")
	if err := r.Update(func(tx Tx) error { return tx.AppendHandleAudit(first.key, tailOf(ActHandleUpdate, first)) }); err != nil {
		t.Fatal(err)
	}
	want[first.key] = append(want[first.key], ActHandleUpdate)

	// As a cluster snapshot applies them: the audit entry first, then the
	// record, then (a later revision) an update's entry.
	late := recOf("C3")
	raw, err := store.EncodeStored(late.key, stored(late, t0.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Update(func(tx Tx) error {
		if err := tx.ApplyAuditAt(1<<40, tailOf(ActHandleCreate, late)); err != nil {
			return err
		}
		return tx.ApplyPut(string(store.BucketRecords), []byte(late.key), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Update(func(tx Tx) error { return tx.ApplyAuditAt(1<<40+1, tailOf(ActHandleUpdate, late)) }); err != nil {
		t.Fatal(err)
	}
	want[late.key] = []string{ActHandleCreate, ActHandleUpdate}

	check := func(when string) {
		t.Helper()
		for key, actions := range want {
			var got []AuditEntry
			if err := r.View(func(tx Tx) error {
				var err error
				got, err = tx.HandleAudit(key)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			var gotActions []string
			for i, e := range got {
				if k, _, _ := namer.Key(e.Target); k != key {
					t.Errorf("%s: history of %s holds an entry of %s", when, key, e.Target)
				}
				if i > 0 && got[i-1].Seq >= e.Seq {
					t.Errorf("%s: history of %s not in sequence order: %d then %d", when, key, got[i-1].Seq, e.Seq)
				}
				gotActions = append(gotActions, e.Action)
			}
			if !slices.Equal(gotActions, actions) {
				t.Errorf("%s: history of %s = %v, want %v", when, key, gotActions, actions)
			}
		}
	}
	check("written")

	// The rebuilds below work in transactions of two keys or entries.
	defer func(n int) { auditReindexChunk = n }(auditReindexChunk)
	auditReindexChunk = 2

	// Rebuilt from scratch (the marker gone): the entry filed before its
	// record was there is not kept twice, none is lost.
	if err := db.Update(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketAudit).Delete([]byte{auditRecordTag})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.EnsureIndexes(); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")

	// A file of the legacy layout: the index keyed by record alone, its
	// marker, no marker of the current index.
	if err := db.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketAudit)
		var dels [][]byte
		c := b.Cursor()
		for k, _ := c.Seek([]byte{auditRecordTag}); k != nil && k[0] == auditRecordTag; k, _ = c.Next() {
			dels = append(dels, bytes.Clone(k))
			if len(k) > 1 {
				legacy := append([]byte{legacyRecordTag}, k[1+8:]...)
				if err := b.Put(legacy, nil); err != nil {
					return err
				}
			}
		}
		for _, k := range dels {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return b.Put([]byte{legacyRecordTag}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.EnsureIndexes(); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *store.Tx) error {
		if k, _ := tx.Bolt().Bucket(store.BucketAudit).Cursor().Seek([]byte{legacyRecordTag}); k != nil {
			t.Errorf("legacy index key %x left after EnsureIndexes", k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("rebuilt from the legacy layout")

}
