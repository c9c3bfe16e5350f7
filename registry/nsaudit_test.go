package registry

import (
	"bytes"
	"testing"

	"pidnode/store"
)

// TestNamespaceAudit: identifier writes are indexed by namespace, in the
// write's transaction (AppendHandleAudit) and when applied from another node
// (ApplyAuditAt); a namespace's range holds its own entries only, never
// another namespace's or an operator action; paging by sequence number
// resumes exactly; a database without the index gets it from EnsureIndexes.
func TestNamespaceAudit(t *testing.T) {
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	nsA, err := r.NamespaceKey("21.12345", "AB")
	if err != nil {
		t.Fatal(err)
	}
	nsB, err := r.NamespaceKey("21.12345", "ABC") // "AB" is a prefix of "ABC": their ranges must not mix
	if err != nil {
		t.Fatal(err)
	}
	write := func(ns, id string) {
		t.Helper()
		display := namer.Full("21.12345", ns, id)
		key, _, err := namer.Key(display)
		if err != nil {
			t.Fatal(err)
		}
		tail, err := AuditTail(&AuditEntry{Actor: "snaa:x key:y", Action: ActHandleCreate, Target: display})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Update(func(tx Tx) error { return tx.AppendHandleAudit(key, tail) }); err != nil {
			t.Fatal(err)
		}
	}
	wakeA := r.WaitNamespaceAudit(nsA)
	wakeB := r.WaitNamespaceAudit(nsB)
	var wantA []string
	for i, ns := range []string{"AB", "ABC", "AB", "AB", "ABC"} {
		id := string(rune('A'+i)) + "1"
		write(ns, id)
		if ns == "AB" {
			wantA = append(wantA, namer.Full("21.12345", ns, id))
		}
		if err := r.Update(func(tx Tx) error { return tx.Audit(ActorOperator, ActSNAAUpdate, "snaa-1", nil, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-wakeA:
	default:
		t.Error("a commit with an entry of namespace AB did not wake its waiter")
	}
	select {
	case <-wakeB:
	default:
		t.Error("a commit with an entry of namespace ABC did not wake its waiter")
	}
	// Applied as a cluster applies it: indexed too.
	bare, err := AuditTail(&AuditEntry{Actor: "snaa:x key:y", Action: ActHandleUpdate, Target: namer.Full("21.12345", "AB", "A1")})
	if err != nil {
		t.Fatal(err)
	}
	const applied = 1 << 40
	if err := r.Update(func(tx Tx) error { return tx.ApplyAuditAt(applied, bare) }); err != nil {
		t.Fatal(err)
	}
	wantA = append(wantA, namer.Full("21.12345", "AB", "A1"))

	check := func(when string) {
		t.Helper()
		var got []string
		var after uint64
		for page := 0; page < 10; page++ {
			var es []AuditEntry
			if err := r.View(func(tx Tx) (err error) { es, err = tx.NamespaceAudit(nsA, after, 2); return err }); err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if e.Seq <= after {
					t.Fatalf("%s: seq %d after cursor %d", when, e.Seq, after)
				}
				after = e.Seq
				got = append(got, e.Target)
			}
			if len(es) < 2 {
				break
			}
		}
		if len(got) != len(wantA) {
			t.Fatalf("%s: namespace AB's feed %q, want %q", when, got, wantA)
		}
		for i := range got {
			if got[i] != wantA[i] {
				t.Fatalf("%s: namespace AB's feed %q, want %q", when, got, wantA)
			}
		}
		if after != applied {
			t.Errorf("%s: last seq %d, want %d", when, after, applied)
		}
	}
	check("maintained")

	// Drop the namespace index and its marker, as in a database written
	// before it existed: EnsureIndexes rebuilds the same index.
	if err := db.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketAudit)
		var del [][]byte
		c := b.Cursor()
		for k, _ := c.Seek([]byte{auditNSTag}); k != nil && k[0] == auditNSTag; k, _ = c.Next() {
			del = append(del, bytes.Clone(k))
		}
		if len(del) < 2 {
			t.Fatalf("only %d namespace index keys", len(del))
		}
		for _, k := range del {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var empty []AuditEntry
	r.View(func(tx Tx) (err error) { empty, err = tx.NamespaceAudit(nsA, 0, 100); return err })
	if len(empty) != 0 {
		t.Fatalf("index not dropped: %d entries", len(empty))
	}
	if _, err := r.EnsureIndexes(); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}
