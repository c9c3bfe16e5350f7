package promtext

import (
	"bytes"
	"math"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"header", Header(nil, "pidnode_x_total", Counter, "Things counted."),
			"# HELP pidnode_x_total Things counted.\n# TYPE pidnode_x_total counter\n"},
		{"help escapes backslash and newline, not quotes", Header(nil, "m", Gauge, "a\\b\nc \"q\""),
			"# HELP m a\\\\b\\nc \"q\"\n# TYPE m gauge\n"},
		{"uint no labels", Uint(nil, "m", 42), "m 42\n"},
		{"uint max", Uint(nil, "m", math.MaxUint64), "m 18446744073709551615\n"},
		{"int negative", Int(nil, "m", -3), "m -3\n"},
		{"one label", Uint(nil, "m", 1, L("op", "create")), "m{op=\"create\"} 1\n"},
		{"two labels", Uint(nil, "m", 7, L("route", "GET /x/{id...}"), L("status", "404")),
			"m{route=\"GET /x/{id...}\",status=\"404\"} 7\n"},
		{"label escapes", Uint(nil, "m", 0, L("v", "a\\b\"c\nd")), "m{v=\"a\\\\b\\\"c\\nd\"} 0\n"},
		{"label utf-8 kept", Uint(nil, "m", 0, L("v", "é→")), "m{v=\"é→\"} 0\n"},
		{"label invalid utf-8", Uint(nil, "m", 0, L("v", "a\xffb")), "m{v=\"a\uFFFDb\"} 0\n"},
		{"empty label value", Uint(nil, "m", 0, L("v", "")), "m{v=\"\"} 0\n"},
		{"float", Float(nil, "m", 0.0025), "m 0.0025\n"},
		{"float small", Float(nil, "m", 1.0456e-05), "m 1.0456e-05\n"},
		{"float integral", Float(nil, "m", 10), "m 10\n"},
		{"float +Inf", Float(nil, "m", math.Inf(1), L("le", "+Inf")), "m{le=\"+Inf\"} +Inf\n"},
		{"float -Inf", Float(nil, "m", math.Inf(-1)), "m -Inf\n"},
		{"float NaN", Float(nil, "m", math.NaN()), "m NaN\n"},
		{"counter family", CounterFamily(nil, "c_total", "C.", 3), "# HELP c_total C.\n# TYPE c_total counter\nc_total 3\n"},
		{"gauge family", GaugeFamily(nil, "g", "G.", -1), "# HELP g G.\n# TYPE g gauge\ng -1\n"},
		{"appends", Uint([]byte("x\n"), "m", 1), "x\nm 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestParses feeds awkward help texts and label values through the Prometheus
// text parser and checks they come back as written.
func TestParses(t *testing.T) {
	values := []string{"", "plain", "back\\slash", "quo\"te", "new\nline", "tab\there", "é", "\\n literal", "{},=\""}
	var b []byte
	b = Header(b, "pidnode_test_total", Counter, "Help with \\ and\nnewline.")
	for i, v := range values {
		b = Uint(b, "pidnode_test_total", uint64(i), L("v", v), L("i", string(rune('a'+i))))
	}
	b = Header(b, "pidnode_test_seconds", Histogram, "A histogram.")
	b = Uint(b, "pidnode_test_seconds_bucket", 1, L("le", "0.5"))
	b = Uint(b, "pidnode_test_seconds_bucket", 2, L("le", "+Inf"))
	b = Float(b, "pidnode_test_seconds_sum", 0.75)
	b = Uint(b, "pidnode_test_seconds_count", 2)
	b = GaugeFamily(b, "pidnode_test_gauge", "G.", -5)

	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, b)
	}
	c := fams["pidnode_test_total"]
	if c.GetHelp() != "Help with \\ and\nnewline." {
		t.Errorf("help = %q", c.GetHelp())
	}
	if len(c.GetMetric()) != len(values) {
		t.Fatalf("%d samples, want %d", len(c.GetMetric()), len(values))
	}
	for _, m := range c.GetMetric() {
		var v string
		var i int
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "v":
				v = l.GetValue()
			case "i":
				i = int(l.GetValue()[0] - 'a')
			}
		}
		if v != values[i] {
			t.Errorf("label v of sample %d = %q, want %q", i, v, values[i])
		}
		if got := m.GetCounter().GetValue(); got != float64(i) {
			t.Errorf("sample %d value %v", i, got)
		}
	}
	h := fams["pidnode_test_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 0.75 || len(h.GetBucket()) != 2 {
		t.Errorf("histogram = %v", h)
	}
	if g := fams["pidnode_test_gauge"].GetMetric()[0].GetGauge().GetValue(); g != -5 {
		t.Errorf("gauge = %v", g)
	}
}

func TestNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	route := "GET /x"
	n := testing.AllocsPerRun(100, func() {
		b := Header(buf[:0], "pidnode_x_total", Counter, "Help\n.")
		b = Uint(b, "pidnode_x_total", 1, L("route", route), L("status", "200"))
		b = Float(b, "pidnode_x_seconds", 0.5, L("le", "+Inf"))
		b = GaugeFamily(b, "pidnode_g", "G.", 3)
		_ = b
	})
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
