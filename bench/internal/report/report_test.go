package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestGolden renders the recorded results in testdata/results.json and
// compares the markdown and the chart with the golden files (go test
// -update rewrites them; review their diff as a change of the report).
func TestGolden(t *testing.T) {
	r, err := Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFiles(r, filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "report.svg"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, golden, got)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "report.svg"))
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err != io.EOF {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
}

// TestWriteRead: a Results survives the JSON round trip (the recorded JSON
// renders the same report).
func TestWriteRead(t *testing.T) {
	r, err := Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "r.json")
	if err := Write(name, r); err != nil {
		t.Fatal(err)
	}
	r2, err := Read(name)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	Markdown(&a, r, "x.svg")
	Markdown(&b, r2, "x.svg")
	if a.String() != b.String() {
		t.Errorf("the report changed over a JSON round trip:\n%s\n---\n%s", a.String(), b.String())
	}
}

// TestWriteNotFinite: a figure that is NaN or infinite is written as not
// measured instead of failing the whole results file.
func TestWriteNotFinite(t *testing.T) {
	r := &Results{Rows: []Row{{ID: "x", Value: F(math.NaN()), Baseline: F(math.Inf(1)), Target: &Target{Kind: Max, Value: math.Inf(1)}}},
		Bars: []Bar{{PerCPU: F(math.Inf(-1)), Rate: math.NaN()}}, Memory: []MemRow{{Budget: math.NaN()}}, HitRatio: []HitRow{{RPS: math.Inf(1)}}}
	name := filepath.Join(t.TempDir(), "r.json")
	if err := Write(name, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if row := got.Rows[0]; row.Value != nil || row.Baseline != nil || row.Target != nil || got.Bars[0].PerCPU != nil {
		t.Errorf("non-finite figures read back as %+v, %+v", row, got.Bars[0])
	}
}

func TestVerdict(t *testing.T) {
	tgt := func(kind string, v float64) *Target { return &Target{Kind: kind, Value: v} }
	tests := []struct {
		name        string
		r           Row
		wantVerdict string
		wantMissed  bool
	}{
		{"ratio met", Row{Target: tgt(RatioMin, 1), Value: F(100), Baseline: F(90)}, "met", false},
		{"ratio missed", Row{Target: tgt(RatioMin, 1), Value: F(80), Baseline: F(100)}, "**missed by 20 %** (0.80× of 1.00×)", true},
		{"ratio just missed", Row{Target: tgt(RatioMin, 0.95), Value: F(85944), Baseline: F(90835)}, "**missed by 0.4 %** (0.946× of 0.950×)", true},
		{"ratio a hair below", Row{Target: tgt(RatioMin, 0.9), Value: F(101723), Baseline: F(113079)}, "**missed by 0.05 %** (0.8996× of 0.9000×)", true},
		{"no baseline", Row{Target: tgt(RatioMin, 1), Value: F(80)}, "no baseline figure", false},
		{"baseline refused", Row{Target: tgt(RatioMin, 1), Value: F(80), Baseline: F(100), BaselineNA: "n/a: header sets differ: −link"}, "not judged: the baseline did not send pidnode's response", false},
		{"min missed", Row{Target: tgt(Min, 200000), Unit: "records/s", Value: F(150000)}, "**missed by 25 %**", true},
		{"max met", Row{Target: tgt(Max, 1), Unit: "s", Value: F(0.4)}, "met", false},
		{"max missed", Row{Target: tgt(Max, 2), Unit: "ms", Value: F(3)}, "**missed by 50 %** (1.50× the limit)", true},
		{"not measured", Row{Target: tgt(Min, 5000)}, "not measured", false},
		{"ratio not measured", Row{Target: tgt(RatioMin, 0.9), Baseline: F(5)}, "not measured", false},
		{"no target", Row{Value: F(1)}, "", false},
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
