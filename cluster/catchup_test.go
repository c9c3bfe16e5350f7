package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

// A node away while etcd compacted its history catches up by a snapshot:
// it gets every write, loses what etcd no longer holds, and keeps its
// indexes in step.
func TestCatchUpAfterCompaction(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	a := newTestNode(t, c, "a", filepath.Join(dir, "a.db"))

	// b runs, applies two records, and goes away.
	db, err := store.Open(store.Config{Path: filepath.Join(dir, "b.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	namer, _ := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	inv := &invLog{}
	b, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "b", DB: db, Registry: reg, Invalidator: inv})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	for _, k := range []string{fk("KEEP"), fk("GONE")} {
		if err := a.create(k, "https://example.org/"+k); err != nil {
			t.Fatal(err)
		}
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := b.WaitApplied(wctx, a.Applied()); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	before := b.Applied()

	// Meanwhile: 30 more records, one record deleted from etcd, history
	// compacted.
	for i := 0; i < 30; i++ {
		if err := a.create(fk(fmt.Sprintf("NEW%d", i)), "https://example.org/new"); err != nil {
			t.Fatal(err)
		}
	}
	cli := c.Client()
	if _, err := cli.Delete(wctx, entryKey(DefaultPrefix, "records", []byte(fk("GONE")))); err != nil {
		t.Fatal(err)
	}
	c.Compact()

	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r, err := cli.Get(wctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WaitApplied(wctx, r.Header.Revision); err != nil {
		t.Fatalf("b did not catch up from %d to %d: %v", before, r.Header.Revision, err)
	}
	if b.resyncs.Load() != 1 {
		t.Errorf("resyncs = %d, want 1", b.resyncs.Load())
	}
	for i := 0; i < 30; i++ {
		if _, ok, _ := db.Get(fk(fmt.Sprintf("NEW%d", i))); !ok {
			t.Fatalf("b lacks NEW%d after catching up", i)
		}
	}
	if _, ok, _ := db.Get(fk("KEEP")); !ok {
		t.Error("b lost KEEP")
	}
	if _, ok, _ := db.Get(fk("GONE")); ok {
		t.Error("b still has GONE, which etcd no longer holds")
	}
	// The URL index followed: GONE's entry went with it.
	var urls int
	err = db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketURLIndex).ForEach(func(k, _ []byte) error {
			if len(k) > 0 && k[0] != 0 {
				urls++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if urls != 31 {
		t.Errorf("URL index has %d entries, want 31", urls)
	}
	found := false
	inv.mu.Lock()
	for _, k := range inv.keys {
		found = found || k == fk("GONE")
	}
	inv.mu.Unlock()
	if !found {
		t.Error("the deleted record's cache entry was not invalidated")
	}
}

// fk is the storage key of the full-form handle 21.12345/svc/T/id, which the
// URL index covers.
func fk(id string) string {
	namer, _ := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	k, _, err := namer.Key(namer.Full("21.12345", "T", id))
	if err != nil {
		panic(err)
	}
	return k
}

// Seed loads a single node's database into an empty prefix, refuses a
// non-empty one, and a new node then holds the same records.
func TestSeed(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	db, reg := openTestDB(t)
	const records = 2500 // more than one batch
	err := reg.Update(func(tx registry.Tx) error {
		for i := 0; i < records; i++ {
			k := fk(fmt.Sprintf("S%d", i))
			if err := tx.PutRecord(k, &store.Stored{Version: 1, Record: handlev.Record{Handle: k, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/s")}}}}); err != nil {
				return err
			}
		}
		return tx.Audit("op", registry.ActSNAACreate, "x", nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "seed", DB: db, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.Seed(t.Context())
	if err != nil || n != records+1 {
		t.Fatalf("Seed = %d, %v; want %d", n, err, records+1)
	}
	if _, err := s.Seed(t.Context()); !errors.Is(err, ErrPrefixNotEmpty) {
		t.Fatalf("second Seed = %v, want ErrPrefixNotEmpty", err)
	}
	b := newTestNode(t, c, "b", filepath.Join(t.TempDir(), "b.db"))
	var want, got bytes.Buffer
	if err := db.Export(&want); err != nil {
		t.Fatal(err)
	}
	if err := b.db.Export(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Errorf("the new node's export (%d bytes) differs from the seeded database's (%d bytes)", got.Len(), want.Len())
	}
}
