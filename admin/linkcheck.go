package admin

import (
	"encoding/base64"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pidnode/registry"
)

// The link checker's results (docs/product.md §4.4), as an SNAA sees them:
// GET …/handles/{prefix}/{ns}/linkcheck lists the namespace's URLs that are
// not ok (from the results' per-namespace index, never another namespace's),
// GET …/{ns}/{id}/linkcheck one identifier's every result. JSON, or CSV on
// Accept: text/csv. admin only reads them: the checker (package linkcheck)
// writes them.

// LinkcheckPage is the JSON reply of the namespace's listing.
type LinkcheckPage struct {
	Targets    []registry.LinkResult `json:"targets"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// LinkcheckRecord is the JSON reply of one identifier's results.
type LinkcheckRecord struct {
	Handle  string                `json:"handle"`
	Results []registry.LinkResult `json:"results"`
}

// linkcheckStates reads ?state=: broken, recovering, failing or all (every
// state that is listed); absent, broken and recovering: what needs a
// curator's look.
func linkcheckStates(q url.Values) ([]string, *Problem) {
	v, ok := q["state"]
	if !ok {
		return []string{registry.LinkBroken, registry.LinkRecovering}, nil
	}
	bad := func(msg string) *Problem {
		p := problem(http.StatusBadRequest, "state %s", msg)
		p.Errors = []FieldError{{Field: "state", Message: msg}}
		return p
	}
	if len(v) != 1 {
		return nil, bad("must be given once")
	}
	switch s := strings.ToLower(v[0]); s {
	case registry.LinkBroken, registry.LinkRecovering, registry.LinkFailing:
		return []string{s}, nil
	case "all":
		return nil, nil
	}
	return nil, bad("must be one of broken, recovering, failing, all")
}

// wantsCSV reports whether Accept's first media range that names a type
// this route serves (q=0 ranges skipped) is text/csv.
func wantsCSV(accept string) bool {
	return firstAccepted(accept, []string{"text/csv", "application/json"}) == "text/csv"
}

// linkcheckRoutes are the namespace routes GET …/{ns}/linkcheck and
// GET …/{id}/linkcheck.
func linkcheckRoutes(s *Server) []nsRoute {
	return []nsRoute{
		{name: "linkcheck", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, _ string) error {
			return s.linkcheckList(w, r, t)
		}, ops: []nsOp{{"GET", "linkcheck", op{summary: "The link checker's findings in the namespace: its identifiers' target and representation variant URLs that are broken (failed the configured number of consecutive checks over the minimum age), recovering (answered again after being broken) or failing (not yet broken), with status, error class, final URL, check time, first failure and consecutive failures; paged by cursor, as JSON or CSV",
			auth: "snaa", ok: 200, okSchema: "LinkcheckPage", csv: true,
			query:   []param{{"state", "broken, recovering, failing or all (default: broken and recovering)"}, {"limit", "1–1000, default 100"}, {"cursor", "next_cursor of the previous page (after= is the same)"}},
			headers: []param{{"Accept", "application/json (default) or text/csv"}}, tag: "snaa"}}}},
		{suffix: "linkcheck", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, id string) error {
			return s.linkcheckOne(w, r, t, id)
		}, ops: []nsOp{{"GET", "linkcheck", op{summary: "The link checker's last result of each URL of the identifier (target and representation variants), whatever its state",
			auth: "snaa", ok: 200, okSchema: "LinkcheckRecord", csv: true,
			headers: []param{{"Accept", "application/json (default) or text/csv"}}, tag: "snaa"}}}},
	}
}

// linkcheckList serves GET …/handles/{prefix}/{ns}/linkcheck.
func (s *Server) linkcheckList(w http.ResponseWriter, r *http.Request, t target) error {
	cur, limit, p := pageParams(r)
	if p != nil {
		return p
	}
	states, p := linkcheckStates(r.URL.Query())
	if p != nil {
		return p
	}
	from, ok := decodeLinkCursor(cur)
	if !ok {
		return problem(http.StatusBadRequest, "invalid cursor: use next_cursor of the previous page")
	}
	nsp, err := s.reg.NamespaceKey(t.prefix, t.ns)
	if err != nil {
		return err
	}
	var page LinkcheckPage
	err = s.reg.View(func(tx registry.Tx) error {
		var next string
		var err error
		page.Targets, next, err = tx.NamespaceLinks(nsp, states, from, limit)
		if next != "" {
			page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(next))
		}
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
	writeJSON(w, http.StatusOK, &page)
	return nil
}

// decodeLinkCursor reads a cursor of the listing ("" for the start).
func decodeLinkCursor(cur string) (string, bool) {
	if cur == "" {
		return "", true
	}
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}

// linkcheckOne serves GET …/handles/{prefix}/{ns}/{id}/linkcheck.
func (s *Server) linkcheckOne(w http.ResponseWriter, r *http.Request, t target, id string) error {
	display := s.namer.Full(t.prefix, t.ns, id)
	key, _, err := s.namer.Key(display)
	if err != nil {
		return problem(http.StatusNotFound, "no identifier %s: %v", display, err)
	}
	out := LinkcheckRecord{Results: []registry.LinkResult{}}
	var found bool
	err = s.reg.View(func(tx registry.Tx) error {
		st, ok, err := tx.Record(key)
		if err != nil || !ok {
			return err
		}
		found, out.Handle = true, st.Record.Handle
		rs, err := tx.LinkResults(key)
		if rs != nil {
			out.Results = rs
		}
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		return problem(http.StatusNotFound, "no identifier %s", display)
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsCSV(r.Header.Get("Accept")) {
		return writeLinkCSV(w, out.Results)
	}
	writeJSON(w, http.StatusOK, &out)
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
