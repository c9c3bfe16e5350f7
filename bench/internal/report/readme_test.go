package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeTableGolden renders the README's table of the recorded results
// in testdata/results.json and compares it with testdata/readme.md (go test
// -update rewrites it): one row per figure with a target, the report's own
// cells, and the markers naming the JSON.
func TestReadmeTableGolden(t *testing.T) {
	r, err := Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	ReadmeTable(&got, r, "bench/internal/report/testdata/results.json")
	golden := filepath.Join("testdata", "readme.md")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("README table differs from %s (go test -update rewrites it):\n%s", golden, got.Bytes())
	}
	targets := 0
	for _, row := range r.Rows {
		if row.Target != nil {
			targets++
		}
	}
	if rows := strings.Count(got.String(), "\n| ") - 1; rows != targets {
		t.Errorf("table has %d rows, want one per figure with a target (%d)", rows, targets)
	}
	block, name, err := ReadmeBlock(append([]byte("intro\n"), got.Bytes()...))
	if err != nil || name != "bench/internal/report/testdata/results.json" || !bytes.Equal(block, got.Bytes()) {
		t.Errorf("ReadmeBlock of the rendering: %q, %v; want the whole rendering and the JSON's name", name, err)
	}
	if _, _, err := ReadmeBlock([]byte(readmeOpen + "x.json -->\n| a |\n")); err == nil {
		t.Error("ReadmeBlock accepted a block without its closing marker")
	}
}

// TestReadmePerfTable: the repository README's performance table is the
// rendering of the results JSON its marker names.
func TestReadmePerfTable(t *testing.T) {
	const root = "../../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, name, err := ReadmeBlock(readme)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	r, err := Read(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("README.md's performance table names %s: %v", name, err)
	}
	var want bytes.Buffer
	ReadmeTable(&want, r, name)
	if !bytes.Equal(block, want.Bytes()) {
		t.Errorf("README.md's performance table is not the rendering of %s; regenerate it with\n"+
			"  go run ./bench/cmd/report -json %s -readme -out README.md\nwant:\n%s", name, name, want.Bytes())
	}
}
