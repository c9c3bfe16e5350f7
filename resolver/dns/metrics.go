package hdldns

import (
	"bufio"
	"io"
	"strconv"
)

// WriteMetrics writes the DNS front's counters in the Prometheus text format
// (STYLE practice 13): names pidnode_dns_*, labels from fixed sets only, never
// a name or a handle. cmd/pidnode hands it to the admin listener's /metrics.
// It is safe to call concurrently with serving.
func (s *Server) WriteMetrics(w io.Writer) error {
	st := s.Stats()
	b := bufio.NewWriter(w)
	counter := func(name, help string, v uint64) {
		b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n")
		b.WriteString(name + " " + strconv.FormatUint(v, 10) + "\n")
	}
	counter("pidnode_dns_queries_total", "DNS requests handed to the handler (UDP and TCP), including those rate limiting dropped.", st.Queries)
	const resp = "pidnode_dns_responses_total"
	b.WriteString("# HELP " + resp + " DNS responses by result (before truncation).\n# TYPE " + resp + " counter\n")
	for _, r := range []struct {
		label string
		v     uint64
	}{
		{"answer", st.NoError}, {"nodata", st.NoData}, {"nxdomain", st.NXDomain},
		{"refused", st.Refused}, {"servfail", st.ServFail}, {"other", st.Other},
	} {
		b.WriteString(resp + `{result="` + r.label + `"} ` + strconv.FormatUint(r.v, 10) + "\n")
	}
	counter("pidnode_dns_truncated_total", "UDP responses sent with TC set because the answer did not fit.", st.Truncated)
	counter("pidnode_dns_rrl_dropped_total", "UDP responses dropped by response-rate limiting.", st.RRLDropped)
	counter("pidnode_dns_rrl_slipped_total", "UDP responses replaced by a minimal TC=1 reply by response-rate limiting.", st.RRLSlipped)
	if s.rrl != nil {
		const g = "pidnode_dns_rrl_sources"
		b.WriteString("# HELP " + g + " Source prefixes the rate limiter tracks now.\n# TYPE " + g + " gauge\n")
		b.WriteString(g + " " + strconv.Itoa(s.rrl.len()) + "\n")
	}
	return b.Flush()
}
