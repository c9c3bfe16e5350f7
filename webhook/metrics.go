package webhook

import (
	"time"

	"pidnode/internal/outbound"
	"pidnode/internal/promtext"
	"pidnode/registry"
)

// Results of deliveries (pidnode_webhook_deliveries_total's label): a 2xx,
// another status, or the class of the failure (outbound.Classify).
const (
	resultSuccess = "success"
	resultStatus  = "http_error"
)

var results = []string{resultSuccess, resultStatus, outbound.ClassDNS, outbound.ClassConnect, outbound.ClassTLS,
	outbound.ClassTimeout, outbound.ClassDenied, outbound.ClassRedirects, outbound.ClassScheme, outbound.ClassOther}

func (e *Engine) count(result string) {
	c := e.results[result]
	if c == nil {
		c = e.results[outbound.ClassOther]
	}
	c.Add(1)
}

// AppendMetrics appends the engine's Prometheus families: deliveries by
// result (this node's), endpoints by state (read from the database, so
// every node of a cluster shows them), and the events waiting for
// acknowledgement and the age of the oldest (on the node that delivers).
func (e *Engine) AppendMetrics(b []byte) []byte {
	const dn = "pidnode_webhook_deliveries_total"
	b = promtext.Header(b, dn, promtext.Counter, "Webhook delivery attempts by result: success (2xx), http_error (another status), or the connection's failure class.")
	for _, r := range results {
		b = promtext.Uint(b, dn, e.results[r].Load(), promtext.L("result", r))
	}
	var active, failing, disabled int64
	e.reg.View(func(tx registry.Tx) error {
		all, err := endpoints(tx.Tx, "")
		for _, w := range all {
			switch {
			case w.State == Disabled:
				disabled++
			case w.Failures > 0:
				failing++
			default:
				active++
			}
		}
		return err
	})
	const en = "pidnode_webhook_endpoints"
	b = promtext.Header(b, en, promtext.Gauge, "Webhook endpoints by state: active, failing (active, last attempt failed), disabled.")
	b = promtext.Int(b, en, active, promtext.L("state", "active"))
	b = promtext.Int(b, en, failing, promtext.L("state", "failing"))
	b = promtext.Int(b, en, disabled, promtext.L("state", "disabled"))
	var pending, oldest int64
	e.mu.Lock()
	for _, w := range e.workers {
		pending += w.pending.Load()
		if o := w.oldest.Load(); o != 0 && (oldest == 0 || o < oldest) {
			oldest = o
		}
	}
	e.mu.Unlock()
	b = promtext.GaugeFamily(b, "pidnode_webhook_pending_events", "Events of the batches being delivered or retried, not yet acknowledged (at most one batch per endpoint).", pending)
	age := 0.0
	if oldest != 0 {
		age = max(0, e.now().Sub(time.Unix(0, oldest)).Seconds())
	}
	const an = "pidnode_webhook_oldest_pending_seconds"
	b = promtext.Header(b, an, promtext.Gauge, "Age of the oldest event not yet acknowledged by its endpoint (0: none).")
	return promtext.Float(b, an, age)
}
