package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteFiles renders r into the markdown file md and the SVG beside it (the
// same name ending in .svg).
func WriteFiles(r *Results, md string) error {
	svgName := strings.TrimSuffix(filepath.Base(md), ".md") + ".svg"
	if err := os.MkdirAll(filepath.Dir(md), 0o755); err != nil {
		return err
	}
	f, err := os.Create(md)
	if err != nil {
		return err
	}
	Markdown(f, r, svgName)
	if err := f.Close(); err != nil {
		return err
	}
	s, err := os.Create(filepath.Join(filepath.Dir(md), svgName))
	if err != nil {
		return err
	}
	SVG(s, r.Title, r.Bars)
	return s.Close()
}

// responsesIntro explains the like-for-like check's tables.
const responsesIntro = "Before the rounds, one response per scenario from every server, over a raw HTTP/1.1 connection with wrk's request line and Host. " +
	"A like-for-like baseline's ratio is reported only if its status, its header set (names and how often each occurs, without Date, Server, Connection and Content-Length) " +
	"and every value (its own base URL set aside; Expires: the same length) are pidnode's, and its total size is within 5 % of pidnode's; " +
	"otherwise its row reads n/a with the reason. The minimal servers (each one's plainest 302) are there for reference. " +
	"The native-protocol baseline replays pidnode's own reply bytes, captured before the rounds; its table compares them over the same requests.\n\n"

// Markdown writes the whole report; svgName is the chart's file name, linked
// under the table.
func Markdown(w io.Writer, r *Results, svgName string) {
	writeTable(w, r.Title, r.Setup, r.Rows, svgName)
	if len(r.Responses) > 0 {
		fmt.Fprintf(w, "## Responses compared (like-for-like check)\n\n%s%s", responsesIntro, strings.Join(r.Responses, ""))
	}
	writeMemory(w, r.Memory)
	writeHitRatios(w, r.HitRatio, r.DataBytes)
	if len(r.Profiles) > 0 {
		fmt.Fprintf(w, "## Where the server's CPU goes (perf, flat profile of a separate run)\n\n")
		for _, p := range r.Profiles {
			fmt.Fprintf(w, "### %s\n\n```\n%s\n```\n\n", p.Label, strings.TrimRight(p.Top, "\n"))
		}
	}
}

// fmtNum prints a figure with sensible precision and thousands separators.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		s := strconv.FormatInt(int64(math.Round(v)), 10)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		if neg {
			return "-" + b.String()
		}
		return b.String()
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// ratio returns pidnode/baseline when both are figures and the baseline is > 0.
func (r *Row) ratio() (float64, bool) {
	if r.Value == nil || r.Baseline == nil || *r.Baseline <= 0 || r.BaselineNA != "" {
		return 0, false
	}
	return *r.Value / *r.Baseline, true
}

