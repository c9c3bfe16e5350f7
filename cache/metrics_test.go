package cache

import (
	"bytes"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"pidnode/handlev"
)

// TestAppendMetrics reads AppendMetrics's output with the Prometheus text
// parser after a hit and a miss, and checks the budgets it reports.
func TestAppendMetrics(t *testing.T) {
	src := newSource()
	src.put("21.T11148/SVC/TBR1/2345", record("21.T11148/SVC/TBR1/2345", "https://example.org/a", handlev.StatusRegistered))
	for _, tt := range []struct {
		name       string
		cfg        Config
		wantBudget float64
	}{
		{"memory budget given", Config{Source: src, Bytes: 1 << 20, MemoryBudget: 4 << 20}, 4 << 20},
		{"memory budget zero", Config{Source: src, Bytes: 1 << 20}, 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			mustGet(t, c, "21.T11148/SVC/TBR1/2345")
			mustGet(t, c, "21.T11148/SVC/TBR1/2345")
			b := c.AppendMetrics(nil)
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("metrics do not parse: %v\n%s", err, b)
			}
			if len(fams) != 8 {
				t.Errorf("%d families, want 8:\n%s", len(fams), b)
			}
			value := func(name string) float64 {
				f := fams[name]
				if f == nil {
					t.Fatalf("metrics lack %s:\n%s", name, b)
				}
				m := f.GetMetric()[0]
				if g := m.GetGauge(); g != nil {
					return g.GetValue()
				}
				return m.GetCounter().GetValue()
			}
			for name, want := range map[string]float64{"pidnode_cache_hits_total": 1, "pidnode_cache_misses_total": 1,
				"pidnode_cache_entries": 1, "pidnode_cache_budget_bytes": tt.wantBudget, "pidnode_cache_entries_limit_bytes": 1 << 20} {
				if got := value(name); got != want {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			if n := len(fams["pidnode_cache_evictions_total"].GetMetric()); n != 4 {
				t.Errorf("evictions_total has %d causes, want 4", n)
			}
		})
	}
}
