package console

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/read"
	"pidnode/registry"
	"pidnode/stats"
	"pidnode/write"
)

// The SNAA's pages of the console (docs/product.md §4.2), in the session's
// namespace: reads through package read, writes through package write,
// each admitted through access.Admission as the API admits the same
// request, with the API's checks in the API's order.

func (s *Server) snaaConsoleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/ids", s.console(false, s.pageIDs))
	mux.HandleFunc("GET /console/new", s.console(false, s.pageNew))
	mux.HandleFunc("POST /console/new", s.console(false, s.pageNew))
	mux.HandleFunc("GET /console/id", s.console(false, s.pageID))
	mux.HandleFunc("GET /console/edit", s.console(false, s.pageEdit))
	mux.HandleFunc("POST /console/edit", s.console(false, s.pageEdit))
	mux.HandleFunc("POST /console/status", s.console(false, s.pageStatus))
	mux.HandleFunc("GET /console/bulk", s.console(false, s.pageBulk))
	mux.HandleFunc("POST /console/bulk", s.console(false, s.pageBulk))
	mux.HandleFunc("GET /console/keys", s.console(false, s.pageKeys))
	mux.HandleFunc("POST /console/keys", s.console(false, s.pageKeys))
	mux.HandleFunc("POST /console/keys/revoke", s.console(false, s.pageRevokeKey))
	mux.HandleFunc("GET /console/links", s.console(false, s.pageLinks))
}

// consoleBase is the base a console page works on: "test" is the test
// prefix's, anything else the production prefix's.
func (s *Server) consoleBase(name string) (*base, string) {
	if name == "test" {
		return &s.bases[1], "test"
	}
	return &s.bases[0], "pid"
}

// baseChoice is a base the SNAA may write under, for the page's switch.
type baseChoice struct {
	Name, Prefix string
	Current      bool
}

func (s *Server) baseChoices(u *consoleUser, cur string) []baseChoice {
	var out []baseChoice
	for i, b := range s.bases {
		if b.prefix == "" || !u.SNAA.MayWrite(b.prefix) {
			continue
		}
		n := "pid"
		if i == 1 {
			n = "test"
		}
		out = append(out, baseChoice{Name: n, Prefix: b.prefix, Current: n == cur})
	}
	return out
}

type idsPage struct {
	Base                string
	Bases               []baseChoice
	Status, URL, Cursor string
	Statuses            []string
	Items               []read.Identifier
	Next                string
}

// statusField is the model's field of type STATUS (what the fronts read to
// hide a record or show a tombstone), or nil.
func (s *Server) statusField() *model.FieldSpec {
	for _, f := range s.cfg.Model.Fields {
		if f.Type == "STATUS" && f.Schema != nil && f.Schema.Type == "string" {
			return f
		}
	}
	return nil
}

func (s *Server) statuses() []string {
	if f := s.statusField(); f != nil {
		return f.Schema.Enum
	}
	return nil
}

func (s *Server) pageIDs(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	pg := &idsPage{Base: bn, Bases: s.baseChoices(u, bn), Status: q.Get("status"), URL: q.Get("url"), Cursor: q.Get("cursor"), Statuses: s.statuses()}
	d.Title, d.D = "Your identifiers", pg
	// The API's checks of the status filter, the values as its reply gives
	// them (read.Plain).
	lq := read.ListQuery{Status: strings.ToUpper(q.Get("status")), URL: q.Get("url"), Cursor: q.Get("cursor"), Limit: 50}
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	var items []read.Identifier
	var next string
	if err == nil {
		if msg := s.cfg.Read.StatusFilter(lq.Status); msg != "" {
			p := problem(http.StatusBadRequest, "status %s", msg)
			p.Errors = []model.FieldError{{Field: "status", Message: msg}}
			err = p
		} else {
			items, next, err = s.cfg.Read.List(t.Prefix, t.Namespace, lq)
		}
	}
	for i := range items {
		items[i] = *items[i].Plain()
	}
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "ids", d)
		return nil
	}
	pg.Items, pg.Next = items, next
	s.render(w, http.StatusOK, "ids", d)
	return nil
}

