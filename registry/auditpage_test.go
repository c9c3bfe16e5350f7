package registry

import (
	"slices"
	"testing"
)

// TestNamespaceAuditNewest: a namespace's feed read newest first, a page
// at a time, holds its own entries only (not those of a namespace its name
// is a prefix of, nor operator actions) and resumes exactly below the
// page before.
func TestNamespaceAuditNewest(t *testing.T) {
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	nsA, _ := r.NamespaceKey("21.12345", "AB")
	var wantA []string
	for i, ns := range []string{"AB", "ABC", "AB", "AB", "ABC", "AB", "AB"} {
		display := namer.Full("21.12345", ns, string(rune('A'+i))+"1")
		key, _, err := namer.Key(display)
		if err != nil {
			t.Fatal(err)
		}
		tail, err := AuditTail(&AuditEntry{Actor: "snaa:x key:y", Action: ActHandleCreate, Target: display})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Update(func(tx Tx) error {
			if err := tx.AppendHandleAudit(key, tail); err != nil {
				return err
			}
			return tx.Audit(ActorOperator, ActSNAAUpdate, "snaa-1", nil, nil)
		}); err != nil {
			t.Fatal(err)
		}
		if ns == "AB" {
			wantA = append([]string{display}, wantA...)
		}
	}
	var got []string
	var before uint64
	for pages := 0; ; pages++ {
		es, next, err := r.NamespaceAuditNewest(nsA, before, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			got = append(got, e.Target)
		}
		if next == 0 {
			break
		}
		if pages > 5 || next >= before && before != 0 {
			t.Fatalf("page %d: next %d after before %d", pages, next, before)
		}
		before = next
	}
	if !slices.Equal(got, wantA) {
		t.Errorf("namespace AB newest first = %q, want %q", got, wantA)
	}
	if es, next, err := r.NamespaceAuditNewest(nsA, 1, 10); err != nil || len(es) != 0 || next != 0 {
		t.Errorf("below the first entry: %v, %d, %v", es, next, err)
	}

	// The whole log newest first, past the index keys beside the entries;
	// filtered by action and by the namespace's SNAA.
	all, err := r.AuditLog(0, 100)
	if err != nil || len(all) != 14 {
		t.Fatalf("the log: %d entries, %v", len(all), err)
	}
	var seqs []uint64
	for next := uint64(0); ; {
		es, n, err := r.AuditPage(AuditQuery{Before: next, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			seqs = append(seqs, e.Seq)
		}
		if next = n; next == 0 {
			break
		}
	}
	for i, s := range seqs {
		if want := all[len(all)-1-i].Seq; s != want {
			t.Fatalf("entry %d of the pages: seq %d, want %d (%v)", i, s, want, seqs)
		}
	}
	if len(seqs) != len(all) {
		t.Errorf("the pages hold %d entries, the log %d", len(seqs), len(all))
	}
	es, _, err := r.AuditPage(AuditQuery{Limit: 100, Action: ActHandleCreate})
	if err != nil || len(es) != 7 {
		t.Errorf("handle.create: %d entries, %v", len(es), err)
	}
	if err := r.Update(func(tx Tx) error { return tx.PutSNAA(&SNAA{ID: "s-ab", Namespace: "AB"}) }); err != nil {
		t.Fatal(err)
	}
	es, _, err = r.AuditPage(AuditQuery{Limit: 100, SNAA: "s-ab"})
	var targets []string
	for _, e := range es {
		targets = append(targets, e.Target)
	}
	if err != nil || !slices.Equal(targets, wantA) {
		t.Errorf("entries about SNAA s-ab (namespace AB) = %q, %v; want %q", targets, err, wantA)
	}
}
