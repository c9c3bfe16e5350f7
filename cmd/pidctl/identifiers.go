package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// basePath picks /pid/v2 or /testpid/v2 for a prefix.
func (c *client) basePath(prefix string) string {
	switch {
	case c.test:
		return "/testpid/v2"
	case c.prod:
		return "/pid/v2"
	}
	if _, after, ok := strings.Cut(prefix, "."); ok && strings.HasPrefix(strings.ToUpper(after), "T") {
		return "/testpid/v2"
	}
	return "/pid/v2"
}

// handlePath turns a handle into its admin path.
func (c *client) handlePath(h string) (string, error) {
	h = strings.TrimPrefix(strings.TrimPrefix(h, "hdl:"), "https://hdl.handle.net/")
	parts := strings.Split(h, "/")
	if len(parts) < 3 {
		return "", usageErr("handle %q: want PREFIX/svc/NS/ID or PREFIX/NS/ID", h)
	}
	prefix := parts[0]
	rest := parts[1:]
	if len(rest) >= 3 && strings.EqualFold(rest[0], c.svc) {
		rest = rest[1:]
	}
	esc := make([]string, len(rest))
	for i, p := range rest {
		esc[i] = url.PathEscape(p)
	}
	return c.basePath(prefix) + "/handles/" + url.PathEscape(prefix) + "/" + strings.Join(esc, "/"), nil
}

// readInput reads a file, or stdin for "-".
func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

// payload builds a write body from --file, or --url and --metadata; --status
// sets metadata.status in either (an update with --status alone changes
// only the status: the API merges metadata field by field).
func (c *client) payload() ([]byte, error) {
	status := c.v("status")
	if f := c.v("file"); f != "" {
		b, err := readInput(f)
		if err != nil || status == "" {
			return b, err
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(b, &p); err != nil || p == nil {
			return nil, fmt.Errorf("%s: --status needs the file to be a JSON object: %v", f, err)
		}
		if p["metadata"], err = withStatus(p["metadata"], status); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		return json.Marshal(p)
	}
	p := map[string]any{}
	if u := c.v("url"); u != "" {
		p["url"] = u
	}
	var meta json.RawMessage
	if m := c.v("metadata"); m != "" {
		b, err := readInput(m)
		if err != nil {
			return nil, err
		}
		meta = b
	}
	if status != "" {
		var err error
		if meta, err = withStatus(meta, status); err != nil {
			return nil, fmt.Errorf("--metadata: %w", err)
		}
	}
	if meta != nil {
		p["metadata"] = meta
	}
	if len(p) == 0 {
		return nil, usageErr("give --file PAYLOAD.json, or --url, --metadata FILE and/or --status S")
	}
	return json.Marshal(p)
}

// withStatus returns the metadata object meta (none: an empty one) with
// its status set. The value is sent as typed: the API checks it against
// the model and names the allowed values if it is not one of them.
func withStatus(meta json.RawMessage, status string) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil || m == nil {
			return nil, fmt.Errorf("the metadata must be a JSON object to set --status in it")
		}
	}
	m["status"], _ = json.Marshal(status)
	return json.Marshal(m)
}

