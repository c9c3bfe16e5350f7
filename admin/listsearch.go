package admin

import (
	"net/http"
	"net/url"
	"strconv"

	"pidnode/read"
)

// The namespace list's search (docs/product.md §4): GET …/{ns}/ with q,
// sort or page answers a numbered page (read.Reader.Search) instead of a
// cursor page; with format=csv or format=jsonl (or Accept: text/csv or a
// JSON Lines type, jsonLinesTypes) every match as an export
// (read.Reader.Export). status and limit apply to both; url and cursor
// belong to the cursor pages.

// exportTypes are the media types of the list's export, by format= value.
var exportTypes = map[string]string{"csv": "text/csv", "jsonl": "application/x-ndjson"}

// listSearch reports whether the query asks for a search page or an
// export, and which export ("" for a page).
func listSearch(r *http.Request) (search bool, format string, p *Problem) {
	q := r.URL.Query()
	format = q.Get("format")
	if format != "" {
		if _, ok := exportTypes[format]; !ok {
			return false, "", problem(http.StatusBadRequest, "format must be csv or jsonl")
		}
	} else {
		switch firstAccepted(r.Header.Get("Accept"), []string{"application/json", "text/csv", jsonLinesTypes[0], jsonLinesTypes[1]}) {
		case "text/csv":
			format = "csv"
		case jsonLinesTypes[0], jsonLinesTypes[1]:
			format = "jsonl"
		}
	}
	search = format != "" || q.Has("q") || q.Has("sort") || q.Has("page")
	if search && (q.Get("url") != "" || q.Get("cursor") != "" || q.Get("after") != "") {
		return false, "", problem(http.StatusBadRequest, "url and cursor select cursor pages; they cannot be combined with q, sort, page or an export")
	}
	return search, format, nil
}

// searchHandles answers a search page or, with format, an export.
func (s *Server) searchHandles(w http.ResponseWriter, r *http.Request, t target, status string, limit int, format string) error {
	q := r.URL.Query()
	sq := read.SearchQuery{Q: q.Get("q"), Status: status, Sort: q.Get("sort"), Page: 1, PageSize: limit}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return problem(http.StatusBadRequest, "page must be an integer from 1")
		}
		sq.Page = n
	}
	if format == "" {
		page, err := s.read.Search(t.prefix, t.ns, sq)
		if err != nil {
			return err
		}
		items := make([]*read.Identifier, len(page.Items))
		for i := range page.Items {
			items[i] = page.Items[i].Identifier
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": page.Total, "page": page.Page, "page_size": page.PageSize, "pages": page.Pages})
		return nil
	}
	var x *read.ExportWriter
	_, err := s.read.Export(t.prefix, t.ns, sq, func(sm *read.Summary) error {
		if x == nil {
			x = s.startExport(w, t, format)
		}
		return x.Write(sm)
	})
	if err != nil {
		if x != nil {
			// The reply has begun: the error cannot be a problem any more
			// (the client sees a body cut short).
			s.log.Warn("a list export ended early", "err", err)
			return nil
		}
		return err
	}
	if x == nil {
		x = s.startExport(w, t, format)
	}
	return x.Close()
}

// startExport writes the export's headers and returns its writer.
func (s *Server) startExport(w http.ResponseWriter, t target, format string) *read.ExportWriter {
	h := w.Header()
	h.Set("Content-Type", exportTypes[format]+"; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	name := url.PathEscape(t.ns) + "." + format
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(http.StatusOK)
	return read.NewExportWriter(w, format == "csv")
}
