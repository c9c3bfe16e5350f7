package hdldns_test

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	hdldns "pidnode/resolver/dns"
)

// TestMetricsParse reads the whole of WriteMetrics's output with the
// Prometheus text parser and checks the families and their counts.
func TestMetricsParse(t *testing.T) {
	f := newFixture(t, func(c *hdldns.Config) { c.RRLRate = 1000 })
	loadAnswerData(t, f)
	f.exchange(t, "udp", query(nameRef, dns.TypeTXT, 0))
	f.exchange(t, "udp", query("www.example.com.", dns.TypeA, 0))
	var b bytes.Buffer
	if err := f.srv.WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, b.Bytes())
	}
	for _, name := range []string{"pidnode_dns_queries_total", "pidnode_dns_responses_total", "pidnode_dns_truncated_total",
		"pidnode_dns_rrl_dropped_total", "pidnode_dns_rrl_slipped_total", "pidnode_dns_rrl_sources",
		"pidnode_dns_tcp_refused_total", "pidnode_dns_tcp_connections", "pidnode_dns_memo_bytes"} {
		if fams[name] == nil {
			t.Errorf("metrics lack %s:\n%s", name, b.Bytes())
		}
	}
	if len(fams) != 9 {
		t.Errorf("%d families, want 9", len(fams))
	}
	if q := fams["pidnode_dns_queries_total"].GetMetric()[0].GetCounter().GetValue(); q != 2 {
		t.Errorf("queries_total = %v, want 2", q)
	}
	results := map[string]float64{}
	for _, m := range fams["pidnode_dns_responses_total"].GetMetric() {
		results[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	want := map[string]float64{"answer": 1, "nodata": 0, "nxdomain": 0, "refused": 1, "servfail": 0, "other": 0}
	for k, v := range want {
		if got, ok := results[k]; !ok || got != v {
			t.Errorf("responses_total{result=%q} = %v (present %v), want %v", k, got, ok, v)
		}
	}
}