func (c *client) whoami() (map[string]any, error) {
	base := "/pid/v2"
	if c.test {
		base = "/testpid/v2"
	}
	b, _, err := c.do("GET", base+"/me", nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

func cmdWhoami(c *client, pos []string) error {
	base := "/pid/v2"
	if c.test {
		base = "/testpid/v2"
	}
	b, _, err := c.do("GET", base+"/me", nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var m struct {
			SNAA     map[string]any
			Prefix   string
			MayWrite bool `json:"may_write"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "SNAA %s (%s), namespace %s; under %s: may write %v\n",
			show(m.SNAA["id"]), show(m.SNAA["organisation"]), show(m.SNAA["namespace"]), m.Prefix, m.MayWrite)
		return nil
	})
}

func (c *client) printIdentifier(b []byte) error {
	var id struct {
		Handle, URL string
		Version     int
		Metadata    map[string]any
		Links       struct{ Resolve string }
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "handle:\t%s\n", id.Handle)
	fmt.Fprintf(tw, "url:\t%s\n", id.URL)
	fmt.Fprintf(tw, "status:\t%s\n", show(id.Metadata["status"]))
	fmt.Fprintf(tw, "version:\t%d\n", id.Version)
	fmt.Fprintf(tw, "resolve:\t%s\n", id.Links.Resolve)
	if ri, ok := id.Metadata["resource_info"].(map[string]any); ok {
		fmt.Fprintf(tw, "label:\t%s\n", show(ri["label"]))
		fmt.Fprintf(tw, "category:\t%s\n", show(ri["resource_category"]))
	}
	return tw.Flush()
}

func cmdCreate(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("create takes no positional arguments")
	}
	body, err := c.payload()
	if err != nil {
		return err
	}
	me, err := c.whoami()
	if err != nil {
		return err
	}
	var path string
	if id := c.v("custom-id"); id != "" {
		path = show(me["base"]) + "?customid=" + url.QueryEscape(id)
		b, _, err := c.do("PUT", path, body, "Idempotency-Key", c.v("idempotency-key"))
		if err != nil {
			return err
		}
		c.noteCustomID(id, b)
		return c.emit(b, func() error { return c.printIdentifier(b) })
	}
	path = show(me["collection"])
	b, _, err := c.do("POST", path, body, "Idempotency-Key", c.v("idempotency-key"))
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.printIdentifier(b) })
}

// noteCustomID says on stderr when the node wrote the custom id typed other
// than as typed: it stores ids in upper case (docs/product.md §2, matching
// folds ASCII case), and pidctl sends the id as typed and shows the node's
// handle, so the difference is the node's and is said, not hidden.
func (c *client) noteCustomID(typed string, reply []byte) {
	var id struct {
		Handle string `json:"handle"`
		ID     string `json:"id"`
	}
	if json.Unmarshal(reply, &id) != nil || id.ID == "" || id.ID == typed {
		return
	}
	fmt.Fprintf(c.errw, "pidctl create: note: the node wrote the id %q as %q (handle %s); ids match in any case\n", typed, id.ID, id.Handle)
}

func cmdUpdate(c *client, pos []string) error {
	h, err := one(pos, "HANDLE")
	if err != nil {
		return err
	}
	path, err := c.handlePath(h)
	if err != nil {
		return err
	}
	body, err := c.payload()
	if err != nil {
		return err
	}
	ifMatch := c.v("if-match")
	if ifMatch != "" && !strings.HasPrefix(ifMatch, `"`) {
		ifMatch = `"` + ifMatch + `"`
	}
	b, _, err := c.do("PUT", path, body, "If-Match", ifMatch)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.printIdentifier(b) })
}

func cmdGet(c *client, pos []string) error {
	h, err := one(pos, "HANDLE")
	if err != nil {
		return err
	}
	path, err := c.handlePath(h)
	if err != nil {
		return err
	}
	b, _, err := c.do("GET", path, nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.printIdentifier(b) })
}

func cmdHistory(c *client, pos []string) error {
	h, err := one(pos, "HANDLE")
	if err != nil {
		return err
	}
	path, err := c.handlePath(h)
	if err != nil {
		return err
	}
	b, _, err := c.do("GET", path+"/history", nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var hist struct {
			Changes []struct {
				Time    string `json:"time"`
				Action  string `json:"action"`
				KeyName string `json:"key_name"`
				KeyID   string `json:"key_id"`
				Before  any    `json:"before"`
				After   any    `json:"after"`
			}
		}
		if err := json.Unmarshal(b, &hist); err != nil {
			return err
		}
		var rows [][]string
		for _, ch := range hist.Changes {
			who := []string{ch.Time, ch.Action, ch.KeyName + " (" + ch.KeyID + ")"}
			diffs := changedFields(ch.Before, ch.After)
			if len(diffs) == 0 {
				diffs = []string{"-"}
			}
			// One line per changed field, the write's time, action and key
			// on its first.
			for i, d := range diffs {
				if i == 1 {
					who = []string{"", "", ""}
				}
				rows = append(rows, append(append([]string(nil), who...), d))
			}
		}
		c.table("WHEN\tACTION\tKEY\tCHANGE", rows)
		return nil
	})
}

