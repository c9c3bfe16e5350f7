package read

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pidnode/registry"
	"pidnode/store"
)

// Summary is one line of a namespace's list: what a person scanning the
// list needs of an identifier (its label, status, target and last change).
type Summary struct {
	Handle  string    `json:"handle"`
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Status  string    `json:"status"`
	URL     string    `json:"url"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Identifier is the whole view of the identifier (what the API's
	// list answers); not part of an export.
	Identifier *Identifier `json:"-"`
}

// SearchQuery selects a numbered page of a namespace through the search
// index (registry/search.go).
type SearchQuery struct {
	// Q: words, each of which must start a word of the identifier's id,
	// label, URL or description (any case; letters and digits count,
	// everything else separates words).
	Q string
	// Status, if set, keeps the identifiers of this status (any case).
	Status string
	// Sort is one of SortKeys, or one of them after '-' for the reverse
	// order; "" is "id".
	Sort string
	// Page counts from 1; PageSize is 1 to MaxPageSize.
	Page, PageSize int
}

// SortKeys are the sort orders a SearchQuery names.
var SortKeys = []string{"id", "label", "created", "changed"}

// MaxPageSize bounds SearchQuery.PageSize; MaxExport the identifiers one
// export (Reader.Export) holds.
const (
	MaxPageSize = 1000
	MaxExport   = registry.MaxSearchMatches
)

// SearchPage is one page of a search: its items, the number of identifiers
// that match in all, and the page's number, size and the number of pages.
// Its JSON is the API's reply: the items as Identifiers.
type SearchPage struct {
	Items    []Summary     `json:"-"`
	Idents   []*Identifier `json:"items"`
	Total    int           `json:"total"`
	Page     int           `json:"page"`
	PageSize int           `json:"page_size"`
	Pages    int           `json:"pages"`
}

// Export formats (the format query parameter, ParseSearch).
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// ParseSearch reads a list's search from query values as the API's list
// route and the console take them: q, status, sort, page, format (csv or
// jsonl: an export) and format's default accept (what the request's
// Accept header chose, or ""). pageSize is the page size the caller
// parsed (limit). search is false when none of q, sort, page and an
// export is asked for: the caller answers cursor pages (List), which url
// and cursor belong to; combined with a search they are ErrBadQuery.
func ParseSearch(v url.Values, accept string, pageSize int) (q SearchQuery, format string, search bool, err error) {
	format = v.Get("format")
	if format == "" {
		format = accept
	} else if format != FormatCSV && format != FormatJSONL {
		return q, "", false, refuse(ErrBadQuery, "format must be csv or jsonl")
	}
	if format == "" && !v.Has("q") && !v.Has("sort") && !v.Has("page") {
		return q, "", false, nil
	}
	if v.Get("url") != "" || v.Get("cursor") != "" || v.Get("after") != "" {
		return q, "", false, refuse(ErrBadQuery, "url and cursor select cursor pages; they cannot be combined with q, sort, page or an export")
	}
	q = SearchQuery{Q: v.Get("q"), Status: v.Get("status"), Sort: v.Get("sort"), Page: 1, PageSize: pageSize}
	if p := v.Get("page"); p != "" {
		if q.Page, err = strconv.Atoi(p); err != nil || q.Page < 1 {
			return q, "", false, refuse(ErrBadQuery, "page must be an integer from 1")
		}
	}
	return q, format, true, nil
}

// registryQuery checks q and makes it the registry's query.
func (q *SearchQuery) registryQuery() (registry.SearchQuery, error) {
	var rq registry.SearchQuery
	s, desc := strings.CutPrefix(q.Sort, "-")
	switch s {
	case "", "id":
		rq.Sort = registry.SortID
	case "label":
		rq.Sort = registry.SortLabel
	case "created":
		rq.Sort = registry.SortCreated
	case "changed":
		rq.Sort = registry.SortChanged
	default:
		return rq, refuse(ErrBadQuery, fmt.Sprintf("sort %q: must be one of %s, each optionally after '-' (reverse order)", q.Sort, strings.Join(SortKeys, ", ")))
	}
	rq.Desc = desc
	if q.Page < 1 {
		return rq, refuse(ErrBadQuery, "page must be an integer from 1")
	}
	if q.PageSize < 1 || q.PageSize > MaxPageSize {
		return rq, refuse(ErrBadQuery, fmt.Sprintf("page size must be an integer from 1 to %d", MaxPageSize))
	}
	rq.Words = registry.SearchWords(q.Q)
	rq.Status = strings.ToUpper(q.Status)
	rq.Offset = (q.Page - 1) * q.PageSize
	rq.Limit = q.PageSize
	return rq, nil
}

// tooBroad is the refusal of a search that matches too many identifiers.
func tooBroad(err error) error {
	if errors.Is(err, registry.ErrSearchTooBroad) {
		return refuse(ErrBadQuery, fmt.Sprintf("the search's words match more than %d identifiers; add a word or a longer one", registry.MaxSearchMatches))
	}
	return err
}

// Search returns the page q selects of namespace ns under prefix, sorted
// as q asks, with the total. It reads the search index and the page's
// records only (the costs are registry/search.go's); a page past the last
// is empty.
func (r *Reader) Search(prefix, ns string, q SearchQuery) (*SearchPage, error) {
	rq, err := q.registryQuery()
	if err != nil {
		return nil, err
	}
	nsp, err := r.reg.NamespaceKey(prefix, ns)
	if err != nil {
		return nil, err
	}
	page := &SearchPage{Items: []Summary{}, Page: q.Page, PageSize: q.PageSize}
	err = r.reg.View(func(tx registry.Tx) error {
		keys, total, err := tx.Search(nsp, rq)
		if err != nil {
			return err
		}
		page.Total = total
		return r.summaries(tx, keys, &page.Items)
	})
	if err != nil {
		return nil, tooBroad(err)
	}
	page.Pages = (page.Total + q.PageSize - 1) / q.PageSize
	page.Idents = make([]*Identifier, len(page.Items))
	for i := range page.Items {
		page.Idents[i] = page.Items[i].Identifier
	}
	return page, nil
}

// summaries appends to out the Summary of each record of keys that still
// exists.
func (r *Reader) summaries(tx registry.Tx, keys []string, out *[]Summary) error {
	for _, k := range keys {
		st, ok, err := tx.Record(k)
		if err != nil {
			return err
		}
		if ok {
			*out = append(*out, r.summary(&st))
		}
	}
	return nil
}

// summary is the Summary of a stored record.
func (r *Reader) summary(st *store.Stored) Summary {
	label, _, status := registry.RecordText(st)
	ident := r.Identifier(st)
	return Summary{Handle: ident.Handle, ID: ident.ID, Label: string(label), Status: status, URL: ident.URL,
		Created: ident.Created, Updated: ident.Updated, Identifier: ident}
}

// exportChunk is how many records one read transaction of an export reads,
// so that a slow reader of the export never holds a transaction long.
const exportChunk = 1000

// Export writes every identifier q matches (every page; q.Page and
// q.PageSize are not used), in q's order, in format (FormatCSV,
// FormatJSONL; ExportWriter), and returns the total. start is called once,
// before the first byte, for the writer: a search refused (ErrBadQuery: more
// than MaxExport identifiers, as `pidnode export` writes whole databases)
// writes nothing and calls no start. The keys are taken in one read
// transaction, the records read in transactions of exportChunk between
// writes; one deleted meanwhile is left out. An error after start is the
// writer's or the store's: the export is cut short.
func (r *Reader) Export(prefix, ns string, q SearchQuery, format string, start func() io.Writer) (int, error) {
	q.Page, q.PageSize = 1, 1
	rq, err := q.registryQuery()
	if err != nil {
		return 0, err
	}
	rq.Offset, rq.Limit = 0, MaxExport+1
	nsp, err := r.reg.NamespaceKey(prefix, ns)
	if err != nil {
		return 0, err
	}
	var keys []string
	var total int
	err = r.reg.View(func(tx registry.Tx) error {
		keys, total, err = tx.Search(nsp, rq)
		return err
	})
	if err != nil {
		return 0, tooBroad(err)
	}
	if total > MaxExport || len(keys) > MaxExport {
		return 0, refuse(ErrBadQuery, fmt.Sprintf("the export would hold %d identifiers, more than %d; narrow the search (or use pidnode export)", total, MaxExport))
	}
	x := NewExportWriter(start(), format == FormatCSV)
	for len(keys) > 0 {
		n := min(len(keys), exportChunk)
		var items []Summary
		if err := r.reg.View(func(tx registry.Tx) error { return r.summaries(tx, keys[:n], &items) }); err != nil {
			return 0, err
		}
		keys = keys[n:]
		for i := range items {
			if err := x.Write(&items[i]); err != nil {
				return 0, err
			}
		}
	}
	return total, x.Close()
}
