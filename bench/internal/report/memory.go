package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// count formats a whole number with thousands separators.
func count(v float64) string {
	if math.Abs(v) >= 1000 {
		return fmtNum(v)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// mib formats bytes as MiB, to a tenth.
func mib(b float64) string {
	if b <= 0 {
		return "–"
	}
	if m := b / (1 << 20); m < 1000 {
		return strconv.FormatFloat(m, 'f', 1, 64) + " MiB"
	}
	return fmtNum(b/(1<<20)) + " MiB"
}

// writeMemory writes the memory table: per scenario, the budget, what the
// cache held, RssAnon at ready and at its peak, the peak's growth over ready
// against the budget (the acceptance figure: growth ≤ budget means the node
// stayed within its budget plus its base), VmRSS (which adds the database
// pages the node has read, file-backed and reclaimable) and the soft limit.
func writeMemory(w io.Writer, rows []MemRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "## Memory against the cache budget")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "RssAnon (anonymous memory: the Go heap and runtime) and VmRSS (that plus the database pages read through the memory map, which the kernel can reclaim) of the node, sampled every 0.1 s; \"at ready\" is the empty node after start-up, the base. The growth of the peak over the base is compared with the budget (`--cache-bytes`): above it is what the statistics table, buffers and the collector's headroom add, bounded by the Go soft memory limit.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | budget | cache held (entries) | RssAnon at ready | RssAnon peak | peak − ready | of the budget | VmRSS peak | soft memory limit | statistics table at the end | notes |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		growth := (r.PeakAnonKB - r.BaseKB) * 1024
		share := "–"
		if r.Budget > 0 && r.PeakAnonKB > 0 {
			share = fmt.Sprintf("%.2f×", growth/r.Budget)
		}
		fmt.Fprintf(w, "| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			cell(r.Scenario), mib(r.Budget), mib(r.CacheBytes), count(r.Entries), mib(r.BaseKB*1024), mib(r.PeakAnonKB*1024),
			mib(growth), share, mib(r.PeakRSS*1024), mib(r.SoftLimit), mib(r.StatsBytes), cell(r.Note))
	}
	fmt.Fprintln(w)
}

// writeHitRatios writes the hit ratio of the Zipf stream per budget.
func writeHitRatios(w io.Writer, rows []HitRow, dataBytes int64) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "## Hit ratio by cache budget (Zipf stream)")
	fmt.Fprintln(w)
	data := "the database file"
	if dataBytes > 0 {
		data += " (" + mib(float64(dataBytes)) + ")"
	}
	fmt.Fprintf(w, "The cache bounded by bytes alone, at shares of %s; one pass of the stream warms it, then the ratio is of the lookups of a closed-loop run (`pidnode_cache_{hits,misses}_total`).\n\n", data)
	fmt.Fprintln(w, "| budget | of the data | cache held (entries) | hit ratio | lookups | RssAnon at ready | RssAnon peak | VmRSS peak | req/s |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		ratio := "–"
		if n := r.Hits + r.Misses; n > 0 {
			ratio = fmt.Sprintf("%.1f %%", 100*r.Hits/n)
		}
		fmt.Fprintf(w, "| %s | %s %% | %s (%s) | %s | %s | %s | %s | %s | %s |\n",
			mib(r.Budget), strconv.FormatFloat(r.Pct, 'g', -1, 64), mib(r.CacheBytes), count(r.Entries), ratio, count(r.Hits+r.Misses),
			mib(r.BaseKB*1024), mib(r.PeakAnonKB*1024), mib(r.PeakRSS*1024), count(r.RPS))
	}
	fmt.Fprintln(w)
}
