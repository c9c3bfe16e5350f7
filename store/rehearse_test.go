package store

import (
	"path/filepath"
	"testing"
	"time"

	"pidnode/handlev"
)

func openRehearse(t *testing.T) *DB {
	t.Helper()
	db, err := Open(Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	putN(t, db, "BASE", 2)
	err = db.Update(func(tx *Tx) error {
		_, err := tx.NextSequence(BucketAudit)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// A rehearsal reads its own writes back (records, values, sequences,
// derived entries), reports the replicated ones in order with what existed
// before, and leaves the database as it was.
func TestRehearseOverlay(t *testing.T) {
	db := openRehearse(t)
	writes, rev, err := db.Rehearse(func(tx *Tx) error {
		if err := tx.PutRecord("NEW/1", &Stored{Version: 1, Record: handlev.Record{Handle: "NEW/1"}}); err != nil {
			return err
		}
		if st, ok, err := tx.Record("NEW/1"); err != nil || !ok || st.Record.Handle != "NEW/1" {
			t.Errorf("Record(NEW/1) in the rehearsal = %v, %v, %v; want its own write", st.Record.Handle, ok, err)
		}
		if err := tx.DeleteRecord("BASE/0"); err != nil {
			return err
		}
		if _, ok, _ := tx.Record("BASE/0"); ok {
			t.Error("Record(BASE/0) after DeleteRecord in the rehearsal: found")
		}
		for want := uint64(2); want <= 3; want++ {
			if seq, err := tx.NextSequence(BucketAudit); err != nil || seq != want {
				t.Errorf("NextSequence = %d, %v; want %d", seq, err, want)
			}
		}
		if err := tx.Put(BucketIdempotency, []byte("k"), []byte("v1")); err != nil {
			return err
		}
		if err := tx.Put(BucketIdempotency, []byte("k"), []byte("v2")); err != nil {
			return err
		}
		if err := tx.PutDerived(BucketURLIndex, []byte("idx"), []byte{}); err != nil {
			return err
		}
		if tx.Get(BucketURLIndex, []byte("idx")) == nil || string(tx.Get(BucketIdempotency, []byte("k"))) != "v2" {
			t.Error("Get does not see the rehearsal's writes")
		}
		return nil
	})
	if err != nil || rev != 2 {
		t.Fatalf("Rehearse = %v, revision %d; want no error, revision 2", err, rev)
	}
	want := []struct {
		bucket, key  string
		del, existed bool
	}{
		{"records", "NEW/1", false, false}, {"records", "BASE/0", true, true},
		{"idempotency", "k", false, false}, {"idempotency", "k", false, true},
	}
	if len(writes) != len(want) {
		t.Fatalf("writes = %d, want %d: %+v", len(writes), len(want), writes)
	}
	for i, w := range want {
		g := writes[i]
		if string(g.Bucket) != w.bucket || string(g.Key) != w.key || (g.Value == nil) != w.del || g.Existed != w.existed {
			t.Errorf("write %d = %s/%s delete %v existed %v; want %+v", i, g.Bucket, g.Key, g.Value == nil, g.Existed, w)
		}
	}
	err = db.View(func(tx *Tx) error {
		if _, ok, _ := tx.Record("NEW/1"); ok {
			t.Error("the rehearsal's record reached the database")
		}
		if _, ok, _ := tx.Record("BASE/0"); !ok {
			t.Error("the rehearsal's delete reached the database")
		}
		if tx.Get(BucketURLIndex, []byte("idx")) != nil {
			t.Error("the rehearsal's derived entry reached the database")
		}
		if s := tx.Bolt().Bucket(BucketAudit).Sequence(); s != 1 {
			t.Errorf("audit sequence after the rehearsal = %d, want 1", s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A rehearsal that keeps to the overlay takes no writer lock: it completes
// while another write transaction is open.
func TestRehearseBesideWriter(t *testing.T) {
	db := openRehearse(t)
	btx, err := db.bolt().Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	defer btx.Rollback()
	done := make(chan error, 1)
	go func() {
		_, _, err := db.Rehearse(func(tx *Tx) error {
			return tx.PutRecord("NEW/1", &Stored{Version: 1, Record: handlev.Record{Handle: "NEW/1"}})
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Rehearse waited for the open write transaction")
	}
}

// A rehearsal that reaches past the overlay (the bbolt transaction, a
// cursor over a bucket it wrote) runs again in a write transaction and
// reports what that run did.
func TestRehearseFallsBack(t *testing.T) {
	db := openRehearse(t)
	runs := 0
	writes, _, err := db.Rehearse(func(tx *Tx) error {
		runs++
		if err := tx.PutRecord("NEW/1", &Stored{Version: 1, Record: handlev.Record{Handle: "NEW/1"}}); err != nil {
			return err
		}
		n := 0
		err := tx.ForEachRecord(func(string, *Stored) error { n++; return nil })
		if err != nil {
			return err
		}
		if runs == 2 && n != 3 {
			t.Errorf("ForEachRecord in the write transaction saw %d records, want 3", n)
		}
		return tx.Bolt().Bucket(BucketIdempotency).Put([]byte("k"), []byte("v"))
	})
	if err != nil || runs != 2 {
		t.Fatalf("Rehearse = %v after %d runs; want no error after 2", err, runs)
	}
	if len(writes) != 1 || string(writes[0].Key) != "NEW/1" {
		t.Errorf("writes = %+v, want the record only", writes)
	}
}
