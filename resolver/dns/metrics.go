package hdldns

import (
	"io"

	"pidnode/internal/promtext"
)

// AppendMetrics appends the DNS front's counters in the Prometheus text format
// (docs/architecture.md practice 13): names pidnode_dns_*, labels from fixed
// sets only, never a name or a handle. cmd/pidnode adds them to the admin
// listener's /metrics, after the resolutions (EachResolution). It is safe to call concurrently with serving.
func (s *Server) AppendMetrics(b []byte) []byte {
	st := s.Stats()
	b = promtext.CounterFamily(b, "pidnode_dns_queries_total", "DNS requests handed to the handler (UDP and TCP), including those rate limiting dropped.", st.Queries)
	const resp = "pidnode_dns_responses_total"
	b = promtext.Header(b, resp, promtext.Counter, "DNS responses by result (before truncation).")
	for _, r := range []struct {
		label string
		v     uint64
	}{
		{"answer", st.NoError}, {"nodata", st.NoData}, {"nxdomain", st.NXDomain},
		{"refused", st.Refused}, {"servfail", st.ServFail}, {"other", st.Other},
	} {
		b = promtext.Uint(b, resp, r.v, promtext.L("result", r.label))
	}
	b = promtext.CounterFamily(b, "pidnode_dns_truncated_total", "UDP responses sent with TC set because the answer did not fit.", st.Truncated)
	b = promtext.CounterFamily(b, "pidnode_dns_rrl_dropped_total", "UDP responses dropped by response-rate limiting.", st.RRLDropped)
	b = promtext.CounterFamily(b, "pidnode_dns_rrl_slipped_total", "UDP responses replaced by a minimal TC=1 reply by response-rate limiting.", st.RRLSlipped)
	b = promtext.CounterFamily(b, "pidnode_dns_tcp_refused_total", "TCP connections closed at accept by the connection limits (total, per source).", st.TCPRefused)
	b = promtext.GaugeFamily(b, "pidnode_dns_tcp_connections", "TCP connections open now.", int64(st.TCPConns))
	b = promtext.GaugeFamily(b, "pidnode_dns_memo_bytes", "Bytes the memo of parsed DNS.* values holds (bounded by Config.MemoBytes).", s.memo.bytes.Load())
	if s.rrl != nil {
		b = promtext.GaugeFamily(b, "pidnode_dns_rrl_sources", "Source prefixes the rate limiter tracks now.", int64(s.rrl.len()))
	}
	return b
}

// EachResolution calls f with the DNS front's counters of
// pidnode_resolver_resolutions_total (kind dns) for resolver.AppendResolutions,
// whose results are named as the HTTP front's.
func (s *Server) EachResolution(f func(kind, result string, n uint64)) {
	st := s.Stats()
	for _, r := range []struct {
		result string
		n      uint64
	}{{"found", st.NoError}, {"nodata", st.NoData}, {"not_found", st.NXDomain}, {"refused", st.Refused},
		{"error", st.ServFail}, {"bad_request", st.Other}} {
		f("dns", r.result, r.n)
	}
}

// WriteMetrics writes AppendMetrics's text to w.
func (s *Server) WriteMetrics(w io.Writer) error {
	_, err := w.Write(s.AppendMetrics(make([]byte, 0, 2048)))
	return err
}
