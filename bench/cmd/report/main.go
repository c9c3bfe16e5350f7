package main

import (
	"flag"
	"fmt"
	"os"

	"pidnode/bench/internal/report"
)

func main() {
	in := flag.String("json", "", "results JSON written by bench/cmd/suite")
	out := flag.String("out", "", "markdown file to write; the SVG goes beside it")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -json results.json -out report.md")
		os.Exit(2)
	}
	r, err := report.Read(*in)
	if err == nil {
		err = report.WriteFiles(r, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}