// missedPct formats by how many percent a target is missed: a whole number,
// or one significant digit below 1, so that a miss never reads "missed by
// 0 %".
func missedPct(p float64) string {
	if p < 1 {
		return strconv.FormatFloat(p, 'g', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 0, 64)
}

// verdict says whether the target is met and, if not, by how much it is missed.
func (r *Row) verdict() (target, verdict string, missed bool) {
	if r.Target == nil {
		return "", "", false
	}
	tgt := r.Target.Value
	switch r.Target.Kind {
	case RatioMin:
		target = "≥ " + strconv.FormatFloat(tgt, 'g', -1, 64) + "× " + r.BaselineLabel
		q, ok := r.ratio()
		if !ok {
			if r.BaselineNA != "" {
				return target, "not judged: the baseline did not send pidnode's response", false
			}
			if r.Value == nil {
				return target, "not measured", false
			}
			return target, "no baseline figure", false
		}
		if q >= tgt {
			return target, "met", false
		}
		p := 2 // a ratio that rounds to its target gets more decimals
		for p < 6 && fmt.Sprintf("%.*f", p, q) == fmt.Sprintf("%.*f", p, tgt) {
			p++
		}
		return target, fmt.Sprintf("**missed by %s %%** (%.*f× of %.*f×)", missedPct(100*(1-q/tgt)), p, q, p, tgt), true
	case Min:
		target = "≥ " + fmtNum(tgt) + " " + r.Unit
		if r.Value == nil {
			return target, "not measured", false
		}
		if *r.Value >= tgt {
			return target, "met", false
		}
		return target, fmt.Sprintf("**missed by %s %%**", missedPct(100*(1-*r.Value/tgt))), true
	case Max:
		target = "≤ " + fmtNum(tgt) + " " + r.Unit
		if r.Value == nil {
			return target, "not measured", false
		}
		if *r.Value <= tgt {
			return target, "met", false
		}
		return target, fmt.Sprintf("**missed by %s %%** (%.2f× the limit)", missedPct(100*(*r.Value/tgt-1)), *r.Value/tgt), true
	}
	return "", "", false
}

// figures formats a row's pidnode figure, baseline and ratio cells, for the
// report and the README's table alike.
func (r *Row) figures() (val, base, ratio string) {
	val = "n/a"
	if r.Value != nil {
		val = fmtNum(*r.Value) + " " + r.Unit
	}
	base = "–"
	switch {
	case r.BaselineNA != "":
		// The like-for-like check refused the comparison.
		base = cell(r.BaselineNA)
	case r.Baseline != nil:
		base = fmtNum(*r.Baseline) + " (" + r.BaselineLabel + ")"
	}
	ratio = "–"
	if q, ok := r.ratio(); ok {
		ratio = fmt.Sprintf("%.2f×", q)
	}
	return val, base, ratio
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if s == "" || s == "-" {
		return "–"
	}
	return s
}

func writeTable(w io.Writer, title, setup string, rows []Row, svgName string) {
	fmt.Fprintf(w, "# %s\n\n", title)
	if setup != "" {
		fmt.Fprintf(w, "%s\n\n", setup)
	}
	fmt.Fprintln(w, "| figure | pidnode | baseline | ratio | target | verdict | command | notes |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---|---|")
	var missed []string
	for i := range rows {
		r := &rows[i]
		val, base, ratio := r.figures()
		target, verdict, miss := r.verdict()
		if miss {
			m := fmt.Sprintf("- %s: %s, target %s — %s", r.Figure, val, target, strings.ReplaceAll(verdict, "**", ""))
			if r.Why != "" {
				m += "\n  - Measured in this run: " + r.Why
			}
			missed = append(missed, m)
		}
		cmd := r.Command
		if cmd != "" && cmd != "-" {
			cmd = "`" + strings.ReplaceAll(cmd, "`", "'") + "`"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			cell(r.Figure), cell(val), base, ratio, cell(target), cell(verdict), cell(cmd), cell(r.Note))
	}
	fmt.Fprintf(w, "\n![throughput per server CPU-second and p99 latency per scenario](%s)\n\n", svgName)
	if len(missed) > 0 {
		fmt.Fprintln(w, "## Targets missed")
		fmt.Fprintln(w)
		for _, m := range missed {
			fmt.Fprintln(w, m)
		}
		fmt.Fprintln(w)
	}
}

var systemColour = map[string]string{"pidnode": "#2b6cb0", "nginx": "#2f855a", "fasthttp map": "#b7791f", "miekg/dns map": "#9b2c2c", "native map": "#6b46c1"}

// legend is the systems the chart's legend names, in order.
var legend = []string{"pidnode", "nginx", "fasthttp map", "miekg/dns map", "native map"}

func colour(system string) string {
	if c, ok := systemColour[system]; ok {
		return c
	}
	return "#4a5568"
}

// groupBars orders bars by scenario (in order of first appearance), keeping
// the systems of one scenario next to each other.
func groupBars(bars []Bar) []Bar {
	var order []string
	by := map[string][]Bar{}
	for _, b := range bars {
		if _, ok := by[b.Scenario]; !ok {
			order = append(order, b.Scenario)
		}
		by[b.Scenario] = append(by[b.Scenario], b)
	}
	out := make([]Bar, 0, len(bars))
	for _, s := range order {
		out = append(out, by[s]...)
	}
	return out
}

// p99 axis: logarithmic from p99Min to the largest value (at least 100 ms),
// because one stalled run would otherwise flatten every other bar.
const p99Min = 0.1

func logPos(v, maxV float64, width int) int {
	if v <= p99Min {
		return 1
	}
	return max(1, int(float64(width)*math.Log10(v/p99Min)/math.Log10(maxV/p99Min)))
}

// SVG draws two horizontal bar charts side by side: requests per server
// CPU-second (requests per second where no CPU time was measured, hatched) and
// p99 latency on a log scale, one bar per scenario and system.
func SVG(w io.Writer, title string, bars []Bar) {
	const (
		labelW = 230
		panelW = 340
		gap    = 50
		barH   = 16
		rowH   = 22
		top    = 66
	)
	bars = groupBars(bars)
	width := labelW + 2*panelW + gap + 20
	height := top + rowH*len(bars) + 70
	var maxT float64
	maxP := 100.0
	for _, b := range bars {
		maxT = math.Max(maxT, throughput(b))
		maxP = math.Max(maxP, b.P99)
	}
	if maxT == 0 {
		maxT = 1
	}
	esc := html.EscapeString
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintln(w, `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="3"/></pattern></defs>`)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	fmt.Fprintf(w, `<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	x1 := labelW
	x2 := labelW + panelW + gap
	pw := panelW - 70
	fmt.Fprintf(w, `<text x="%d" y="%d" font-weight="bold">requests per server CPU-second</text>`+"\n", x1, top-24)
	fmt.Fprintf(w, `<text x="%d" y="%d" font-weight="bold">p99 latency, ms (log scale)</text>`+"\n", x2, top-24)
	for i := 0; i < len(bars); i += 2 {
		fmt.Fprintf(w, `<rect x="0" y="%d" width="%d" height="%d" fill="#f7f7f7"/>`+"\n", top+i*rowH-3, width, rowH)
	}
	for _, t := range []float64{1, 10, 100, 1000, 10000} {
		if t > maxP {
			break
		}
		x := x2 + logPos(t, maxP, pw)
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ccc"/><text x="%d" y="%d" font-size="10" fill="#666" text-anchor="middle">%s</text>`+"\n",
			x, top-4, x, top+rowH*len(bars), x, top-8, fmtTick(t))
	}
	for i, b := range bars {
		y := top + i*rowH
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">%s — %s</text>`+"\n", labelW-8, y+12, esc(b.Scenario), esc(b.System))
		t := throughput(b)
		tw := max(1, int(float64(pw)*t/maxT))
		fill := colour(b.System)
		unit := ""
		if b.PerCPU == nil {
			fill, unit = "url(#hatch)", " /s"
		}
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s"/>`+"\n", x1, y, tw, barH, fill, colour(b.System))
		fmt.Fprintf(w, `<text x="%d" y="%d">%s%s</text>`+"\n", x1+tw+4, y+12, fmtNum(t), unit)
		if b.P99 <= 0 {
			fmt.Fprintf(w, `<text x="%d" y="%d" fill="#666">not measured (or generator-limited)</text>`+"\n", x2+4, y+12)
			continue
		}
		bw := logPos(b.P99, maxP, pw)
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", x2, y, bw, barH, colour(b.System))
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", x2+bw+4, y+12, fmtNum(b.P99))
	}
	ly := top + rowH*len(bars) + 14
	lx := 10
	for _, s := range legend {
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, ly, colour(s), lx+16, ly+10, s)
		lx += 110
	}
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="12" height="12" fill="url(#hatch)" stroke="#999"/><text x="%d" y="%d">requests/s (no CPU time)</text>`+"\n", lx, ly, lx+16, ly+10)
	fmt.Fprintf(w, `<text x="10" y="%d" font-size="11" fill="#444">p99: HTTP scenarios from the open-loop run at 50 %% of capacity (omitted where the generator could not send that rate);</text>`+"\n", ly+30)
	fmt.Fprintf(w, `<text x="10" y="%d" font-size="11" fill="#444">native protocol and admin from their closed-loop drivers.</text>`+"\n", ly+44)
	fmt.Fprintln(w, "</svg>")
}

func fmtTick(v float64) string {
	if v >= 1000 {
		return fmtNum(v/1000) + " s"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " ms"
}

func throughput(b Bar) float64 {
	if b.PerCPU != nil {
		return *b.PerCPU
	}
	return b.Rate
}
