package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pidnode/store"
)

func TestAppendAuditMatchesMarshal(t *testing.T) {
	tm := time.Date(2026, 11, 22, 3, 4, 5, 600700800, time.UTC)
	cases := []struct {
		name string
		e    AuditEntry
	}{
		{"operator", AuditEntry{Actor: ActorOperator, Action: ActSNAACreate, Target: "snaa_x", After: map[string]any{"a": 1}}},
		{"handle create", AuditEntry{Actor: "snaa:s key:k", KeyName: "ci <&>", Action: ActHandleCreate, Target: "21.1/SVC/NS/X",
			After: json.RawMessage(`{"metadata":{"b":"<x>"},"url":"https://e.org/?a=1&b=2"}`)}},
		{"before and after", AuditEntry{Actor: "a", Action: ActHandleUpdate, Target: "t", Before: map[string]any{"u": "x"}, After: map[string]any{"u": "y"}}},
		{"whole second", AuditEntry{Actor: "a", Action: "x", Target: "t"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := c.e
			e.Seq, e.Time = uint64(i*1000+7), tm
			if i == 3 {
				e.Time = tm.Truncate(time.Second)
			}
			want, err := json.Marshal(&e)
			if err != nil {
				t.Fatal(err)
			}
			tail, err := AuditTail(&e)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendAudit(nil, e.Seq, e.Time, tail); string(got) != string(want) {
				t.Errorf("appendAudit = %s, want %s", got, want)
			}
		})
	}
}

// AuditTailAfter gives the bytes AuditTail gives with the same After as a
// json.RawMessage.
func TestAuditTailAfter(t *testing.T) {
	for _, after := range []any{
		map[string]any{"metadata": map[string]any{"b": "<x> & \u2028"}, "url": "https://e.org/?a=1&b=2"},
		map[string]any{},
	} {
		raw, err := json.Marshal(after)
		if err != nil {
			t.Fatal(err)
		}
		e := AuditEntry{Actor: "snaa:s key:k", KeyName: "ci <&>", Action: ActHandleCreate, Target: "21.1/SVC/NS/X"}
		got, err := AuditTailAfter(&e, raw)
		if err != nil {
			t.Fatal(err)
		}
		e.After = json.RawMessage(raw)
		want, err := AuditTail(&e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("auditTailAfter = %s, want %s", got, want)
		}
	}
}

// TestGroupCommitFailureIsolated checks that a write failing inside a commit
// group fails alone, and that the others of its group are committed.
func TestGroupCommitFailureIsolated(t *testing.T) {
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "g.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := newGroupCommit(db, nil)
	errBad := errors.New("bad write")
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.update(func(tx *store.Tx) error {
				b := tx.Bolt().Bucket(store.BucketMeta)
				if err := b.Put([]byte(fmt.Sprintf("gc-%03d", i)), []byte("x")); err != nil {
					return err
				}
				switch i % 50 {
				case 7:
					return errBad
				case 8:
					panic("boom")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var want string
		switch i % 50 {
		case 7:
			want = errBad.Error()
		case 8:
			want = "registry: write panicked: boom"
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("write %d: error %q, want %q", i, got, want)
		}
	}
	db.View(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketMeta)
		for i := 0; i < n; i++ {
			stored := b.Get([]byte(fmt.Sprintf("gc-%03d", i))) != nil
			if ok := i%50 != 7 && i%50 != 8; stored != ok {
				t.Errorf("write %d stored = %v, want %v", i, stored, ok)
			}
		}
		return nil
	})
}
