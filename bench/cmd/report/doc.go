// Command report turns the rows and chart data that bench/run.sh collects into
// bench/results/<date>-<host>.md — a table of figure, pidnode, baseline, ratio,
// target, verdict (met, or missed by how much), command and notes — and a
// hand-written SVG chart beside it with, per scenario and system, requests per
// server CPU-second and p99 latency.
//
//	go run ./bench/cmd/report -rows rows.tsv -chart chart.tsv -out bench/results/2026-01-01-host.md
//
// Rows TSV columns: id, figure, unit, pidnode, baseline, baseline label, target
// kind (ratio_min, min, max, none), target, command, note. Chart TSV columns:
// scenario, system, requests per server CPU-second ("-" if not measured),
// requests per second, p99 ms. -profile appends a markdown file of CPU
// profiles. -why (TSV: id, text) gives rows what the run measured behind
// their figures; a missed target's entry in "Targets missed" carries it. -memory adds the table of memory against the cache budget (TSV:
// scenario, budget, cache bytes, entries, RssAnon at ready in kB, RssAnon and
// VmRSS peaks in kB, soft memory limit, statistics table bytes, note) and
// -hitratio the hit ratio per budget (TSV: budget, percent of -data-bytes,
// entries, cache bytes, hits, misses, RssAnon at ready, RssAnon and VmRSS
// peaks in kB, requests per second). -responses adds bench/cmd/likeforlike
// check's tables (one response per scenario and server, byte counts, whether a
// like-for-like ratio may be reported); a baseline cell reading "n/a: …" is
// printed as it is and its target not judged. Part of bench/, imported by
// nothing.
package main
