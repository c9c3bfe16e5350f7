package cluster

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/internal/etcdtest"
)

// dialNamed dials a node named name on its own database, without starting
// it: registering the name needs only the connection.
func dialNamed(t *testing.T, c *etcdtest.Cluster, name string) *Node {
	t.Helper()
	db, reg := openTestDB(t)
	n, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: name, DB: db, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Deregister(); n.Close() })
	return n
}

// A node holds its name: another instance cannot take it, the same
// instance started again takes it over at once, a stop frees it at once,
// and a node whose lease is lost registers again.
func TestNodeNames(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	ctx := t.Context()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoints()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	holder := func() (string, clientv3.LeaseID) {
		t.Helper()
		r, err := cli.Get(ctx, DefaultPrefix+"nodes/a")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Kvs) == 0 {
			return "", 0
		}
		return string(r.Kvs[0].Value), clientv3.LeaseID(r.Kvs[0].Lease)
	}
	one := Instance{Host: "h1", Data: "/srv/a"}

	a := dialNamed(t, c, "a")
	if err := a.Register(ctx, one); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if v, lease := holder(); v != `{"host":"h1","data":"/srv/a"}` || lease == 0 {
		t.Fatalf("nodes/a = %q with lease %x", v, lease)
	}

	// Another instance under the same name: refused, naming the holder.
	other := dialNamed(t, c, "a")
	err = other.Register(ctx, Instance{Host: "h2", Data: "/srv/a"})
	var te *NameTakenError
	if !errors.As(err, &te) || !errors.Is(err, ErrNameTaken) || te.Holder != one {
		t.Fatalf("second instance: %v", err)
	}

	// The same instance again (as after a SIGKILL, the old lease still
	// alive): it takes the key over with its lease.
	_, oldLease := holder()
	again := dialNamed(t, c, "a")
	if err := again.Register(ctx, one); err != nil {
		t.Fatalf("the same instance again: %v", err)
	}
	if _, lease := holder(); lease == oldLease || lease == 0 {
		t.Errorf("after the takeover the key has lease %x, before %x", lease, oldLease)
	}

	// The lease lost (as after an etcd outage longer than NameTTL): the
	// node registers again by itself.
	again.names.mu.Lock()
	again.names.retry = 50 * time.Millisecond
	again.names.mu.Unlock()
	_, lease := holder()
	if _, err := cli.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if v, l := holder(); v != "" && l != lease {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the name was not registered again after its lease was revoked")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A stop frees the name at once: another instance may take it.
	again.Deregister()
	if v, _ := holder(); v != "" {
		t.Fatalf("after Deregister nodes/a = %q", v)
	}
	if err := other.Register(ctx, Instance{Host: "h2", Data: "/srv/a"}); err != nil {
		t.Fatalf("Register after the holder stopped: %v", err)
	}

	// The statistics' reserved name is refused.
	if err := dialNamed(t, c, SeedNodeName).Register(ctx, one); !errors.Is(err, ErrConfig) {
		t.Errorf("Register as %q: %v", SeedNodeName, err)
	}

	// Names are not data: a snapshot with a name in it loads, and the
	// watch applies a name's changes (writes, takeovers, the lease's end)
	// as revisions that change nothing.
	f := newTestNode(t, c, "f", filepath.Join(t.TempDir(), "f.db"))
	if err := f.Register(ctx, Instance{Host: "h1", Data: "/srv/f"}); err != nil {
		t.Fatal(err)
	}
	other.Deregister()
	r, err := cli.Get(ctx, DefaultPrefix+"probe")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitApplied(wctx, r.Header.Revision); err != nil {
		t.Fatalf("f did not apply revision %d: %v", r.Header.Revision, err)
	}
	var export bytes.Buffer
	if err := f.db.Export(&export); err != nil || export.Len() != 0 {
		t.Errorf("f's export after applying names only: %q, %v", export.Bytes(), err)
	}
	f.Deregister()
}

// A node that finds another instance holding its name when it registers
// again publishes no statistics, so as not to overwrite that node's totals.
func TestNameTakenPublishesNoStats(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	ctx := t.Context()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoints()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	a := newTestNode(t, c, "a", filepath.Join(t.TempDir(), "a.db"))
	b := newTestNode(t, c, "b", filepath.Join(t.TempDir(), "b.db"))
	b.names.retry = 50 * time.Millisecond
	if err := b.Register(ctx, Instance{Host: "h2", Data: "/srv/b"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Deregister)
	// While b is cut off, its lease expires and another instance takes the
	// name: the key is written with a lease of its own, then b's lease goes.
	r, err := cli.Get(ctx, DefaultPrefix+"nodes/b")
	if err != nil || len(r.Kvs) != 1 {
		t.Fatalf("nodes/b: %v %v", r, err)
	}
	g, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, DefaultPrefix+"nodes/b", `{"host":"h3","data":"/srv/b"}`, clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(r.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !b.nameTaken() {
		if time.Now().After(deadline) {
			t.Fatal("b did not notice that another node holds its name")
		}
		time.Sleep(20 * time.Millisecond)
	}
	key := []byte("i" + fk("P") + "\x0020250301")
	b.PublishStats([][]byte{key}, []uint64{1})
	a.PublishStats([][]byte{key}, []uint64{5})
	var got uint64
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := a.StatsDays(ctx, false, fk("P"), day, day, func(_ string, n uint64) { got = n }); err != nil || got != 5 {
		t.Errorf("total = %d, %v; want a's 5 alone", got, err)
	}
	// Once the name is free, b holds it again and publishes.
	if _, err := cli.Revoke(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	for b.nameTaken() {
		if time.Now().After(deadline) {
			t.Fatal("b did not register again once its name was free")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.PublishStats([][]byte{key}, []uint64{1})
	if err := a.StatsDays(ctx, false, fk("P"), day, day, func(_ string, n uint64) { got = n }); err != nil || got != 6 {
		t.Errorf("total = %d, %v; want 6", got, err)
	}
}