// formPage is the data of the create and edit forms.
type formPage struct {
	Base    string
	Bases   []baseChoice
	Form    *formNode
	ID      string // edit: the identifier's id; create: the custom id typed
	Custom  bool   // the SNAA may choose custom ids
	Version uint64 // edit: the version the form was filled from
	Handle  string
}

// listOp is the list button pressed, if any ("add:…" or "remove:…").
func listOp(f url.Values) string {
	if v := f.Get("list"); strings.HasPrefix(v, "add:") || strings.HasPrefix(v, "remove:") {
		return v
	}
	return ""
}

func (s *Server) pageNew(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	pg := &formPage{Base: bn, Bases: s.baseChoices(u, bn), Custom: u.SNAA.CustomIDs, ID: strings.TrimSpace(q.Get("custom_id"))}
	d.Title, d.D = "New identifier", pg
	if r.Method == http.MethodGet {
		pg.Form = buildForm("", "", s.payloadSchema(), true, nil, true)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	payload := s.formPayload(r.PostForm, false)
	if op := listOp(r.PostForm); op != "" {
		editList(payload, op)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	ident, err := s.consoleCreate(r, u, b, pg.ID, payload)
	if err != nil {
		d.Problem, _ = problemOf(err)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, d.Problem.Status, "edit", d)
		return nil
	}
	http.Redirect(w, r, idURL(bn, ident.ID, "created"), http.StatusSeeOther)
	return nil
}

// consoleCreate creates an identifier from a form's payload through the
// write service, with the API's checks in the API's order: admitted as a
// PUT, the custom id checked before the payload, the body's size limit,
// the payload decoded as the API decodes a body.
func (s *Server) consoleCreate(r *http.Request, u *consoleUser, b *base, customID string, payload map[string]any) (*read.Identifier, error) {
	t, err := s.consoleTarget(r, u, b, http.MethodPut)
	if err != nil {
		return nil, err
	}
	if customID != "" {
		if err := s.cfg.Writes.CheckCustomID(u.writer(), t, customID); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	obj, err := s.consoleBody(body)
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Writes.Create(u.writer(), t, write.CreateRequest{CustomID: customID, Payload: obj})
	if err != nil {
		return nil, err
	}
	s.written(1, 0)
	return s.cfg.Read.IdentifierOf(&res.Stored, *res.Content), nil
}

// consoleUpdate updates identifier id from a form's JSON body through the
// write service, as the API's PUT with If-Match ifMatch ("" for none).
func (s *Server) consoleUpdate(r *http.Request, u *consoleUser, b *base, id, ifMatch string, body []byte) error {
	t, err := s.consoleTarget(r, u, b, http.MethodPut)
	if err != nil {
		return err
	}
	obj, err := s.consoleBody(body)
	if err != nil {
		return err
	}
	res, err := s.cfg.Writes.Update(u.writer(), t, write.UpdateRequest{ID: id, Payload: obj, IfMatch: ifMatch})
	if err == nil && res.Written {
		s.written(0, 1)
	}
	return err
}

// BulkResult is the outcome of one bulk item, as the API's reply gives it.
type BulkResult struct {
	Status int
	Title  string
	Handle string
	Detail string
	Errors []model.FieldError
}

// consoleBulk runs a bulk of JSON Lines as the API's POST …/bulk does:
// admitted (its items charged to the rate limit once counted, one request
// if refused before), refused in maintenance, the body's size limit, the
// items decoded as the API decodes them (write.BulkItems), the write
// service's Bulk, each item's result.
func (s *Server) consoleBulk(r *http.Request, u *consoleUser, b *base, body []byte) ([]BulkResult, error) {
	if err := s.cfg.Admission.Admit(u.Key, u.SNAA, true, true); err != nil {
		return nil, err
	}
	t, err := checkBase(b, u)
	if err != nil {
		if lerr := s.cfg.Admission.Charge(u.Key.ID, u.SNAA.ID, 1); lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	if err := s.cfg.Admission.Writable(); err != nil {
		return nil, err
	}
	var arr []model.BulkItem
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		err = problem(http.StatusRequestEntityTooLarge, "request body of %d bytes exceeds the limit of %d bytes", len(body), s.cfg.MaxBodyBytes)
	} else {
		arr, err = model.DecodeBulkJSON(body, true)
	}
	if lerr := s.cfg.Admission.Charge(u.Key.ID, u.SNAA.ID, write.BulkCost(len(arr))); lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Writes.Bulk(u.writer(), t, arr)
	if err != nil {
		return nil, err
	}
	out := make([]BulkResult, len(res))
	var created, updated int
	for i, it := range res {
		switch {
		case it.Err != nil:
			p, _ := problemOf(it.Err)
			out[i] = BulkResult{Status: p.Status, Title: p.Title, Detail: p.Detail, Errors: p.Errors}
		case it.Created:
			out[i] = BulkResult{Status: http.StatusCreated, Handle: it.Handle}
			created++
		default:
			out[i] = BulkResult{Status: http.StatusOK, Handle: it.Handle}
			updated++
		}
	}
	s.written(created, updated)
	return out, nil
}

// consoleBody is a form's JSON body as the API reads a request's: within
// its size limit, decoded strictly.
func (s *Server) consoleBody(body []byte) (map[string]any, error) {
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		return nil, problem(http.StatusRequestEntityTooLarge, "request body of %d bytes exceeds the limit of %d bytes", len(body), s.cfg.MaxBodyBytes)
	}
	return model.DecodeObject(body)
}

func idURL(base, id, done string) string {
	v := url.Values{"base": {base}, "id": {id}}
	if done != "" {
		v.Set("done", done)
	}
	return "/console/id?" + v.Encode()
}

// consoleTarget admits a request of u on its namespace on base b as the
// API admits one with method (suspension, rate limit, and for a write
// maintenance mode; a form's POST also reads) and checks that u may write
// under the base's prefix.
func (s *Server) consoleTarget(r *http.Request, u *consoleUser, b *base, method string) (write.Target, error) {
	if err := s.cfg.Admission.Admit(u.Key, u.SNAA, method != http.MethodGet && method != http.MethodHead, false); err != nil {
		return write.Target{}, err
	}
	return checkBase(b, u)
}

// checkBase is u's namespace under base b's prefix, if u may write there:
// the API's checks of a path in u's own namespace.
func checkBase(b *base, u *consoleUser) (write.Target, error) {
	if b.prefix == "" {
		return write.Target{}, problem(http.StatusNotFound, "this node has no test prefix; %s is not available", b.path)
	}
	if !u.SNAA.MayWrite(b.prefix) {
		return write.Target{}, problem(http.StatusForbidden, "SNAA %s may not use prefix %s (allowed: %s)",
			u.SNAA.ID, b.prefix, strings.Join(u.SNAA.Prefixes, ", "))
	}
	return write.Target{Prefix: b.prefix, Namespace: u.SNAA.Namespace}, nil
}

// readIdent reads identifier id through package read, its values as the
// API's reply gives them (read.Plain).
func (s *Server) readIdent(r *http.Request, u *consoleUser, b *base, id string) (*read.Identifier, error) {
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return nil, err
	}
	ident, err := s.cfg.Read.Get(t.Prefix, t.Namespace, id)
	if err != nil {
		return nil, err
	}
	return ident.Plain(), nil
}

