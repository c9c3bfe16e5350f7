package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

// newShardNode is newTestNode on the shards cs, named s0, s1, ….
func newShardNode(t *testing.T, cs []*etcdtest.Cluster, name, path string) *testNode {
	t.Helper()
	var shards []Shard
	for i, c := range cs {
		shards = append(shards, Shard{Name: "s" + string(rune('0'+i)), Endpoints: []string{c.Endpoints()}})
	}
	return startTestNode(t, Config{Shards: shards, NodeName: name}, path)
}

// createAs is testNode.create as owner.
func (n *testNode) createAs(owner, key, url string) error {
	return n.CommitAs(owner, 1, func(tx registry.Tx) error {
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

// etcdHas reports whether c holds the record under storage key key.
func etcdHas(t *testing.T, c *etcdtest.Cluster, key string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Client().Get(ctx, DefaultPrefix+"records/"+key, clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count == 1
}

// TestShardsRouteWrites: with two shards, an SNAA's records go to its
// shard's etcd only and the others' to the registry shard; both nodes apply
// both, each shard's applied revision is its own, audit entries of the
// second shard are numbered apart from the first's, a write of records of
// another shard's namespace is refused, an SNAA on a shard a node lacks
// gets 503 rather than the wrong etcd, and ChooseShard knows the shards.
func TestShardsRouteWrites(t *testing.T) {
	opts := etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes}
	cs := []*etcdtest.Cluster{etcdtest.Start(t, 1, opts), etcdtest.Start(t, 1, opts)}
	dir := t.TempDir()
	a := newShardNode(t, cs, "a", filepath.Join(dir, "a.db"))
	b := newShardNode(t, cs, "b", filepath.Join(dir, "b.db"))

	if got, err := a.ChooseShard("nope"); !errors.Is(err, ErrUnknownShard) {
		t.Errorf("ChooseShard(nope) = %q, %v", got, err)
	}
	if got, err := a.ChooseShard("s1"); got != "s1" || err != nil {
		t.Errorf("ChooseShard(s1) = %q, %v", got, err)
	}
	if got, err := a.ChooseShard(""); !slices.Contains([]string{"s0", "s1"}, got) || err != nil {
		t.Errorf("ChooseShard(\"\") = %q, %v", got, err)
	}
	err := a.Update(func(tx registry.Tx) error {
		if err := tx.PutSNAA(&registry.SNAA{ID: "snaa_b", Namespace: "SHB", Shard: "s1"}); err != nil {
			return err
		}
		return tx.PutSNAA(&registry.SNAA{ID: "snaa_x", Namespace: "GONE", Shard: "s9"})
	})
	if err != nil {
		t.Fatal(err)
	}
	onB, onReg := "21.T12345/SVC/SHB/R1", "21.T12345/SVC/DMO/R1"
	if err := a.createAs("snaa_b", onB, "https://example.org/b"); err != nil {
		t.Fatalf("create on s1: %v", err)
	}
	if err := b.createAs("", onReg, "https://example.org/reg"); err != nil {
		t.Fatalf("create on s0: %v", err)
	}
	if !etcdHas(t, cs[1], onB) || etcdHas(t, cs[0], onB) || !etcdHas(t, cs[0], onReg) || etcdHas(t, cs[1], onReg) {
		t.Fatalf("records in the wrong etcd: s0 %v %v, s1 %v %v", etcdHas(t, cs[0], onB), etcdHas(t, cs[0], onReg),
			etcdHas(t, cs[1], onB), etcdHas(t, cs[1], onReg))
	}
	for _, n := range []*testNode{a, b} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			u1, _ := n.url(t, onB)
			u2, _ := n.url(t, onReg)
			if u1 == "https://example.org/b" && u2 == "https://example.org/reg" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: records %q %q", n.Name(), u1, u2)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Each shard's revision is stored apart; the second shard's audit
	// entries carry its place.
	var seqs [2][]uint64
	for i, n := range []*testNode{a, b} {
		r0, _ := n.db.ShardRevision("")
		r1, _ := n.db.ShardRevision("s1")
		if r0 <= 0 || r1 <= 0 {
			t.Errorf("%s: applied revisions s0 %d, s1 %d", n.Name(), r0, r1)
		}
		entries, err := n.reg.AuditLog(0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Target == onB || e.Target == onReg {
				seqs[i] = append(seqs[i], e.Seq)
			}
		}
	}
	if len(seqs[0]) != 2 || !slices.Equal(seqs[0], seqs[1]) || seqs[0][1]>>56 != 1 || seqs[0][0]>>56 != 0 {
		t.Errorf("audit numbers of the two creates: a %x, b %x", seqs[0], seqs[1])
	}

	// A record of s1's namespace written as the registry's: refused.
	if err := a.createAs("", "21.T12345/SVC/SHB/R2", "https://example.org/cross"); !errors.Is(err, ErrCrossShard) {
		t.Errorf("write across shards: %v, want ErrCrossShard", err)
	}
	// An SNAA on a shard this node lacks: 503, nothing written.
	var ue *UnavailableError
	if err := a.createAs("snaa_x", "21.T12345/SVC/GONE/R1", "https://example.org/gone"); !errors.As(err, &ue) || !errors.Is(err, ErrUnknownShard) {
		t.Errorf("write to a missing shard: %v", err)
	}
	if etcdHas(t, cs[0], "21.T12345/SVC/GONE/R1") {
		t.Error("the missing shard's write went to the registry shard")
	}
}

// TestShardsAddedToACluster: a node of a one-etcd cluster restarted with
// that etcd as its first shard named default and a second shard keeps its
// copy and revision (the registry shard's is the one-etcd revision), loads
// the new shard, and writes of an SNAA on it go there.
func TestShardsAddedToACluster(t *testing.T) {
	opts := etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes}
	cs := []*etcdtest.Cluster{etcdtest.Start(t, 1, opts), etcdtest.Start(t, 1, opts)}
	path := filepath.Join(t.TempDir(), "a.db")
	open := func(shards []Shard) (*Node, *store.DB, func()) {
		db, err := store.Open(store.Config{Path: path, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		namer, _ := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
		reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{NodeName: "a", DB: db, Registry: reg}
		if len(shards) == 1 {
			cfg.Endpoints = shards[0].Endpoints
		} else {
			cfg.Shards = shards
		}
		n, err := Dial(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { n.Run(ctx); close(done) }()
		return n, db, func() { cancel(); <-done; n.Close(); db.Close() }
	}
	one := []Shard{{Name: DefaultShard, Endpoints: []string{cs[0].Endpoints()}}}
	n, db, stop := open(one)
	tn := &testNode{Node: n, db: db}
	if err := tn.createAs("", "21.T12345/SVC/OLD/R1", "https://example.org/old"); err != nil {
		t.Fatal(err)
	}
	before, _ := db.ShardRevision("")
	stop()

	two := append(one, Shard{Name: "new", Endpoints: []string{cs[1].Endpoints()}})
	n, db, stop = open(two)
	defer stop()
	tn = &testNode{Node: n, db: db}
	if u, _ := tn.url(t, "21.T12345/SVC/OLD/R1"); u != "https://example.org/old" {
		t.Fatalf("the one-etcd record after adding a shard: %q", u)
	}
	if r, _ := db.ShardRevision(""); r < before {
		t.Errorf("registry shard's revision %d, was %d", r, before)
	}
	if r, _ := db.ShardRevision("new"); r <= 0 {
		t.Errorf("new shard's revision %d", r)
	}
	if err := n.Update(func(tx registry.Tx) error {
		return tx.PutSNAA(&registry.SNAA{ID: "snaa_n", Namespace: "NEW", Shard: "new"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := tn.createAs("snaa_n", "21.T12345/SVC/NEW/R1", "https://example.org/new"); err != nil {
		t.Fatal(err)
	}
	if !etcdHas(t, cs[1], "21.T12345/SVC/NEW/R1") || etcdHas(t, cs[0], "21.T12345/SVC/NEW/R1") {
		t.Error("the new shard's SNAA wrote elsewhere")
	}
	if u, _ := tn.url(t, "21.T12345/SVC/NEW/R1"); u != "https://example.org/new" {
		t.Errorf("read-your-writes on the new shard: %q", u)
	}
}

// TestMoveNamespaceRefuses: MoveNamespace needs several shards, a
// namespace's SNAA, another shard than its own and one listed after it.
func TestMoveNamespaceRefuses(t *testing.T) {
	opts := etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes}
	cs := []*etcdtest.Cluster{etcdtest.Start(t, 1, opts), etcdtest.Start(t, 1, opts)}
	a := newShardNode(t, cs, "a", filepath.Join(t.TempDir(), "a.db"))
	if err := a.Update(func(tx registry.Tx) error {
		return tx.PutSNAA(&registry.SNAA{ID: "snaa_b", Namespace: "SHB", Shard: "s1"})
	}); err != nil {
		t.Fatal(err)
	}
	shards := []Shard{{Name: "s0", Endpoints: []string{cs[0].Endpoints()}}, {Name: "s1", Endpoints: []string{cs[1].Endpoints()}}}
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		shards   []Shard
		ns, to   string
		sentinel error
	}{
		{"one shard", shards[:1], "SHB", "s0", ErrConfig},
		{"unknown shard", shards, "SHB", "s9", ErrUnknownShard},
		{"no SNAA", shards, "NONE", "s1", ErrConfig},
		{"same shard", shards, "SHB", "s1", ErrConfig},
		{"earlier shard", shards, "SHB", "s0", ErrConfig},
	} {
		if _, err := MoveNamespace(ctx, Config{Shards: c.shards}, c.ns, c.to); !errors.Is(err, c.sentinel) {
			t.Errorf("%s: %v, want %v", c.name, err, c.sentinel)
		}
	}
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if r, err := cs[1].Client().Get(ctx2, movedKey(DefaultPrefix, "SHB")); err != nil || r.Count != 0 {
		t.Errorf("a refused move froze the namespace: %v %v", r, err)
	}
}
