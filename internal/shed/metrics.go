package shed

import "pidnode/internal/promtext"

// AppendMetrics appends the listener families (docs/architecture.md practice
// 13) for b (nil: none) and ls: connections held, connections refused at
// accept by reason, accept errors retried, and the budget's limits.
func AppendMetrics(dst []byte, b *Budget, ls ...*Listener) []byte {
	const (
		held    = "pidnode_listener_connections"
		refused = "pidnode_listener_refused_total"
		retries = "pidnode_listener_accept_retries_total"
	)
	stats := make([]Stats, len(ls))
	for i, l := range ls {
		stats[i] = l.Stats()
	}
	dst = promtext.Header(dst, held, promtext.Gauge, "TCP connections open now, by listener.")
	for i, l := range ls {
		dst = promtext.Int(dst, held, int64(stats[i].Held), promtext.L("listener", l.Name()))
	}
	dst = promtext.Header(dst, refused, promtext.Counter, "TCP connections closed at accept, by listener and reason (budget, listener_full, per_source, heavy_source, descriptors).")
	for i, l := range ls {
		for r := Reason(0); r < numReasons; r++ {
			dst = promtext.Uint(dst, refused, stats[i].Refused[r], promtext.L("listener", l.Name()), promtext.L("reason", r.String()))
		}
	}
	dst = promtext.Header(dst, retries, promtext.Counter, "Temporary accept errors (out of descriptors or buffers, aborted connections) retried after a pause, by listener.")
	for i, l := range ls {
		dst = promtext.Uint(dst, retries, stats[i].Retries, promtext.L("listener", l.Name()))
	}
	if b != nil {
		dst = promtext.GaugeFamily(dst, "pidnode_listener_budget_connections", "Connections all listeners together may hold (from the descriptor limit).", int64(b.Limit()))
		dst = promtext.GaugeFamily(dst, "pidnode_listener_budget_reserved_connections", "Of the budget, connections only the admin listener may take.", int64(b.Reserve()))
		dst = promtext.GaugeFamily(dst, "pidnode_listener_budget_held_connections", "Connections held now against the budget.", int64(b.Held()))
	}
	return dst
}
