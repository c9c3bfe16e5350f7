package registry

import (
	"encoding/json"
	"testing"
	"time"
)

// TestLinkcheckEventApplied: a link check event applied from another node
// reaches the namespace's feed. (linkcheck's TestLinkResults: the results
// and their indexes.)
func TestLinkcheckEventApplied(t *testing.T) {
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	nsA, _ := r.NamespaceKey("21.12345", "AB")
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// Applied from another node, a link check event is indexed for the feed.
	tail, err := AuditTail(&AuditEntry{Actor: ActorLinkcheck, Action: ActLinkBroken, Target: namer.Full("21.12345", "AB", "X1"),
		After: json.RawMessage(`{"url":"https://a/1","linkcheck":{"state":"broken"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := AuditWithoutSeq(appendAudit(nil, 1<<20, now, tail))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Update(func(tx Tx) error { return tx.ApplyAuditAt(1<<20, entry) }); err != nil {
		t.Fatal(err)
	}
	r.View(func(tx Tx) error {
		es, err := tx.NamespaceAudit(nsA, 0, 10)
		if err != nil || len(es) != 1 || es[0].Action != ActLinkBroken {
			t.Errorf("feed after applying a link check event: %+v, %v", es, err)
		}
		return nil
	})
}
