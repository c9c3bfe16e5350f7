package cluster

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

// BenchmarkCreates measures concurrent creates through one node: each
// goroutine of b.RunParallel creates records with an audit entry.
func BenchmarkCreates(b *testing.B) {
	c := etcdtest.Start(b, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	n := newBenchNode(b, c)
	var mu sync.Mutex
	seq := 0
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			seq++
			k := fmt.Sprintf("21.12345/B%d", seq)
			mu.Unlock()
			if err := n.create(k, "https://example.org/b"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n.conflicts.Load())/float64(b.N), "conflicts/op")
	b.ReportMetric(float64(n.txns.Load())/float64(b.N), "txns/op")
}

func newBenchNode(b *testing.B, c *etcdtest.Cluster) *testNode {
	return newTestNodeTB(b, c, "bench", filepath.Join(b.TempDir(), "b.db"))
}

// BenchmarkCatchUp measures a new node's snapshot load: b.N records seeded
// into etcd, then the time a node on an empty database takes to load them
// (records/s reported).
func BenchmarkCatchUp(b *testing.B) {
	c := etcdtest.Start(b, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	db, reg := openTestDB(b)
	err := reg.Update(func(tx registry.Tx) error {
		for i := 0; i < b.N; i++ {
			k := fk(fmt.Sprintf("C%08d", i))
			st := store.Stored{Version: 1, Record: handlev.Record{Handle: k, Values: []handlev.Value{
				{Index: 1, Type: "URL", Data: []byte("https://example.org/catch-up/" + k)}}}}
			if err := tx.PutRecord(k, &st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	s, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "seed", DB: db, Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Seed(b.Context()); err != nil {
		b.Fatal(err)
	}
	st, err := s.cli.Status(b.Context(), c.Members()[0].Endpoint())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	n := newTestNodeTB(b, c, "fresh", filepath.Join(b.TempDir(), "fresh.db"))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	// etcd's file in use per record (page overhead included; the record's
	// own value here is ~150 bytes).
	b.ReportMetric(float64(st.DbSizeInUse)/float64(b.N), "etcd-bytes/record")
	if n.Applied() == 0 {
		b.Fatal("nothing applied")
	}
}
