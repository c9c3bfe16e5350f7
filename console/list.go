package console

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pidnode/model"
	"pidnode/read"
)

// The SNAA's list of identifiers (docs/product.md §4.2): a search of the
// namespace through the search index (read.Reader.Search, as the API's
// GET …/{ns}/?q= reads it) with the label, status, target and last change
// of each, sorted by id, label, creation or last change, numbered pages
// with the total; its export as CSV or JSON Lines (read.Reader.Export); and
// the URL index's search by landing page (read.Reader.List, cursor pages),
// which the search index does not replace.

// listPageSize is the identifiers of one page of the list.
const listPageSize = 50

type idsPage struct {
	Base     string
	Bases    []baseChoice
	Q        string
	Status   string
	Sort     string
	URL      string
	Statuses []string
	Sorts    []sortChoice
	// Search mode: the page's summaries, the total and the numbered
	// pages' links; URL mode: the identifiers and the next cursor's link.
	Items     []read.Summary
	Total     int
	Page      int
	PageCount int
	Pages     []pageLink
	Prev      string
	NextURL   string
	Export    map[string]string
	ByURL     []read.Identifier
}

type sortChoice struct{ Value, Label string }

// sortChoices are the list's orders, as read.SortKeys names them.
var sortChoices = []sortChoice{
	{"id", "Id"}, {"label", "Label (A to Z)"}, {"-label", "Label (Z to A)"},
	{"-changed", "Last changed first"}, {"changed", "Least recently changed first"},
	{"-created", "Newest first"}, {"created", "Oldest first"},
}

// pageLink is one link of the numbered pages; Gap stands for pages left out.
type pageLink struct {
	N       int
	URL     string
	Current bool
	Gap     bool
}

// listURL is the list's URL with v's query and page n (0: none).
func listURL(path string, v url.Values, n int) string {
	c := url.Values{}
	for k, x := range v {
		if x[0] != "" {
			c[k] = x
		}
	}
	if n > 0 {
		c.Set("page", strconv.Itoa(n))
	}
	return path + "?" + c.Encode()
}

// pageLinks are the first, the last and the pages around the current one.
func pageLinks(v url.Values, cur, pages int) []pageLink {
	var out []pageLink
	for n := 1; n <= pages; n++ {
		if n != 1 && n != pages && (n < cur-2 || n > cur+2) {
			if len(out) > 0 && !out[len(out)-1].Gap {
				out = append(out, pageLink{Gap: true})
			}
			continue
		}
		out = append(out, pageLink{N: n, URL: listURL("/console/ids", v, n), Current: n == cur})
	}
	return out
}

// listQuery is the search the list's query asks for: read.ParseSearch's,
// and without q, sort or page the first page by id.
func listQuery(q url.Values, pageSize int) (read.SearchQuery, error) {
	v := url.Values{}
	for _, k := range []string{"q", "status", "sort", "page"} {
		if x := strings.TrimSpace(q.Get(k)); x != "" {
			v.Set(k, x)
		}
	}
	sq, _, search, err := read.ParseSearch(v, "", pageSize)
	if err == nil && !search {
		sq = read.SearchQuery{Status: v.Get("status"), Page: 1, PageSize: pageSize}
	}
	return sq, err
}

func (s *Server) pageIDs(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	pg := &idsPage{Base: bn, Bases: s.baseChoices(u, bn), Q: strings.TrimSpace(q.Get("q")), Status: q.Get("status"), Sort: q.Get("sort"),
		URL: strings.TrimSpace(q.Get("url")), Statuses: s.statuses(), Sorts: sortChoices}
	d.Title, d.D = "Your identifiers", pg
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err == nil {
		if msg := s.cfg.Read.StatusFilter(strings.ToUpper(pg.Status)); msg != "" {
			p := problem(http.StatusBadRequest, "status %s", msg)
			p.Errors = []model.FieldError{{Field: "status", Message: msg}}
			err = p
		}
	}
	if err == nil && pg.URL != "" {
		// The URL index: cursor pages, as the API's ?url=.
		var next string
		pg.ByURL, next, err = s.cfg.Read.List(t.Prefix, t.Namespace, read.ListQuery{Status: strings.ToUpper(pg.Status), URL: pg.URL, Cursor: q.Get("cursor"), Limit: listPageSize})
		for i := range pg.ByURL {
			pg.ByURL[i] = *pg.ByURL[i].Plain()
		}
		if next != "" {
			pg.NextURL = listURL("/console/ids", url.Values{"base": {bn}, "status": {pg.Status}, "url": {pg.URL}, "cursor": {next}}, 0)
		}
	} else if err == nil {
		var sq read.SearchQuery
		if sq, err = listQuery(q, listPageSize); err == nil {
			var page *read.SearchPage
			if page, err = s.cfg.Read.Search(t.Prefix, t.Namespace, sq); err == nil {
				v := url.Values{"base": {bn}, "q": {pg.Q}, "status": {pg.Status}, "sort": {pg.Sort}}
				pg.Items, pg.Total, pg.Page, pg.PageCount = page.Items, page.Total, page.Page, page.Pages
				pg.Pages = pageLinks(v, page.Page, page.Pages)
				if page.Page > 1 {
					pg.Prev = listURL("/console/ids", v, page.Page-1)
				}
				if page.Page < page.Pages {
					pg.NextURL = listURL("/console/ids", v, page.Page+1)
				}
				pg.Export = map[string]string{}
				for _, f := range []string{read.FormatCSV, read.FormatJSONL} {
					v.Set("format", f)
					pg.Export[f] = listURL("/console/ids/export", v, 0)
				}
			}
		}
	}
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "ids", d)
		return nil
	}
	s.render(w, http.StatusOK, "ids", d)
	return nil
}

// pageExport sends every identifier of the list's search as a CSV or JSON
// Lines file (read.Reader.Export, the API's export).
func (s *Server) pageExport(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, _ := s.consoleBase(q.Get("base"))
	format := q.Get("format")
	types := map[string]string{read.FormatCSV: "text/csv", read.FormatJSONL: "application/x-ndjson"}
	if types[format] == "" {
		return problem(http.StatusBadRequest, "format must be csv or jsonl")
	}
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	sq, err := listQuery(q, listPageSize)
	if err != nil {
		return err
	}
	started := false
	_, err = s.cfg.Read.Export(t.Prefix, t.Namespace, sq, format, func() io.Writer {
		started = true
		w.Header().Set("Content-Type", types[format]+"; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(t.Namespace)+"."+format+`"`)
		w.WriteHeader(http.StatusOK)
		return w
	})
	if err != nil && started {
		s.log.Warn("console: a list export ended early", "err", err)
		return nil
	}
	return err
}
