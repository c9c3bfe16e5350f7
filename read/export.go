package read

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// SummaryColumns are the columns of a list's CSV export, in order; its
// JSON Lines export has one Summary object per line with these members.
var SummaryColumns = []string{"handle", "id", "label", "status", "url", "created", "updated"}

// ExportWriter writes Summaries as CSV (RFC 4180, a header row of
// SummaryColumns first) or JSON Lines. Not safe for concurrent use.
type ExportWriter struct {
	csv     *csv.Writer
	json    *json.Encoder
	started bool // the CSV header is written
}

// NewExportWriter returns a writer of CSV (csv true) or JSON Lines to w.
func NewExportWriter(w io.Writer, asCSV bool) *ExportWriter {
	if asCSV {
		return &ExportWriter{csv: csv.NewWriter(w)}
	}
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return &ExportWriter{json: e}
}

// Write writes one Summary (the CSV header before the first).
func (x *ExportWriter) Write(s *Summary) error {
	if x.json != nil {
		return x.json.Encode(s)
	}
	if err := x.header(); err != nil {
		return err
	}
	row := []string{s.Handle, s.ID, s.Label, s.Status, s.URL, s.Created.Format(time.RFC3339), s.Updated.Format(time.RFC3339)}
	for i, c := range row {
		row[i] = CSVCell(c)
	}
	return x.csv.Write(row)
}

func (x *ExportWriter) header() error {
	if x.csv == nil || x.started {
		return nil
	}
	x.started = true
	return x.csv.Write(SummaryColumns)
}

// Close writes what is buffered (and the CSV header of an empty export).
func (x *ExportWriter) Close() error {
	if x.csv == nil {
		return nil
	}
	if err := x.header(); err != nil {
		return err
	}
	x.csv.Flush()
	return x.csv.Error()
}

// CSVCell is s as a CSV cell a spreadsheet will not take for a formula: a
// leading =, +, -, @, tab or CR gets an apostrophe before it (OWASP's CSV
// injection advice).
func CSVCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
