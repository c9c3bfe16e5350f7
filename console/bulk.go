package console

import (
	"io"
	"net/http"
	"strings"

	"pidnode/internal/httperr"
	"pidnode/model"
	"pidnode/write"
)

// The bulk page (docs/product.md §4, "Bulk files"): the one bulk format of
// every tool (model/bulk.go), a CSV file with one column per model field
// or JSON Lines, read as the API's POST …/bulk reads its body and written
// through the same write service; the results summarised (created,
// updated, failed) with each failure's problem. The template is the
// model's empty CSV file, which `pidctl bulk` takes as it is.

type bulkPage struct {
	Base    string
	Bases   []baseChoice
	Format  string
	Text    string
	Columns []string
	Sum     *httperr.BulkSummary
	Rows    []bulkRow
}

// bulkRow is one item's result with the line of the file it came from.
type bulkRow struct {
	Line int
	httperr.BulkResult
}

// pageBulkTemplate sends the bulk CSV template: its header row.
func (s *Server) pageBulkTemplate(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="bulk-template.csv"`)
	_, err := w.Write(s.cfg.Model.BulkTemplate())
	return err
}

// consoleBulk runs a bulk as the API's POST …/bulk does: admitted (its
// items charged to the rate limit once counted, one request if refused
// before), refused in maintenance, the body's size limit, the items
// decoded as the API decodes a body of format (model.DecodeBulkCSV for
// "csv", model.DecodeBulkJSON otherwise), the write service's Bulk, the
// summary.
func (s *Server) consoleBulk(u *consoleUser, b *base, body []byte, format string) ([]model.BulkItem, *httperr.BulkSummary, error) {
	if err := s.cfg.Admission.Admit(u.Key, u.SNAA, true, true); err != nil {
		return nil, nil, err
	}
	t, err := checkBase(b, u)
	if err != nil {
		if lerr := s.cfg.Admission.Charge(u.Key.ID, u.SNAA.ID, 1); lerr != nil {
			return nil, nil, lerr
		}
		return nil, nil, err
	}
	if err := s.cfg.Admission.Writable(); err != nil {
		return nil, nil, err
	}
	var items []model.BulkItem
	switch {
	case int64(len(body)) > s.cfg.MaxBodyBytes:
		err = problem(http.StatusRequestEntityTooLarge, "the file has %d bytes, more than the limit of %d bytes; split it", len(body), s.cfg.MaxBodyBytes)
	case format == "csv":
		items, err = s.cfg.Model.DecodeBulkCSV(body)
	default:
		items, err = model.DecodeBulkJSON(body, true)
	}
	if lerr := s.cfg.Admission.Charge(u.Key.ID, u.SNAA.ID, write.BulkCost(len(items))); lerr != nil {
		return nil, nil, lerr
	}
	if err != nil {
		return nil, nil, err
	}
	res, err := s.cfg.Writes.Bulk(u.writer(), t, items)
	if err != nil {
		return nil, nil, err
	}
	sum := httperr.Bulk(res)
	s.written(sum.Created, sum.Updated)
	return items, sum, nil
}

func (s *Server) pageBulk(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	pg := &bulkPage{Base: bn, Bases: s.baseChoices(u, bn), Format: q.Get("format"), Columns: s.cfg.Model.BulkColumns()}
	d.Title, d.D = "Bulk upload", pg
	if r.Method == http.MethodGet {
		s.render(w, http.StatusOK, "bulk", d)
		return nil
	}
	text := r.PostForm.Get("text")
	if r.MultipartForm != nil {
		if fh := r.MultipartForm.File["file"]; len(fh) > 0 && fh[0].Size > 0 {
			f, err := fh[0].Open()
			if err != nil {
				return err
			}
			raw, err := io.ReadAll(io.LimitReader(f, consoleMaxBody))
			f.Close()
			if err != nil {
				return err
			}
			text = string(raw)
			if name := strings.ToLower(fh[0].Filename); pg.Format == "" || pg.Format == "auto" {
				pg.Format = "jsonl"
				if strings.HasSuffix(name, ".csv") {
					pg.Format = "csv"
				}
			}
		}
	}
	pg.Text = text
	items, sum, err := s.consoleBulk(u, b, []byte(text), pg.Format)
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "bulk", d)
		return nil
	}
	pg.Sum = sum
	for i, it := range sum.Items {
		pg.Rows = append(pg.Rows, bulkRow{Line: items[i].Line, BulkResult: it})
	}
	s.render(w, http.StatusOK, "bulk", d)
	return nil
}
