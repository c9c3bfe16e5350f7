package console

import (
	"fmt"
	"strconv"
	"time"

	"pidnode/stats"
)

// The bar chart of resolutions per day (an identifier's, a namespace's):
// SVG drawn on the server, with a scale on the left (0, the middle and the
// top, a round number at or above the busiest day) and the range's first
// and last day below. The table of the numbers goes with it on the page.

// chart is the SVG bar chart of resolutions per day.
type chart struct {
	Days       []stats.DayCount
	Bars       []bar
	Ticks      []tick
	Total, Max uint64
	// Top is the scale's top value, a round number at or above Max.
	Top      uint64
	From, To string
}

type bar struct {
	X, Y, W, H string
	Label      string
}

// tick is one line of the scale: at height Y, labelled Label.
type tick struct {
	Y     string
	Label string
}

// The chart's plot area inside its viewBox (0 -8 640 178, room above for
// the top label): the scale's labels left of chartLeft, the day labels
// below chartHeight.
const chartLeft, chartWidth, chartHeight = 40.0, 600.0, 150.0

// niceTop is the smallest of 1, 2, 5 × 10^k (k ≥ 0) at or above n, the top
// of a scale a person reads at a glance; at least 2, so that the middle
// tick is a whole number.
func niceTop(n uint64) uint64 {
	for p := uint64(1); ; p *= 10 {
		for _, m := range []uint64{1, 2, 5} {
			if t := m * p; t >= n && t >= 2 {
				return t
			}
		}
		if p > 1e17 {
			return n
		}
	}
}

func newChart(st *stats.Reply) *chart {
	c := &chart{Total: st.Total, From: st.From, To: st.To}
	// Every day of the range, those without resolutions too.
	counts := map[string]uint64{}
	for _, d := range st.Days {
		counts[d.Date] = d.Count
	}
	from, ferr := time.Parse(time.DateOnly, st.From)
	to, terr := time.Parse(time.DateOnly, st.To)
	if ferr == nil && terr == nil && !to.Before(from) && to.Sub(from) <= 400*24*time.Hour {
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			k := d.Format(time.DateOnly)
			c.Days = append(c.Days, stats.DayCount{Date: k, Count: counts[k]})
		}
	} else {
		c.Days = st.Days
	}
	for _, d := range c.Days {
		c.Max = max(c.Max, d.Count)
	}
	c.Top = niceTop(c.Max)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for _, v := range []uint64{0, c.Top / 2, c.Top} {
		c.Ticks = append(c.Ticks, tick{Y: f(chartHeight - chartHeight*float64(v)/float64(c.Top)), Label: strconv.FormatUint(v, 10)})
	}
	n := len(c.Days)
	if n == 0 {
		return c
	}
	w := chartWidth / float64(n)
	for i, d := range c.Days {
		h := chartHeight * float64(d.Count) / float64(c.Top)
		if d.Count > 0 && h < 1 {
			h = 1
		}
		c.Bars = append(c.Bars, bar{X: f(chartLeft + float64(i)*w + 1), Y: f(chartHeight - h), W: f(max(w-2, 1)), H: f(h), Label: fmt.Sprintf("%s: %d", d.Date, d.Count)})
	}
	return c
}
