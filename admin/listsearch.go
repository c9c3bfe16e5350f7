package admin

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"pidnode/internal/route"
	"pidnode/read"
)

// searchHandles answers GET …/{ns}/ with a search (read.ParseSearch: a page or
// an export); ok is false for cursor pages. log hears of an export cut short.
func searchHandles(rd *read.Reader, log *slog.Logger, w http.ResponseWriter, r *http.Request, t target, limit int) (ok bool, err error) {
	types := map[string]string{read.FormatCSV: "text/csv", read.FormatJSONL: "application/x-ndjson", "text/csv": read.FormatCSV, jsonLinesTypes[0]: read.FormatJSONL, jsonLinesTypes[1]: read.FormatJSONL} // the export's media types by format, and back
	accept := types[route.FirstAccepted(r.Header.Get("Accept"), []string{"application/json", "text/csv", jsonLinesTypes[0], jsonLinesTypes[1]})]
	sq, format, ok, err := read.ParseSearch(r.URL.Query(), accept, limit)
	if err != nil || !ok {
		return ok, err
	}
	if format == "" {
		page, err := rd.Search(t.prefix, t.ns, sq)
		if err == nil {
			writeJSON(w, http.StatusOK, page)
		}
		return true, err
	}
	started := false
	if _, err = rd.Export(t.prefix, t.ns, sq, format, func() io.Writer {
		started = true
		w.Header().Set("Content-Type", types[format]+"; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(t.ns)+"."+format+`"`)
		w.WriteHeader(http.StatusOK)
		return w
	}); err != nil && started {
		log.Warn("a list export ended early", "err", err)
		err = nil
	}
	return true, err
}
