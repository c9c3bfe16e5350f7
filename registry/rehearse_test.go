package registry

import (
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// The create path (write.Service.Create's transaction) rehearses on a read
// transaction: it completes while another write transaction holds bbolt's
// writer lock, sees its own writes, and reports the replicated writes only,
// not the derived index entries.
func TestRehearseCreateReadOnly(t *testing.T) {
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	hold, held := make(chan struct{}), make(chan struct{})
	go db.UpdateAlone(func(*store.Tx) error { close(held); <-hold; return nil })
	<-held
	defer close(hold)
	const key = "21.T12345/NS/1"
	type out struct {
		writes []store.Write
		err    error
	}
	done := make(chan out, 1)
	go func() {
		w, _, err := r.Rehearse(func(tx Tx) error {
			if _, ok, err := tx.Idem("idem"); ok || err != nil {
				t.Errorf("Idem before PutIdem: %v, %v", ok, err)
			}
			if err := tx.PutIdem("idem", &IdemRecord{BodyHash: "h", Key: key}); err != nil {
				return err
			}
			if ir, ok, err := tx.Idem("idem"); !ok || err != nil || ir.Key != key {
				t.Errorf("Idem after PutIdem: %+v, %v, %v", ir, ok, err)
			}
			st := store.Stored{Version: 1, Record: handlev.Record{Handle: key, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/")}}}}
			if err := tx.PutRecord(key, &st); err != nil {
				return err
			}
			if !tx.HasRecord(key) {
				t.Error("HasRecord after PutRecord: false")
			}
			if err := tx.IndexRecord(key, nil, &st); err != nil {
				return err
			}
			tail, err := AuditTail(&AuditEntry{Actor: "test", Action: ActHandleCreate, Target: key})
			if err != nil {
				return err
			}
			return tx.AppendHandleAudit(key, tail)
		})
		done <- out{w, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		var got []string
		for _, w := range o.writes {
			got = append(got, string(w.Bucket))
		}
		if want := []string{"idempotency", "records", "audit"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("rehearsed writes to %v, want %v", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the create's rehearsal waited for the open write transaction")
	}
}
