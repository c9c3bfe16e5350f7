package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
// non-empty one, and a new node then holds the same records and counts the
// seeded database's statistics in its sums.
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
	// Statistics as a single node's flush writes them (registry/stats.go):
	// 1,200 identifiers (more than one batch) on two days, and a namespace.
	const counted = 1200
	day1, day2 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	nsKey := strings.TrimSuffix(fk("X"), "X")
	err = db.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketStats)
		put := func(kind byte, key string, day time.Time, n uint64) error {
			return b.Put([]byte(string(kind)+key+"\x00"+day.Format("20060102")), binary.BigEndian.AppendUint64(nil, n))
		}
		for i := 0; i < counted; i++ {
			if err := put('i', fk(fmt.Sprintf("S%d", i)), day1, uint64(i+1)); err != nil {
				return err
			}
		}
		if err := put('i', fk("S7"), day2, 100); err != nil {
			return err
		}
		return put('n', nsKey, day1, 5000)
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
	if want := (SeedCounts{Entries: records + 1, Stats: counted + 2}); err != nil || n != want {
		t.Fatalf("Seed = %+v, %v; want %+v", n, err, want)
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

	// The new node's statistics routes count the seeded totals, and its own
	// on top of them.
	days := func(namespace bool, key string) map[string]uint64 {
		t.Helper()
		m := map[string]uint64{}
		if err := b.StatsDays(t.Context(), namespace, key, day1, day2, func(d string, n uint64) { m[d] = n }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := days(false, fk("S7")); got["2025-03-01"] != 8 || got["2025-03-02"] != 100 || len(got) != 2 {
		t.Errorf("seeded identifier's days: %v", got)
	}
	if got := days(false, fk(fmt.Sprintf("S%d", counted-1))); got["2025-03-01"] != counted || len(got) != 1 {
		t.Errorf("last seeded identifier's days: %v", got)
	}
	if got := days(true, nsKey); got["2025-03-01"] != 5000 || len(got) != 1 {
		t.Errorf("seeded namespace's days: %v", got)
	}
	b.PublishStats([][]byte{[]byte("i" + fk("S7") + "\x0020250302")}, []uint64{3})
	if got := days(false, fk("S7")); got["2025-03-02"] != 103 {
		t.Errorf("seeded and own totals of a day: %v", got)
	}
}

// TestFirstSnapshotInterrupted: a node stopped while loading its first
// snapshot leaves its database empty (the load goes to a fresh file), so
// the next start loads the snapshot again, whatever the stopped load left
// in the fresh file. The stop lands half way through a load as long as a
// whole one took here.
func TestFirstSnapshotInterrupted(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	src, sreg := openTestDB(t)
	const records = 20000 // many pages (snapshotPage) of load
	err := sreg.Update(func(tx registry.Tx) error {
		for i := 0; i < records; i++ {
			k := fk(fmt.Sprintf("I%d", i))
			if err := tx.PutRecord(k, &store.Stored{Version: 1, Record: handlev.Record{Handle: k, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/i")}}}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "seed", DB: src, Registry: sreg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seed(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	start := time.Now()
	a := newTestNode(t, c, "a", filepath.Join(t.TempDir(), "a.db"))
	whole := time.Since(start)

	path := filepath.Join(t.TempDir(), "b.db")
	// What an earlier stopped load may leave: a fresh file with part of the data.
	junk, err := store.Open(store.Config{Path: path + ".resync", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	k := fk("JUNK")
	if err := junk.Update(func(tx *store.Tx) error {
		return tx.PutRecord(k, &store.Stored{Version: 1, Record: handlev.Record{Handle: k, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/junk")}}}})
	}); err != nil {
		t.Fatal(err)
	}
	junk.Close()
	// A start stopped half way through its load: the database stays empty.
	db, reg := openTestDBAt(t, path)
	n, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "b", DB: db, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), whole/2)
	_, serr := n.Start(ctx)
	cancel()
	held := 0
	if err := db.View(func(tx *store.Tx) error {
		held = tx.Bolt().Bucket(store.BucketRecords).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if serr == nil {
		t.Logf("the load (whole: %v) ended before its stop", whole)
	} else if held != 0 {
		t.Errorf("a load stopped half way (%v) left %d records in the database", serr, held)
	}
	n.Close()
	db.Close()

	b := newTestNode(t, c, "b", path)
	if err := b.WaitApplied(t.Context(), a.Applied()); err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if err := a.db.Export(&want); err != nil {
		t.Fatal(err)
	}
	if err := b.db.Export(&got); err != nil {
		t.Fatal(err)
	}
	if want.String() != got.String() {
		t.Errorf("b after an interrupted first load differs from a (%d and %d bytes of export)", got.Len(), want.Len())
	}
}
