package console

import (
	"testing"

	"pidnode/stats"
)

func TestChartFillsEveryDay(t *testing.T) {
	c := newChart(&stats.Reply{From: "2025-01-01", To: "2025-01-30", Total: 5, Days: []stats.DayCount{{Date: "2025-01-03", Count: 4}, {Date: "2025-01-30", Count: 1}}})
	if len(c.Bars) != 30 || c.Max != 4 || c.Top != 5 {
		t.Fatalf("%d bars, max %d, top %d", len(c.Bars), c.Max, c.Top)
	}
	if c.Bars[2].H != "120.0" || c.Bars[0].H != "0.0" || c.Bars[29].H != "30.0" {
		t.Fatalf("bars %+v %+v %+v", c.Bars[0], c.Bars[2], c.Bars[29])
	}
	if len(c.Ticks) != 3 || c.Ticks[0] != (tick{Y: "150.0", Label: "0"}) || c.Ticks[2] != (tick{Y: "0.0", Label: "5"}) {
		t.Fatalf("scale %+v", c.Ticks)
	}
}

func TestNiceTop(t *testing.T) {
	for _, tt := range []struct{ n, want uint64 }{{0, 2}, {1, 2}, {2, 2}, {3, 5}, {7, 10}, {11, 20}, {99, 100}, {101, 200}, {4999, 5000}} {
		if got := niceTop(tt.n); got != tt.want {
			t.Errorf("niceTop(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}
