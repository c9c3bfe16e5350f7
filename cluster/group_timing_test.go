package cluster

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"pidnode/internal/etcdtest"
)

// BenchmarkCreates measures concurrent creates through one node: each
// goroutine of b.RunParallel creates records with an audit entry.
func BenchmarkCreates(b *testing.B) {
	c := etcdtest.Start(b, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	n := newBenchNode(b, c)
	var mu sync.Mutex
	seq := 0
	b.SetParallelism(16)
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
