package webhook_test

import (
	"path/filepath"
	"testing"
	"time"

	"pidnode/webhook"
)

// BenchmarkDeliver measures deliveries to a loopback receiver: b.N events
// already in the feed (written before the timer starts), delivered one per
// request (single) or up to 100 per request (batched), each acknowledged
// by a cursor write (fsync off). Reports events/s and requests/s.
func BenchmarkDeliver(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch int
	}{{"single", 1}, {"batched", 0}} {
		b.Run(c.name, func(b *testing.B) {
			n := startNode(b, filepath.Join(b.TempDir(), "p.db"), webhook.Config{Allow: loopback, MaxBatch: c.batch, Rescan: 10 * time.Millisecond})
			n.onboard()
			for i := 0; i < b.N; i++ {
				n.create(i)
			}
			rc := newReceiver(b, func(int) int { return 204 })
			b.ResetTimer()
			start := time.Now()
			var hook struct{ ID string }
			n.must(201, "POST", n.coll()+"webhooks", n.key, map[string]any{"url": rc.srv.URL, "after": 0}, &hook)
			waitFor(b, "every event", func() bool { return len(rc.acked()) >= b.N })
			el := time.Since(start).Seconds()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el, "events/s")
			b.ReportMetric(float64(len(rc.deliveries()))/el, "requests/s")
		})
	}
}
