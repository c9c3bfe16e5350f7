package hdl_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetrics reads AppendMetrics's output with the Prometheus text parser
// and checks the resolutions EachResolution gives after real requests.
func TestMetrics(t *testing.T) {
	n := startNode(t, nil, records()...)
	for _, h := range []string{"20.500.1/SMALL", "20.500.1/NOPE"} {
		if _, err := n.client(false).Resolve(context.Background(), h, nil, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	b := n.srv.AppendMetrics(nil)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, b)
	}
	for _, name := range []string{"pidnode_hdl_too_busy_total", "pidnode_hdl_signed_waits_total",
		"pidnode_hdl_tcp_refused_total", "pidnode_hdl_tcp_connections"} {
		if fams[name] == nil {
			t.Errorf("metrics lack %s:\n%s", name, b)
		}
	}
	if len(fams) != 4 {
		t.Errorf("%d families, want 4", len(fams))
	}
	got := map[string]uint64{}
	n.srv.EachResolution(func(kind, result string, v uint64) {
		if kind != "hdl" {
			t.Errorf("EachResolution kind %q, want hdl", kind)
		}
		got[result] = v
	})
	if want := map[string]uint64{"answered": 2, "error": 0, "dropped": 0}; len(got) != len(want) ||
		got["answered"] != want["answered"] || got["error"] != 0 || got["dropped"] != 0 {
		t.Errorf("resolutions = %v, want %v", got, want)
	}
}