// changedFields lists every field that differs between a write's before and
// after (url, metadata.status, metadata.resource_info.label, …; objects are
// compared member by member, anything else as a whole), sorted by name, as
// "field: before → after"; a field only before or only after shows as
// "field: value" or "field: value → (removed)". A create (no before) lists
// every field it set.
func changedFields(before, after any) []string {
	bf, af := map[string]string{}, map[string]string{}
	flatten("", before, bf)
	flatten("", after, af)
	names := map[string]bool{}
	for k := range bf {
		names[k] = true
	}
	for k := range af {
		names[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(names)) {
		bv, inB := bf[k]
		av, inA := af[k]
		switch {
		case inB && inA && bv == av:
		case !inB:
			out = append(out, k+": "+av)
		case !inA:
			out = append(out, k+": "+bv+" → (removed)")
		default:
			out = append(out, k+": "+bv+" → "+av)
		}
	}
	return out
}

// flatten puts v's leaves into m under dotted names; the top level's
// metadata object's members are named metadata.<member>.
func flatten(name string, v any, m map[string]string) {
	if o, ok := v.(map[string]any); ok {
		for k, e := range o {
			n := k
			if name != "" {
				n = name + "." + k
			}
			flatten(n, e, m)
		}
		return
	}
	if name == "" {
		return
	}
	if s, ok := v.(string); ok {
		m[name] = s
		return
	}
	b, _ := json.Marshal(v)
	m[name] = string(b)
}

// cmdStats prints resolutions per day of the key's namespace, or of HANDLE.
func cmdStats(c *client, pos []string) error {
	var path string
	switch len(pos) {
	case 0:
		me, err := c.whoami()
		if err != nil {
			return err
		}
		path = show(me["collection"]) + "stats"
	case 1:
		p, err := c.handlePath(pos[0])
		if err != nil {
			return err
		}
		path = p + "/stats"
	default:
		return usageErr("stats takes at most one HANDLE")
	}
	q := url.Values{}
	for _, k := range []string{"from", "to"} {
		if v := c.v(k); v != "" {
			q.Set(k, v)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	b, _, err := c.do("GET", path, nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var st struct {
			Handle, Namespace, From, To string
			Total                       uint64
			Days                        []struct {
				Date  string
				Count uint64
			}
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return err
		}
		what := "namespace " + st.Namespace
		if st.Handle != "" {
			what = st.Handle
		}
		fmt.Fprintf(c.out, "resolutions of %s, %s to %s: %d\n", what, st.From, st.To, st.Total)
		var rows [][]string
		for _, d := range st.Days {
			rows = append(rows, []string{d.Date, strconv.FormatUint(d.Count, 10)})
		}
		c.table("DAY\tRESOLUTIONS", rows)
		return nil
	})
}

func cmdList(c *client, pos []string) error {
	me, err := c.whoami()
	if err != nil {
		return err
	}
	q := url.Values{}
	for _, k := range []string{"q", "sort", "page", "format", "status", "url", "limit", "cursor"} {
		if v := c.v(k); v != "" {
			q.Set(k, v)
		}
	}
	b, _, err := c.do("GET", show(me["collection"])+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	if q.Has("format") {
		_, err := c.out.Write(b)
		return err
	}
	return c.emit(b, func() error {
		var l struct {
			Items []struct {
				Handle, URL string
				Metadata    map[string]any
				Updated     string
			}
			NextCursor         string `json:"next_cursor"`
			Total, Page, Pages int
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		var rows [][]string
		for _, it := range l.Items {
			label := ""
			if ri, ok := it.Metadata["resource_info"].(map[string]any); ok {
				label = show(ri["label"])
			}
			rows = append(rows, []string{it.Handle, show(it.Metadata["status"]), label, it.URL, it.Updated})
		}
		c.table("HANDLE\tSTATUS\tLABEL\tURL\tCHANGED", rows)
		if l.NextCursor != "" {
			fmt.Fprintf(c.out, "more: --cursor %s\n", l.NextCursor)
		}
		if l.Page > 0 {
			fmt.Fprintf(c.out, "page %d of %d (%d identifiers)\n", l.Page, l.Pages, l.Total)
		}
		return nil
	})
}

// bulkLimit is the server's item limit per request.
const bulkLimit = 1000

func cmdBulk(c *client, pos []string) error {
	name, err := one(pos, "FILE (JSON Lines or .csv; - for stdin)")
	if err != nil {
		return err
	}
	raw, err := readInput(name)
	if err != nil {
		return err
	}
	// The requests: batches of at most bulkLimit items, as JSON arrays or
	// as CSV, and the line of the file each item starts on.
	var (
		batches [][]byte
		ctype   = "application/json"
		lines   []int
	)
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		batches, lines, err = csvBatches(raw)
		ctype = "text/csv"
	} else {
		var items []json.RawMessage
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			l := bytes.TrimSpace(sc.Bytes())
			if len(l) == 0 || l[0] == '#' {
				continue
			}
			if !json.Valid(l) {
				return fmt.Errorf("line %d: not valid JSON", n)
			}
			items = append(items, json.RawMessage(append([]byte(nil), l...)))
			lines = append(lines, n)
		}
		err = sc.Err()
		for i := 0; i < len(items) && err == nil; i += bulkLimit {
			var b []byte
			b, err = json.Marshal(items[i:min(i+bulkLimit, len(items))])
			batches = append(batches, b)
		}
	}
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		return usageErr("%s holds no items", name)
	}
	me, err := c.whoami()
	if err != nil {
		return err
	}
	path := show(me["collection"]) + "bulk"
	type result struct {
		Status int    `json:"status"`
		Handle string `json:"handle,omitempty"`
		Detail string `json:"detail,omitempty"`
		Errors []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"errors,omitempty"`
	}
	var all []result
	var created, updated, failed int
	for _, body := range batches {
		b, _, err := c.do("POST", path, body, "Content-Type", ctype)
		if err != nil {
			return err
		}
		var r struct {
			Items                    []result
			Created, Updated, Failed int
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		all = append(all, r.Items...)
		created, updated, failed = created+r.Created, updated+r.Updated, failed+r.Failed
		// Progress on stderr, one line per request of up to 1000 items.
		j := len(all)
		fmt.Fprintf(c.errw, "bulk: %d/%d items sent (%d%%), %d failed in this batch\n", j, len(lines), j*100/len(lines), r.Failed)
	}
	if c.json {
		b, _ := json.Marshal(map[string]any{"items": all, "created": created, "updated": updated, "failed": failed})
		fmt.Fprintf(c.out, "%s\n", b)
	} else {
		var rows [][]string
		for i, r := range all {
			msg := r.Detail
			for _, fe := range r.Errors {
				msg += " " + fe.Field + ": " + fe.Message + ";"
			}
			rows = append(rows, []string{strconv.Itoa(lines[i]), strconv.Itoa(r.Status), r.Handle, strings.TrimSpace(msg)})
		}
		c.table("LINE\tSTATUS\tHANDLE\tERROR", rows)
		fmt.Fprintf(c.out, "%d items, %d failed (%d created, %d updated)\n", len(all), failed, created, updated)
	}
	if failed > 0 {
		return &apiError{Status: 422, Title: "bulk", Detail: fmt.Sprintf("%d of %d items failed", failed, len(all))}
	}
	return nil
}

// csvBatches cuts a bulk CSV file (model/bulk.go; the node reads its
// columns) into bodies of at most bulkLimit rows, each with the file's
// header row, and returns the line each row starts on. It reads the CSV
// only to count rows: the cells go to the node as they are.
func csvBatches(raw []byte) (bodies [][]byte, lines []int, err error) {
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("CSV header: %w", err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rows := 0
	flush := func() {
		w.Flush()
		bodies = append(bodies, append([]byte(nil), buf.Bytes()...))
		buf.Reset()
		rows = 0
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if rows == 0 {
			w.Write(head)
		}
		line, _ := r.FieldPos(0)
		w.Write(rec)
		lines = append(lines, line)
		if rows++; rows == bulkLimit {
			flush()
		}
	}
	if rows > 0 {
		flush()
	}
	return bodies, lines, w.Error()
}