func (s *Server) pageEdit(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	id := q.Get("id")
	pg := &formPage{Base: bn, ID: id}
	d.Title, d.D = "Edit "+id, pg
	if r.Method == http.MethodGet {
		ident, err := s.readIdent(r, u, b, id)
		if err != nil {
			return err
		}
		pg.Version, pg.Handle = ident.Version, ident.Handle
		pg.Form = buildForm("", "", s.payloadSchema(), true, map[string]any{"url": ident.URL, "metadata": ident.Metadata}, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	pg.Version, _ = strconv.ParseUint(q.Get("version"), 10, 64)
	pg.Handle = q.Get("handle")
	if op := listOp(r.PostForm); op != "" {
		payload := s.formPayload(r.PostForm, false)
		editList(payload, op)
		pg.Form = buildForm("", "", s.payloadSchema(), true, payload, false)
		s.render(w, http.StatusOK, "edit", d)
		return nil
	}
	payload := s.formPayload(r.PostForm, true)
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	ifMatch := ""
	if pg.Version > 0 {
		ifMatch = write.ETag(pg.Version)
	}
	if err := s.consoleUpdate(r, u, b, id, ifMatch, body); err != nil {
		d.Problem, _ = problemOf(err)
		pg.Form = buildForm("", "", s.payloadSchema(), true, s.formPayload(r.PostForm, false), false)
		s.render(w, d.Problem.Status, "edit", d)
		return nil
	}
	http.Redirect(w, r, idURL(bn, id, "saved"), http.StatusSeeOther)
	return nil
}

// historyRow is one write of an identifier, as the page shows it.
type historyRow struct {
	read.HistoryEntry
	Changed []string
}

// chart is the SVG bar chart of resolutions per day.
type chart struct {
	Days       []stats.DayCount
	Bars       []bar
	Total, Max uint64
	From, To   string
}

type bar struct {
	X, Y, W, H string
	Label      string
}

func newChart(st *stats.Reply) *chart {
	c := &chart{Total: st.Total, From: st.From, To: st.To}
	// Every day of the range, those without resolutions too.
	counts := map[string]uint64{}
	for _, d := range st.Days {
		counts[d.Date] = d.Count
	}
	from, ferr := time.Parse(time.DateOnly, st.From)
	to, terr := time.Parse(time.DateOnly, st.To)
	if ferr == nil && terr == nil && !to.Before(from) && to.Sub(from) <= 400*24*time.Hour {
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			k := d.Format(time.DateOnly)
			c.Days = append(c.Days, stats.DayCount{Date: k, Count: counts[k]})
		}
	} else {
		c.Days = st.Days
	}
	st = &stats.Reply{Days: c.Days}
	for _, d := range st.Days {
		c.Max = max(c.Max, d.Count)
	}
	n := len(st.Days)
	if n == 0 {
		return c
	}
	const width, height = 600.0, 150.0
	w := width / float64(n)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for i, d := range st.Days {
		h := 0.0
		if c.Max > 0 {
			h = height * float64(d.Count) / float64(c.Max)
		}
		if d.Count > 0 && h < 1 {
			h = 1
		}
		c.Bars = append(c.Bars, bar{X: f(float64(i)*w + 1), Y: f(height - h), W: f(max(w-2, 1)), H: f(h), Label: fmt.Sprintf("%s: %d", d.Date, d.Count)})
	}
	return c
}

// changedPaths names what a history entry changed: the URL and the
// metadata fields whose JSON differs.
func changedPaths(before, after any) []string {
	bm, _ := before.(map[string]any)
	am, _ := after.(map[string]any)
	var out []string
	if fmt.Sprint(bm["url"]) != fmt.Sprint(am["url"]) {
		out = append(out, "url")
	}
	bmeta, _ := bm["metadata"].(map[string]any)
	ameta, _ := am["metadata"].(map[string]any)
	keys := map[string]bool{}
	for k := range bmeta {
		keys[k] = true
	}
	for k := range ameta {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		x, _ := json.Marshal(bmeta[k])
		y, _ := json.Marshal(ameta[k])
		if !bytes.Equal(x, y) {
			out = append(out, "metadata."+k)
		}
	}
	return out
}

type idPage struct {
	Base     string
	Ident    *read.Identifier
	History  []historyRow
	Chart    *chart
	Statuses []string
	Status   string
	Done     string
}

func (s *Server) pageID(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	id := q.Get("id")
	ident, err := s.readIdent(r, u, b, id)
	if err != nil {
		return err
	}
	pg := &idPage{Base: bn, Ident: ident, Statuses: s.statuses()}
	switch q.Get("done") {
	case "created":
		d.Flash = "The identifier was created."
	case "saved":
		d.Flash = "Your changes were saved."
	case "status":
		d.Flash = "The status was changed."
	}
	if f := s.statusField(); f != nil {
		pg.Status, _ = ident.Metadata[f.Name].(string)
	}
	d.Title, d.D = ident.Handle, pg
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	hist, err := s.cfg.Read.History(t.Prefix, t.Namespace, id)
	if err != nil {
		return err
	}
	for i := len(hist.Changes) - 1; i >= 0; i-- {
		h := hist.Changes[i]
		h.Before, h.After = read.Plain(h.Before), read.Plain(h.After)
		pg.History = append(pg.History, historyRow{HistoryEntry: h, Changed: changedPaths(h.Before, h.After)})
	}
	if s.cfg.Stats != nil {
		// The API's GET …/{id}/stats, admitted as one more request.
		if err := s.cfg.Admission.Admit(u.Key, u.SNAA, false, false); err != nil {
			return err
		}
		from, to := s.cfg.StatsDays()
		st, err := s.cfg.Stats(r.Context(), route.Target{Prefix: t.Prefix, Namespace: t.Namespace}, id, from, to)
		if err != nil {
			return err
		}
		pg.Chart = newChart(st)
	}
	s.render(w, http.StatusOK, "id", d)
	return nil
}

// tombstone is what the resolver's tombstone page will show of a record,
// read by value type as the fronts read it (docs/metadata-model.md).
type tombstone struct {
	Status, Label, Description, Contact string
	Related                             []string
}

func (s *Server) tombstoneOf(ident *read.Identifier, status string) *tombstone {
	t := &tombstone{Status: status}
	for _, f := range s.cfg.Model.Fields {
		v := ident.Metadata[f.Name]
		switch f.Type {
		case "RESOURCE":
			// The field as JSON text again, read as the resolver's
			// tombstone reads the stored value.
			text, _ := json.Marshal(v)
			r, _, _ := handlev.ReadResource(text, nil)
			t.Label, t.Description = string(r.Label), string(r.Description)
		case "EMAIL":
			t.Contact, _ = v.(string)
		case "RELATED":
			list, _ := v.([]any)
			for _, it := range list {
				m, _ := it.(map[string]any)
				ri, _ := m["related_identifier"].(map[string]any)
				t.Related = append(t.Related, fmt.Sprintf("%v %v", m["relation_type"], ri["identifier"]))
			}
		}
	}
	return t
}

type statusPage struct {
	Base, ID, Status string
	Version          uint64
	Ident            *read.Identifier
	Tomb             *tombstone
}

// pageStatus changes an identifier's status. A change that makes it a
// tombstone (OBSOLETED, DEPRECATED) first shows what the tombstone page
// will show and asks for confirmation.
func (s *Server) pageStatus(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	f := s.statusField()
	if f == nil {
		return problem(http.StatusNotFound, "the metadata model has no status field")
	}
	b, bn := s.consoleBase(r.PostForm.Get("base"))
	id, status := r.PostForm.Get("id"), r.PostForm.Get("status")
	version, _ := strconv.ParseUint(r.PostForm.Get("version"), 10, 64)
	if (status == "OBSOLETED" || status == "DEPRECATED") && r.PostForm.Get("confirm") != "yes" {
		ident, err := s.readIdent(r, u, b, id)
		if err != nil {
			return err
		}
		d.Title = "Make " + ident.Handle + " a tombstone?"
		d.D = &statusPage{Base: bn, ID: id, Status: status, Version: version, Ident: ident, Tomb: s.tombstoneOf(ident, status)}
		s.render(w, http.StatusOK, "status", d)
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{f.Name: status}})
	if err != nil {
		return err
	}
	ifMatch := ""
	if version > 0 {
		ifMatch = write.ETag(version)
	}
	if err := s.consoleUpdate(r, u, b, id, ifMatch, body); err != nil {
		return err
	}
	http.Redirect(w, r, idURL(bn, id, "status"), http.StatusSeeOther)
	return nil
}

