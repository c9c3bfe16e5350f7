package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name        string
		r           row
		wantVerdict string
		wantMissed  bool
	}{
		{"ratio met", row{TargetKind: "ratio_min", value: 100, base: 90, tgt: 1, hasValue: true, hasBase: true, hasTgt: true}, "met", false},
		{"ratio missed", row{TargetKind: "ratio_min", value: 80, base: 100, tgt: 1, hasValue: true, hasBase: true, hasTgt: true}, "**missed by 20 %** (0.80× of 1.00×)", true},
		{"ratio just missed", row{TargetKind: "ratio_min", value: 85944, base: 90835, tgt: 0.95, hasValue: true, hasBase: true, hasTgt: true}, "**missed by 0.4 %** (0.946× of 0.950×)", true},
		{"no baseline", row{TargetKind: "ratio_min", value: 80, tgt: 1, hasValue: true, hasTgt: true}, "no baseline figure", false},
		{"baseline refused", row{TargetKind: "ratio_min", value: 80, tgt: 1, hasValue: true, hasTgt: true, Baseline: "n/a: header sets differ: −link"}, "not judged: the baseline did not send pidnode's response", false},
		{"min missed", row{TargetKind: "min", Unit: "records/s", value: 150000, tgt: 200000, hasValue: true, hasTgt: true}, "**missed by 25 %**", true},
		{"max met", row{TargetKind: "max", Unit: "s", value: 0.4, tgt: 1, hasValue: true, hasTgt: true}, "met", false},
		{"max missed", row{TargetKind: "max", Unit: "ms", value: 3, tgt: 2, hasValue: true, hasTgt: true}, "**missed by 50 %** (1.50× the limit)", true},
		{"not measured", row{TargetKind: "min", tgt: 5000, hasTgt: true}, "not measured", false},
		{"no target", row{TargetKind: "none", value: 1, hasValue: true}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, v, m := tt.r.verdict()
			if v != tt.wantVerdict || m != tt.wantMissed {
				t.Errorf("verdict() = %q, %v, want %q, %v", v, m, tt.wantVerdict, tt.wantMissed)
			}
		})
	}
}

func TestFmtNum(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{1234567.8, "1,234,568"}, {-4200, "-4,200"}, {250.4, "250"}, {12.34, "12.3"}, {0.01234, "0.012"}}
	for _, tt := range tests {
		if got := fmtNum(tt.in); got != tt.want {
			t.Errorf("fmtNum(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOutputs(t *testing.T) {
	rows := []row{{ID: "x", Figure: "redirect | hit", Unit: "req/s", Pidnode: "10", value: 10, hasValue: true,
		Baseline: "20", base: 20, hasBase: true, BaselineLabel: "nginx", TargetKind: "ratio_min", Target: "1", tgt: 1, hasTgt: true},
		{ID: "y", Figure: "met", Unit: "req/s", Pidnode: "30", value: 30, hasValue: true, TargetKind: "min", Target: "1", tgt: 1, hasTgt: true}}
	attachWhy(rows, [][]string{{"x", "user 5 µs"}, {"y", "not printed"}, {"x", "kernel 6 µs"}, {"z", "no such row"}})
	var md bytes.Buffer
	writeMarkdown(&md, "T", "setup", rows, "t.svg")
	for _, want := range []string{`redirect \| hit`, "0.50×", "missed by 50 %", "## Targets missed", "(t.svg)",
		"(0.50× of 1.00×)\n  - Measured in this run: user 5 µs kernel 6 µs\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, unwanted := range []string{"not printed", "no such row"} {
		if strings.Contains(md.String(), unwanted) {
			t.Errorf("markdown has %q, the text of a row whose target is met or of no row:\n%s", unwanted, md.String())
		}
	}
	var svg bytes.Buffer
	writeSVG(&svg, "T <&>", []bar{{Scenario: "redirect", System: "pidnode", PerCPU: 5, hasPerCPU: true, P99: 1},
		{Scenario: "dns", System: "miekg/dns map", Rate: 7}})
	d := xml.NewDecoder(&svg)
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
}

// TestMemorySections: the memory table compares the peak's growth over the
// base with the budget, the hit-ratio table computes the ratio, and rows
// with figures missing print a dash rather than a number.
func TestMemorySections(t *testing.T) {
	var md bytes.Buffer
	writeMemory(&md, []memRow{
		{Scenario: "uniform | misses", Budget: 64 << 20, CacheBytes: 60 << 20, Entries: 12184, BaseKB: 7 << 10,
			PeakAnonKB: 103 << 10, PeakRSS: 900 << 10, SoftLimit: 113 << 20, StatsBytes: 1 << 20, Note: "n"},
		{Scenario: "not measured"},
	})
	writeHitRatios(&md, []hitRow{{Budget: 14 << 20, Pct: 1, Entries: 2500, CacheBytes: 13 << 20, Hits: 750, Misses: 250,
		BaseKB: 7 << 10, PeakAnonKB: 40 << 10, PeakRSS: 500 << 10, RPS: 12345}}, 1400<<20)
	for _, want := range []string{
		"## Memory against the cache budget", `uniform \| misses`, "| 64.0 MiB | 60.0 MiB (12,184) | 7.0 MiB | 103.0 MiB | 96.0 MiB | 1.50× |",
		"| 113.0 MiB | 1.0 MiB | n |", "| not measured | – | – (0) |",
		"## Hit ratio by cache budget (Zipf stream)", "(1,400 MiB)", "| 14.0 MiB | 1 % | 13.0 MiB (2,500) | 75.0 % | 1,000 |", "| 12,345 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
	var empty bytes.Buffer
	writeMemory(&empty, nil)
	writeHitRatios(&empty, nil, 0)
	if empty.Len() != 0 {
		t.Errorf("no rows: wrote %q", empty.String())
	}
}
