package console

import (
	"testing"

	"pidnode/stats"
)

func TestChartFillsEveryDay(t *testing.T) {
	c := newChart(&stats.Reply{From: "2025-01-01", To: "2025-01-30", Total: 5, Days: []stats.DayCount{{Date: "2025-01-03", Count: 4}, {Date: "2025-01-30", Count: 1}}})
	if len(c.Bars) != 30 || c.Max != 4 {
		t.Fatalf("%d bars, max %d", len(c.Bars), c.Max)
	}
	if c.Bars[2].H != "150.0" || c.Bars[0].H != "0.0" || c.Bars[29].H != "37.5" {
		t.Fatalf("bars %+v %+v %+v", c.Bars[0], c.Bars[2], c.Bars[29])
	}
}