type bulkPage struct {
	Base    string
	Bases   []baseChoice
	Format  string
	Text    string
	Results []bulkRow
}

type bulkRow struct {
	Row int
	BulkResult
}

var listIndexRE = regexp.MustCompile(`^(.*)\[(\d+)\]`)

// csvToLines turns CSV whose header names the generated form's inputs ("id",
// "url", "metadata.status", "metadata.resource_info.representation_variants[0].variant_url")
// into JSON Lines, each row decoded as the form is.
func (s *Server) csvToLines(text string) ([]byte, error) {
	rd := csv.NewReader(strings.NewReader(text))
	rd.FieldsPerRecord = -1
	head, err := rd.Read()
	if err != nil {
		return nil, problem(http.StatusBadRequest, "CSV: the first row must name the columns: %v", err)
	}
	var out bytes.Buffer
	for row := 1; ; row++ {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, problem(http.StatusBadRequest, "CSV row %d: %v", row, err)
		}
		f := url.Values{}
		for i, h := range head {
			if i >= len(rec) || rec[i] == "" {
				continue
			}
			h = strings.TrimSpace(h)
			f.Set(h, rec[i])
			// Every list an input names holds at least up to its index.
			for p := h; ; {
				m := listIndexRE.FindStringSubmatch(p)
				if m == nil {
					break
				}
				n, _ := strconv.Atoi(m[2])
				if cur, _ := strconv.Atoi(f.Get(m[1] + "#n")); cur < n+1 {
					f.Set(m[1]+"#n", strconv.Itoa(n+1))
				}
				p = m[1]
			}
		}
		item := s.formPayload(f, false)
		if id := strings.TrimSpace(f.Get("id")); id != "" {
			item["id"] = id
		}
		b, err := json.Marshal(item)
		if err != nil {
			return nil, err
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

func (s *Server) pageBulk(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	b, bn := s.consoleBase(q.Get("base"))
	pg := &bulkPage{Base: bn, Bases: s.baseChoices(u, bn), Format: q.Get("format")}
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
			if strings.HasSuffix(strings.ToLower(fh[0].Filename), ".csv") && pg.Format == "" {
				pg.Format = "csv"
			}
		}
	}
	pg.Text = text
	body := []byte(text)
	if pg.Format == "csv" {
		lines, err := s.csvToLines(text)
		if err != nil {
			d.Problem, _ = problemOf(err)
			s.render(w, d.Problem.Status, "bulk", d)
			return nil
		}
		body = lines
	}
	items, err := s.consoleBulk(r, u, b, body)
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "bulk", d)
		return nil
	}
	for i, it := range items {
		pg.Results = append(pg.Results, bulkRow{Row: i + 1, BulkResult: it})
	}
	s.render(w, http.StatusOK, "bulk", d)
	return nil
}

