package hdl

import "pidnode/internal/promtext"

// AppendMetrics appends the native front's families (pidnode_hdl_*,
// docs/architecture.md practice 13) to b; its resolutions are in
// pidnode_resolver_resolutions_total (EachResolution). It is safe to call
// concurrently with serving.
func (s *Server) AppendMetrics(b []byte) []byte {
	st := s.Stats()
	b = promtext.CounterFamily(b, "pidnode_hdl_too_busy_total", "Certified native requests answered RC 3 by the per-source signed-reply limit (their turn was more than the wait away).", st.TooBusy)
	b = promtext.CounterFamily(b, "pidnode_hdl_signed_waits_total", "Waits of certified native requests for their turn under the per-source signed-reply limit.", st.SignedWaits)
	b = promtext.CounterFamily(b, "pidnode_hdl_tcp_refused_total", "Native-protocol TCP connections closed at accept by the connection limits (total, per source).", st.ConnsRefused)
	b = promtext.GaugeFamily(b, "pidnode_hdl_tcp_connections", "Native-protocol TCP connections open now.", int64(st.Conns))
	return b
}

// EachResolution calls f with the native front's counters of
// pidnode_resolver_resolutions_total (kind hdl) for resolver.AppendResolutions:
// requests answered without an internal error, answered RC 2, dropped.
func (s *Server) EachResolution(f func(kind, result string, n uint64)) {
	st := s.Stats()
	f("hdl", "answered", st.Requests-min(st.Requests, st.Errors))
	f("hdl", "error", st.Errors)
	f("hdl", "dropped", st.Dropped)
}
