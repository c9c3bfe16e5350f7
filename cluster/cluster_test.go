package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

// errTaken is the create-only refusal of the test writes.
var errTaken = errors.New("taken")

type testNode struct {
	*Node
	db  *store.DB
	reg *registry.Registry
	inv *invLog
}

type invLog struct {
	mu   sync.Mutex
	keys []string
}

func (l *invLog) Invalidate(k string) { l.mu.Lock(); l.keys = append(l.keys, k); l.mu.Unlock() }

func newTestNode(t *testing.T, c *etcdtest.Cluster, name, path string) *testNode {
	t.Helper()
	return newTestNodeTB(t, c, name, path)
}

func newTestNodeTB(t testing.TB, c *etcdtest.Cluster, name, path string) *testNode {
	t.Helper()
	return startTestNode(t, Config{Endpoints: []string{c.Endpoints()}, NodeName: name}, path)
}

// startTestNode opens a database at path and runs a node of cfg over it
// (cfg's DB, Registry and Invalidator are filled in) until the test ends.
func startTestNode(t testing.TB, cfg Config, path string) *testNode {
	t.Helper()
	db, err := store.Open(store.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	inv := &invLog{}
	cfg.DB, cfg.Registry, cfg.Invalidator = db, reg, inv
	n, err := Dial(cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := n.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		n.Close()
		db.Close()
	})
	return &testNode{Node: n, db: db, reg: reg, inv: inv}
}

// create writes a record under key unless one exists, with an audit entry.
func (n *testNode) create(key, url string) error {
	return n.Commit(func(tx registry.Tx) error {
		if tx.HasRecord(key) {
			return errTaken
		}
		st := store.Stored{Version: 1, Record: handlev.Record{Handle: key, Values: []handlev.Value{
			{Index: 1, Type: "URL", Data: []byte(url)}}}}
		if err := tx.PutRecord(key, &st); err != nil {
			return err
		}
		return tx.Audit("test", registry.ActHandleCreate, key, nil, url)
	})
}

// update replaces the record's URL if its version is want (If-Match).
func (n *testNode) update(key, url string, want uint64) error {
	return n.Commit(func(tx registry.Tx) error {
		st, ok, err := tx.Record(key)
		if err != nil || !ok {
			return fmt.Errorf("update %s: found %v, %v", key, ok, err)
		}
		if st.Version != want {
			return errTaken
		}
		st.Version++
		st.Record.Values = []handlev.Value{{Index: 1, Type: "URL", Data: []byte(url)}}
		return tx.PutRecord(key, &st)
	})
}

func (n *testNode) url(t *testing.T, key string) (string, uint64) {
	t.Helper()
	st, ok, err := n.db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "", 0
	}
	return string(st.Record.Values[0].Data), st.Version
}

func TestWritesReplicate(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	a := newTestNode(t, c, "a", filepath.Join(dir, "a.db"))
	b := newTestNode(t, c, "b", filepath.Join(dir, "b.db"))

	if err := a.create("21.12345/X", "https://example.org/1"); err != nil {
		t.Fatalf("create on a: %v", err)
	}
	// Read-your-writes on the accepting node: applied before Commit returned.
	if u, v := a.url(t, "21.12345/X"); u != "https://example.org/1" || v != 1 {
		t.Fatalf("a after create: %q v%d", u, v)
	}
	// b applies it within the replication lag.
	waitFor(t, func() bool { u, _ := b.url(t, "21.12345/X"); return u != "" })
	// b refuses the same id: it rehearses on a copy that has it, or its
	// transaction loses and the rehearsal is repeated.
	if err := b.create("21.12345/X", "https://example.org/2"); !errors.Is(err, errTaken) {
		t.Fatalf("second create on b = %v, want taken", err)
	}
	// A stale If-Match through b fails once a has updated.
	if err := a.update("21.12345/X", "https://example.org/3", 1); err != nil {
		t.Fatalf("update on a: %v", err)
	}
	if err := b.update("21.12345/X", "https://example.org/4", 1); !errors.Is(err, errTaken) {
		t.Fatalf("stale update on b = %v, want taken", err)
	}
	if u, v := b.url(t, "21.12345/X"); u != "https://example.org/3" || v != 2 {
		t.Fatalf("b after updates: %q v%d", u, v)
	}
	b.inv.mu.Lock()
	n := len(b.inv.keys)
	b.inv.mu.Unlock()
	if n == 0 {
		t.Error("b invalidated no cache entry while applying")
	}
}