type keysPage struct {
	Keys   []registry.Key
	Issued *operator.IssuedKey
	Mine   string // the session's key id
	Name   string
}

// pageKeys lists the SNAA's keys and issues a new one (self-service
// rotation: issue a second key, then revoke the first). The new key's
// secret is shown once, on the reply to the POST, never in a URL.
func (s *Server) pageKeys(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	pg := &keysPage{Mine: u.Key.ID}
	d.Title, d.D = "Your API keys", pg
	if r.Method == http.MethodPost {
		pg.Name = r.PostForm.Get("name")
		ik, err := s.issueKey(u.actor(), u.SNAA.ID, pg.Name)
		if err != nil {
			p, ok := problemOf(err)
			if !ok {
				return err
			}
			d.Problem = p
		} else {
			pg.Issued, pg.Name = ik, ""
			s.log.Info("console: key issued by its SNAA", "snaa", u.SNAA.ID, "key", ik.ID)
		}
	}
	keys, err := s.cfg.Keys.List(u.SNAA.ID)
	if err != nil {
		return err
	}
	pg.Keys = keys
	status := http.StatusOK
	if d.Problem != nil {
		status = d.Problem.Status
	}
	s.render(w, status, "keys", d)
	return nil
}

func (s *Server) pageRevokeKey(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	keyID := r.PostForm.Get("key_id")
	keys, err := s.cfg.Keys.List(u.SNAA.ID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(keys, func(k registry.Key) bool { return k.ID == keyID }) {
		return problem(http.StatusNotFound, "you have no key %q", keyID)
	}
	if err := s.cfg.Keys.Revoke(u.actor(), u.SNAA.ID, keyID); err != nil {
		return err
	}
	// Revoking the session's own key ends the session with the next request.
	http.Redirect(w, r, "/console/keys", http.StatusSeeOther)
	return nil
}
