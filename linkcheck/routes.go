package linkcheck

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/route"
	"pidnode/registry"
	"pidnode/store"
)

// The link checker's results (docs/product.md §4.4), as an SNAA sees them:
// GET …/handles/{prefix}/{ns}/linkcheck lists the namespace's URLs that are
// not ok (from the results' per-namespace index, never another namespace's),
// GET …/{ns}/{id}/linkcheck one identifier's every result. JSON, or CSV on
// Accept: text/csv. The API checks the caller's key and namespace before a
// handler runs and writes its errors as problem+json.

// Page is the JSON reply of the namespace's listing (the API's
// "LinkcheckPage" schema).
type Page struct {
	Targets    []registry.LinkResult `json:"targets"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// Record is the JSON reply of one identifier's results (the API's
// "LinkcheckRecord" schema).
type Record struct {
	Handle  string                `json:"handle"`
	Results []registry.LinkResult `json:"results"`
}

// linkcheckStates reads ?state= (States), given at most once.
func linkcheckStates(q url.Values) ([]string, error) {
	v, given := q["state"]
	if given && len(v) != 1 {
		return nil, route.FieldErrorf("state", "must be given once")
	}
	st := ""
	if given {
		st = v[0]
	}
	states, ok := States(st, given)
	if !ok {
		return nil, route.FieldErrorf("state", StatesMsg)
	}
	return states, nil
}

// wantsCSV reports whether Accept's first media range that names a type
// this route serves (q=0 ranges skipped) is text/csv.
func wantsCSV(accept string) bool {
	return route.FirstAccepted(accept, []string{"text/csv", "application/json"}) == "text/csv"
}

// Routes are the feature's namespace routes, GET …/{ns}/linkcheck and
// GET …/{ns}/{id}/linkcheck, as rows of the API's table: they read the
// results of db (identifiers' storage keys by namer).
func Routes(db *store.DB, namer *handlev.Namer) []route.Route {
	rr := &routes{db: db, namer: namer}
	accept := []route.Param{{Name: "Accept", Desc: "application/json (default) or text/csv"}}
	csv := []route.Param{{Name: "text/csv", Desc: "RFC 4180 CSV with a header row: " + strings.Join(linkCSVHeader, ", ") + "; a next page is in the Link header (rel=\"next\")"}}
	return []route.Route{
		{Name: "linkcheck", H: func(w http.ResponseWriter, r *http.Request, t route.Target, _ string) error {
			return rr.list(w, r, t)
		}, Ops: []route.Op{{Method: "GET", Path: "linkcheck", Doc: route.Doc{Summary: "The link checker's findings in the namespace: its identifiers' target and representation variant URLs that are broken (failed the configured number of consecutive checks over the minimum age), recovering (answered again after being broken) or failing (not yet broken), with status, error class, final URL, check time, first failure and consecutive failures; paged by cursor, as JSON or CSV",
			Auth: "snaa", OK: 200, OKSchema: "LinkcheckPage", Alt: csv,
			Query:   []route.Param{{Name: "state", Desc: "broken, recovering, failing or all (default: broken and recovering)"}, {Name: "limit", Desc: "1–1000, default 100"}, {Name: "cursor", Desc: "next_cursor of the previous page (after= is the same)"}},
			Headers: accept, Tag: "snaa"}}}},
		{Suffix: "linkcheck", H: rr.one, Ops: []route.Op{{Method: "GET", Path: "linkcheck", Doc: route.Doc{Summary: "The link checker's last result of each URL of the identifier (target and representation variants), whatever its state",
			Auth: "snaa", OK: 200, OKSchema: "LinkcheckRecord", Alt: csv, Headers: accept, Tag: "snaa"}}}},
	}
}

// routes serves the routes over the results' storage.
type routes struct {
	db    *store.DB
	namer *handlev.Namer
}

// list serves GET …/handles/{prefix}/{ns}/linkcheck.
func (rr *routes) list(w http.ResponseWriter, r *http.Request, t route.Target) error {
	cur, limit, perr := route.PageParams(r)
	if perr != nil {
		return perr
	}
	states, err := linkcheckStates(r.URL.Query())
	if err != nil {
		return err
	}
	var page Page
	err = rr.db.View(func(tx *store.Tx) error {
		var err error
		page, err = List(tx, rr.namer, t.Prefix, t.Namespace, states, cur, limit)
		return err
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsCSV(r.Header.Get("Accept")) {
		if page.NextCursor != "" {
			q := r.URL.Query()
			q.Del("after")
			q.Set("cursor", page.NextCursor)
			w.Header().Set("Link", "<"+r.URL.Path+"?"+q.Encode()+`>; rel="next"`)
		}
		return writeLinkCSV(w, page.Targets)
	}
	route.WriteJSON(w, http.StatusOK, &page)
	return nil
}

// one serves GET …/handles/{prefix}/{ns}/{id}/linkcheck.
func (rr *routes) one(w http.ResponseWriter, r *http.Request, t route.Target, id string) error {
	display := rr.namer.Full(t.Prefix, t.Namespace, id)
	key, _, err := rr.namer.Key(display)
	if err != nil {
		return route.Errorf(http.StatusNotFound, "no identifier %s: %v", display, err)
	}
	out := Record{Results: []registry.LinkResult{}}
	var found bool
	err = rr.db.View(func(tx *store.Tx) error {
		st, ok, err := tx.Record(key)
		if err != nil || !ok {
			return err
		}
		found, out.Handle = true, st.Record.Handle
		rs, err := Results(tx, key)
		if rs != nil {
			out.Results = rs
		}
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		return route.Errorf(http.StatusNotFound, "no identifier %s", display)
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsCSV(r.Header.Get("Accept")) {
		return writeLinkCSV(w, out.Results)
	}
	route.WriteJSON(w, http.StatusOK, &out)
	return nil
}

// linkCSVHeader are the CSV columns, one row per URL.
var linkCSVHeader = []string{"handle", "url", "kind", "state", "status", "error", "final_url", "checked", "since", "first_failure", "failures"}

// writeLinkCSV writes results as RFC 4180 CSV with a header row. A cell
// that a spreadsheet would take for a formula (=, +, -, @, tab, CR first)
// gets a leading apostrophe.
func writeLinkCSV(w http.ResponseWriter, rs []registry.LinkResult) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	cw.Write(linkCSVHeader)
	tm := func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	for i := range rs {
		r := &rs[i]
		status := ""
		if r.Status != 0 {
			status = strconv.Itoa(r.Status)
		}
		row := []string{r.Handle, r.URL, r.Kind, r.State, status, r.Error, r.FinalURL, tm(&r.Checked), tm(&r.Since), tm(r.FirstFailure), strconv.Itoa(r.Failures)}
		for j, c := range row {
			row[j] = csvCell(c)
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
