package linkcheck

import (
	"testing"
	"time"

	"pidnode/internal/storetest"
	"pidnode/registry"
)

// TestLinkResults: results and their indexes in one transaction: a
// namespace's listing holds its own URLs that are not ok and never those of
// a namespace whose name extends it; the broken counts and due entries
// follow every change; keysBetween finds records strictly between two
// keys. (registry's TestLinkcheckEventApplied: a link check event applied
// from another node reaches the namespace's feed.)
func TestLinkResults(t *testing.T) {
	db, namer := storetest.Open(t)
	r, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	nsA, _ := r.NamespaceKey("21.12345", "AB")
	nsB, _ := r.NamespaceKey("21.12345", "ABC")
	key := func(ns, id string) string {
		k, _, err := namer.Key(namer.Full("21.12345", ns, id))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	due := now.Add(time.Hour)
	put := func(k string, old *registry.LinkResult, res registry.LinkResult) {
		t.Helper()
		if err := r.Update(func(tx registry.Tx) error { return PutResult(tx.Tx, namer, k, old, &res) }); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2, b1 := key("AB", "X1"), key("AB", "X2"), key("ABC", "Y1")
	put(a1, nil, registry.LinkResult{URL: "https://a/1", State: registry.LinkBroken})
	put(a2, nil, registry.LinkResult{URL: "https://a/2", State: registry.LinkFailing, Due: &due})
	put(a2, nil, registry.LinkResult{URL: "https://a/3", State: registry.LinkOK})
	put(b1, nil, registry.LinkResult{URL: "https://b/1", State: registry.LinkBroken})
	r.View(func(tx registry.Tx) error {
		rs, next, err := namespaceResults(tx.Tx, nsA, nil, "", 10)
		if err != nil || next != "" || len(rs) != 2 || rs[0].URL != "https://a/1" || rs[1].URL != "https://a/2" {
			t.Errorf("NamespaceLinks(AB) = %+v, %q, %v", rs, next, err)
		}
		rs, next, _ = namespaceResults(tx.Tx, nsA, []string{registry.LinkBroken}, "", 10)
		if len(rs) != 1 || next != "" {
			t.Errorf("NamespaceLinks(AB, broken) = %+v, %q", rs, next)
		}
		rs, next, _ = namespaceResults(tx.Tx, nsA, nil, "", 1)
		if len(rs) != 1 || next == "" {
			t.Errorf("NamespaceLinks(AB, limit 1) = %+v, %q", rs, next)
		} else if rs2, next2, _ := namespaceResults(tx.Tx, nsA, nil, next, 1); len(rs2) != 1 || rs2[0].URL != "https://a/2" || next2 != "" {
			t.Errorf("second page: %+v, %q", rs2, next2)
		}
		if b := brokenCounts(tx.Tx); b[nsA] != 1 || b[nsB] != 1 || len(b) != 2 {
			t.Errorf("BrokenLinks = %v", b)
		}
		if d := dueLinks(tx.Tx, now, 10); len(d) != 0 {
			t.Errorf("due before their time: %v", d)
		}
		if d := dueLinks(tx.Tx, due, 10); len(d) != 1 || d[0].Key != a2 || d[0].URL != "https://a/2" {
			t.Errorf("DueLinks = %+v", d)
		}
		if ks := keysBetween(tx.Tx, a1, b1, 10); len(ks) != 1 || ks[0] != a2 {
			t.Errorf("LinkKeysBetween(a1, b1) = %q", ks)
		}
		if ks := keysBetween(tx.Tx, "", "", 10); len(ks) != 3 {
			t.Errorf("LinkKeysBetween(all) = %q", ks)
		}
		return nil
	})
	// a1 recovers, a2 is dropped: the indexes go with them.
	old1 := registry.LinkResult{URL: "https://a/1", State: registry.LinkBroken}
	put(a1, &old1, registry.LinkResult{URL: "https://a/1", State: registry.LinkRecovering})
	old2 := registry.LinkResult{URL: "https://a/2", State: registry.LinkFailing, Due: &due}
	if err := r.Update(func(tx registry.Tx) error { return deleteResult(tx.Tx, namer, a2, &old2) }); err != nil {
		t.Fatal(err)
	}
	r.View(func(tx registry.Tx) error {
		rs, _, _ := namespaceResults(tx.Tx, nsA, nil, "", 10)
		if len(rs) != 1 || rs[0].State != registry.LinkRecovering {
			t.Errorf("after the changes: %+v", rs)
		}
		if b := brokenCounts(tx.Tx); b[nsA] != 0 || b[nsB] != 1 {
			t.Errorf("BrokenLinks after recovery = %v", b)
		}
		if d := dueLinks(tx.Tx, due.Add(time.Hour), 10); len(d) != 0 {
			t.Errorf("due entries of a dropped result: %+v", d)
		}
		return nil
	})
}
