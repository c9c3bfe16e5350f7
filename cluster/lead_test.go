package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/internal/etcdtest"
)

// One node at a time runs the cluster's jobs; when the leader stops, or
// loses its lease, another takes over.
func TestLeadOneAtATime(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	var (
		running atomic.Int32
		mu      sync.Mutex
		leaders []string
		both    atomic.Bool
	)
	job := func(name string) func(ctx context.Context) {
		return func(ctx context.Context) {
			if running.Add(1) > 1 {
				both.Store(true)
			}
			mu.Lock()
			leaders = append(leaders, name)
			mu.Unlock()
			<-ctx.Done()
			running.Add(-1)
		}
	}
	last := func() (string, int) {
		mu.Lock()
		defer mu.Unlock()
		if len(leaders) == 0 {
			return "", 0
		}
		return leaders[len(leaders)-1], len(leaders)
	}
	nodes := map[string]*Node{}
	stops := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		n := dialNamed(t, c, name)
		nodes[name] = n
		ctx, cancel := context.WithCancel(context.Background())
		stops[name] = cancel
		wg.Add(1)
		go func() { defer wg.Done(); n.Lead(ctx, "jobs", job(name)) }()
	}
	t.Cleanup(func() {
		for _, s := range stops {
			s()
		}
		wg.Wait()
	})
	waitFor(t, func() bool { _, k := last(); return k == 1 })
	first, _ := last()
	time.Sleep(300 * time.Millisecond)
	if _, k := last(); k != 1 || running.Load() != 1 {
		t.Fatalf("after the first election: %d leaders so far, %d running; want 1 and 1", k, running.Load())
	}
	other := map[string]string{"a": "b", "b": "a"}[first]

	// The leader loses its lease (as when etcd stops hearing from it): its
	// job ends and the other node's starts.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoints()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	r, err := cli.Get(ctx, DefaultPrefix+"elect/jobs/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != first {
		t.Fatalf("leader key: %v %v, want one held by %s", r, err, first)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(r.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	// A lost lease is noticed at the next keep-alive (within a third of the
	// TTL), so the two may overlap briefly (Lead's contract); then only the
	// new leader runs.
	waitFor(t, func() bool { l, k := last(); return k == 2 && l == other })
	waitFor(t, func() bool { return running.Load() == 1 && nodes[first].leading.Load() == 0 })

	// The new leader stops: the first campaigned again and takes over,
	// with no overlap (a leader that stops resigns before it returns).
	both.Store(false)
	stops[other]()
	waitFor(t, func() bool { l, k := last(); return k == 3 && l == first })
	if both.Load() {
		t.Error("two nodes ran the jobs at once after a leader stopped")
	}
}