// Concurrent creates of one id through two nodes: exactly one wins; and
// concurrent creates of distinct ids all land, with distinct, increasing
// audit sequence numbers, the same on both nodes.
func TestConcurrentCreates(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	nodes := []*testNode{newTestNode(t, c, "a", filepath.Join(dir, "a.db")), newTestNode(t, c, "b", filepath.Join(dir, "b.db"))}
	for round := 0; round < 5; round++ {
		key := fmt.Sprintf("21.12345/SAME%d", round)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, n := range nodes {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = n.create(key, fmt.Sprint("https://example.org/", i)) }()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, errTaken):
				t.Fatalf("create %s: %v", key, err)
			}
		}
		if wins != 1 {
			t.Fatalf("create %s: %d winners (%v), want 1", key, wins, errs)
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := nodes[i%2].create(fmt.Sprintf("21.12345/D%d", i), "https://example.org/d"); err != nil {
				t.Errorf("create D%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	rev := nodes[0].Applied()
	if r := nodes[1].Applied(); r > rev {
		rev = r
	}
	for _, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := n.WaitApplied(ctx, rev); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	var exports [2]string
	var seqs [2][]uint64
	for i, n := range nodes {
		log, err := n.reg.AuditLog(0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 45 {
			t.Errorf("node %d: %d audit entries, want 45", i, len(log))
		}
		for j, e := range log {
			if j > 0 && e.Seq <= log[j-1].Seq {
				t.Fatalf("node %d: audit entry %d has seq %d after %d", i, j, e.Seq, log[j-1].Seq)
			}
			seqs[i] = append(seqs[i], e.Seq)
		}
		var buf bytes.Buffer
		if err := n.db.Export(&buf); err != nil {
			t.Fatal(err)
		}
		exports[i] = buf.String()
	}
	if fmt.Sprint(seqs[0]) != fmt.Sprint(seqs[1]) {
		t.Errorf("audit sequence numbers differ:\n%v\n%v", seqs[0], seqs[1])
	}
	if exports[0] != exports[1] || exports[0] == "" {
		t.Error("the two nodes' exports differ")
	}
}

// A member of a commit group that fails for what an earlier member wrote
// must not be answered before etcd decides that write: here the earlier
// member (A, an update of K from version 1 that also creates K2) loses its
// transaction to b's create of K2, made during A's rehearsal, and then
// fails on its own. B (an update of K from version 1, refused in the
// group's rehearsal because A had updated K) answered "taken" with K still
// at version 1 would be a write refused for one that never happened. It
// is rehearsed alone instead, first, and succeeds.
func TestGroupMemberFailsOnItsOwn(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	a, b := newTestNode(t, c, "a", filepath.Join(dir, "a.db")), newTestNode(t, c, "b", filepath.Join(dir, "b.db"))
	const k, k2 = "21.12345/K", "21.12345/K2"
	if err := a.create(k, "https://example.org/0"); err != nil {
		t.Fatal(err)
	}
	put := func(tx registry.Tx, key, url string, ver uint64) error {
		return tx.PutRecord(key, &store.Stored{Version: ver, Record: handlev.Record{Handle: key, Values: []handlev.Value{
			{Index: 1, Type: "URL", Data: []byte(url)}}}})
	}
	update := func(tx registry.Tx, url string) error {
		st, ok, err := tx.Record(k)
		if err != nil || !ok || st.Version != 1 {
			return errTaken
		}
		return put(tx, k, url, 2)
	}
	first := true
	fnA := func(tx registry.Tx) error {
		if first {
			first = false
			if err := b.create(k2, "https://example.org/b"); err != nil {
				return err
			}
		}
		if tx.HasRecord(k2) {
			return errTaken
		}
		if err := update(tx, "https://example.org/A"); err != nil {
			return err
		}
		return put(tx, k2, "https://example.org/A", 1)
	}
	fnB := func(tx registry.Tx) error { return update(tx, "https://example.org/B") }
	calls := []*call{{Fn: fnA}, {Fn: fnB}}
	errs := map[*call][]error{}
	a.runGroup(slices.Clone(calls), nil, func(c *call, err error) { errs[c] = append(errs[c], err) })
	if len(errs[calls[0]]) != 1 || len(errs[calls[1]]) != 1 {
		t.Fatalf("A answered %v, B %v; want one answer each", errs[calls[0]], errs[calls[1]])
	}
	errA, errB := errs[calls[0]][0], errs[calls[1]][0]
	url, ver := a.url(t, k)
	if ver == 1 && errors.Is(errB, errTaken) {
		t.Fatalf("B refused while K stayed at version 1 (%s)", url)
	}
	if !errors.Is(errA, errTaken) || errB != nil {
		t.Errorf("A answered %v, B %v; want taken, nil", errA, errB)
	}
	if url != "https://example.org/B" || ver != 2 {
		t.Errorf("K is %s at version %d, want B's at 2", url, ver)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
