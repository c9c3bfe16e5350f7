package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// The README's short table sits between these markers; the opening one
// names the results JSON it is rendered from.
const (
	readmeOpen  = "<!-- perf-table: "
	readmeClose = "<!-- /perf-table -->"
)

// ReadmeTable writes the README's short table of r, read from jsonPath (a
// slash-separated path relative to the repository root): the opening marker,
// one line linking the report beside the JSON, the table of every figure
// that has a target (pidnode, baseline, ratio, target, verdict; the same
// cells as the report's), and the closing marker.
func ReadmeTable(w io.Writer, r *Results, jsonPath string) {
	md := strings.TrimSuffix(jsonPath, path.Ext(jsonPath)) + ".md"
	fmt.Fprintf(w, "%s%s -->\n", readmeOpen, jsonPath)
	fmt.Fprintf(w, "From [`%s`](%s) (%s):\n\n", md, md, cell(r.Title))
	fmt.Fprintln(w, "| figure | pidnode | baseline | ratio | target | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Target == nil {
			continue
		}
		val, base, ratio := row.figures()
		target, verdict, _ := row.verdict()
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n",
			cell(row.Figure), cell(val), base, ratio, cell(target), cell(verdict))
	}
	fmt.Fprintln(w, readmeClose)
}

// ReadmeBlock finds the marked table in a README: the whole block, markers
// included, and the JSON path its opening marker names.
func ReadmeBlock(readme []byte) (block []byte, jsonPath string, err error) {
	i := bytes.Index(readme, []byte(readmeOpen))
	if i < 0 {
		return nil, "", errors.New("no " + strings.TrimSpace(readmeOpen) + " marker")
	}
	rest := readme[i:]
	eol := bytes.IndexByte(rest, '\n')
	j := bytes.Index(rest, []byte(readmeClose))
	if eol < 0 || j < eol {
		return nil, "", errors.New("no " + readmeClose + " after the " + strings.TrimSpace(readmeOpen) + " marker")
	}
	jsonPath = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest[len(readmeOpen):eol])), "-->"))
	end := j + len(readmeClose)
	if end < len(rest) && rest[end] == '\n' {
		end++
	}
	return rest[:end], jsonPath, nil
}
