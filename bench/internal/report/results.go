// Package report holds the end-to-end suite's results as JSON and renders
// them: the markdown report (a table of figure, pidnode, baseline, ratio,
// target, verdict, command and notes; every missed target again under
// "Targets missed" with what the run measured behind it; the like-for-like
// responses, memory, hit ratio and profile sections) and the SVG chart beside
// it (requests per server CPU-second and p99 per scenario and system), and
// the README's short table of the figures with a target (readme.go).
//
// bench/internal/suite fills a Results and writes it; bench/cmd/report
// renders a recorded one again. It is the suite's only renderer. Part of
// bench/, imported by nothing outside it.
package report

import (
	"encoding/json"
	"math"
	"os"
)

// Target kinds of a Row.
const (
	RatioMin = "ratio_min" // pidnode / baseline ≥ Value
	Min      = "min"       // pidnode ≥ Value
	Max      = "max"       // pidnode ≤ Value
)

// Results is everything one suite run measured, in the order the report
// prints it.
type Results struct {
	Title string `json:"title"`
	// Setup is the paragraph under the title: machine, settings, rounds,
	// interference, commit.
	Setup string `json:"setup"`
	Rows  []Row  `json:"rows"`
	Bars  []Bar  `json:"bars"`
	// Responses are the like-for-like check's markdown tables (one response
	// per scenario and server).
	Responses []string `json:"responses,omitempty"`
	Memory    []MemRow `json:"memory,omitempty"`
	HitRatio  []HitRow `json:"hit_ratio,omitempty"`
	// DataBytes is the size of the database file the hit-ratio budgets are
	// shares of.
	DataBytes int64     `json:"data_bytes,omitempty"`
	Profiles  []Profile `json:"profiles,omitempty"`
}

// Row is one figure of the report.
type Row struct {
	ID     string `json:"id"`
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Value is pidnode's figure; nil when it was not measured (Note says why).
	Value *float64 `json:"value,omitempty"`
	// Baseline is the figure the target compares Value with (Target.Kind
	// RatioMin), or one printed beside it for reference.
	Baseline *float64 `json:"baseline,omitempty"`
	// BaselineNA, when not empty, replaces the baseline figure: "n/a: …" when
	// the like-for-like check refused the comparison. The target is then not
	// judged.
	BaselineNA    string  `json:"baseline_na,omitempty"`
	BaselineLabel string  `json:"baseline_label,omitempty"`
	Target        *Target `json:"target,omitempty"`
	Command       string  `json:"command,omitempty"`
	Note          string  `json:"note,omitempty"`
	// Why is what the run measured behind the figure (CPU per request,
	// rounds, profile shares); printed under "Targets missed" when the
	// target is missed.
	Why string `json:"why,omitempty"`
}

// Target is a row's acceptance figure.
type Target struct {
	Kind  string  `json:"kind"` // RatioMin, Min or Max
	Value float64 `json:"value"`
}

// Bar is one entry of the chart.
type Bar struct {
	Scenario string `json:"scenario"`
	System   string `json:"system"`
	// PerCPU is requests per server CPU-second; nil when no CPU time was
	// measured (the chart then draws Rate, hatched).
	PerCPU *float64 `json:"per_cpu,omitempty"`
	Rate   float64  `json:"rate"`
	// P99 in ms; 0 when not measured (or the generator could not send the
	// rate).
	P99 float64 `json:"p99_ms"`
}

// MemRow is one scenario of the memory table: the node's cache budget and
// what its cache held at the end, RssAnon at ready and the peaks during the
// scenario, the Go soft memory limit.
type MemRow struct {
	Scenario   string  `json:"scenario"`
	Budget     float64 `json:"budget_bytes"`
	CacheBytes float64 `json:"cache_bytes"`
	Entries    float64 `json:"entries"`
	BaseKB     float64 `json:"base_anon_kb"`
	PeakAnonKB float64 `json:"peak_anon_kb"`
	PeakRSS    float64 `json:"peak_rss_kb"`
	SoftLimit  float64 `json:"soft_limit_bytes"`
	StatsBytes float64 `json:"stats_table_bytes"`
	Note       string  `json:"note,omitempty"`
}

// HitRow is one budget of the hit-ratio table: the budget and its share of
// the database, what the cache held, the lookups of the measured run, the
// memory figures and the run's requests per second.
type HitRow struct {
	Budget     float64 `json:"budget_bytes"`
	Pct        float64 `json:"pct"`
	Entries    float64 `json:"entries"`
	CacheBytes float64 `json:"cache_bytes"`
	Hits       float64 `json:"hits"`
	Misses     float64 `json:"misses"`
	BaseKB     float64 `json:"base_anon_kb"`
	PeakAnonKB float64 `json:"peak_anon_kb"`
	PeakRSS    float64 `json:"peak_rss_kb"`
	RPS        float64 `json:"rps"`
}

// Profile is the flat top of one perf profile.
type Profile struct {
	Label string `json:"label"`
	Top   string `json:"top"`
}

// F returns a pointer to v, for the optional figures.
func F(v float64) *float64 { return &v }

// Read loads a Results written by Write.
func Read(name string) (*Results, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Write stores r as indented JSON. A figure that is not a finite number
// (a division by a zero the run measured) is written as not measured: JSON
// has no NaN, and one such figure must not lose the whole run.
func Write(name string, r *Results) error {
	finite(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// finite replaces every figure of r that is NaN or infinite: an optional
// one by nil, the others by 0.
func finite(r *Results) {
	opt := func(p **float64) {
		if *p != nil && (math.IsNaN(**p) || math.IsInf(**p, 0)) {
			*p = nil
		}
	}
	num := func(ps ...*float64) {
		for _, p := range ps {
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				*p = 0
			}
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		opt(&row.Value)
		opt(&row.Baseline)
		if row.Target != nil && (math.IsNaN(row.Target.Value) || math.IsInf(row.Target.Value, 0)) {
			row.Target = nil
		}
	}
	for i := range r.Bars {
		b := &r.Bars[i]
		opt(&b.PerCPU)
		num(&b.Rate, &b.P99)
	}
	for i := range r.Memory {
		m := &r.Memory[i]
		num(&m.Budget, &m.CacheBytes, &m.Entries, &m.BaseKB, &m.PeakAnonKB, &m.PeakRSS, &m.SoftLimit, &m.StatsBytes)
	}
	for i := range r.HitRatio {
		h := &r.HitRatio[i]
		num(&h.Budget, &h.Pct, &h.Entries, &h.CacheBytes, &h.Hits, &h.Misses, &h.BaseKB, &h.PeakAnonKB, &h.PeakRSS, &h.RPS)
	}
}
