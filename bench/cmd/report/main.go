package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"pidnode/bench/internal/report"
)

func main() {
	in := flag.String("json", "", "results JSON written by bench/cmd/suite")
	out := flag.String("out", "", "markdown file to write; the SVG goes beside it (with -readme: the README whose marked table is replaced)")
	readme := flag.Bool("readme", false, "render the README's short table instead of the report: to stdout, or into -out's marked block")
	flag.Parse()
	if *in == "" || (*out == "" && !*readme) {
		fmt.Fprintln(os.Stderr, "usage: report -json results.json -out report.md | report -json results.json -readme [-out README.md]")
		os.Exit(2)
	}
	r, err := report.Read(*in)
	switch {
	case err != nil:
	case *readme && filepath.IsAbs(*in):
		err = fmt.Errorf("-readme: give %s relative to the repository root, as the README's marker names it", *in)
	case *readme:
		err = writeReadme(r, filepath.ToSlash(filepath.Clean(*in)), *out)
	default:
		err = report.WriteFiles(r, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// writeReadme prints the README's table, or replaces the marked table in the
// file readme when it is not empty.
func writeReadme(r *report.Results, jsonPath, readme string) error {
	var b bytes.Buffer
	report.ReadmeTable(&b, r, jsonPath)
	if readme == "" {
		_, err := os.Stdout.Write(b.Bytes())
		return err
	}
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	old, _, err := report.ReadmeBlock(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return os.WriteFile(readme, bytes.Replace(doc, old, b.Bytes(), 1), 0o644)
}
