package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// adminCommands are the subcommands that talk to the admin API.
var adminCommands = map[string]func(c *client, pos []string) error{
	"apply":        cmdApply,
	"applications": cmdApplications,
	"application":  cmdApplication,
	"approve":      cmdApprove,
	"reject":       cmdReject,
	"snaas":        cmdSNAAs,
	"snaa":         cmdSNAA,
	"snaa-set":     cmdSNAASet,
	"keys":         cmdKeys,
	"whoami":       cmdWhoami,
	"create":       cmdCreate,
	"update":       cmdUpdate,
	"get":          cmdGet,
	"history":      cmdHistory,
	"stats":        cmdStats,
	"list":         cmdList,
	"audit":        cmdAudit,
	"backup":       cmdBackup,
	"bulk":         cmdBulk,
}

const adminUsage = `admin API commands (global flags: --admin URL --key-file FILE [--json]):
  apply --organisation NAME --tech-name N --tech-email E --admin-name N --admin-email E
        --policy-version V --maintenance TEXT        submit an SNAA application (operator key)
  applications [--state SUBMITTED|APPROVED|REJECTED]  list applications
  application ID                                     show one application
  approve ID [--namespace NS] [--prefix P]… [--custom-ids] [--note TEXT]
                                                     approve: creates the SNAA, prints its first key
  reject ID --note TEXT                              reject an application
  snaas                                              list SNAAs
  snaa ID                                            show one SNAA
  snaa-set ID [--custom-ids true|false] [--suspended true|false] [--prefix P]…
  keys issue SNAA_ID --name NAME                     issue a key (the secret is shown once)
  keys list SNAA_ID                                  list keys (never secrets)
  keys revoke SNAA_ID KEY_ID                         revoke a key
  audit [--after SEQ] [--limit N]                    read the audit log
  backup FILE                                        consistent copy of the running node's database
  whoami [--test]                                    the SNAA of the key (SNAA key)
  create [--test] [--custom-id ID] [--idempotency-key K] (--file PAYLOAD.json | --url URL --metadata FILE|-)
  update HANDLE [--if-match VERSION] (--file PATCH.json | [--url URL] [--metadata FILE|-])
  get HANDLE                                         read an identifier
  history HANDLE                                     its changes: time, key, URL/metadata before and after
  stats [HANDLE] [--test] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
                                                     resolutions per day of the namespace or one identifier
  list [--test] [--status S] [--url URL] [--limit N] [--cursor C]
  bulk FILE|- [--test]                               create/update from JSON Lines ({"id"?,"url"?,"metadata"?}
                                                     per line) or CSV (.csv; columns id,url,status,metadata)
HANDLE is PREFIX/svc/NS/ID or PREFIX/NS/ID; a prefix with T after the first dot
(21.T12345) uses the /testpid/v2 base, others /pid/v2 (override with --test/--prod).
Environment: PIDCTL_ADMIN, PIDCTL_KEY_FILE.
`

// client is one pidctl invocation against the admin API.
type client struct {
	base   string
	key    string
	json   bool
	out    io.Writer
	errw   io.Writer // progress lines (stderr)
	fs     *flag.FlagSet
	http   *http.Client
	svc    string
	test   bool
	prod   bool
	values map[string]*string
	multi  map[string]*multiFlag
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// adminMain runs an admin subcommand; exit 0 ok, 1 API error, 2 usage or network.
func adminMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pidctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stderr) }
	c := &client{out: stdout, errw: stderr, fs: fs, http: &http.Client{Timeout: 60 * time.Second},
		values: map[string]*string{}, multi: map[string]*multiFlag{}}
	adminURL := fs.String("admin", envOr("PIDCTL_ADMIN", "http://127.0.0.1:8001"), "admin API base `URL`")
	keyFile := fs.String("key-file", os.Getenv("PIDCTL_KEY_FILE"), "`file` holding the API key (operator or SNAA)")
	fs.BoolVar(&c.json, "json", false, "print the API's JSON reply (for scripts)")
	fs.StringVar(&c.svc, "svc", "svc", "the service segment of full handles")
	fs.BoolVar(&c.test, "test", false, "use the /testpid/v2 base")
	fs.BoolVar(&c.prod, "prod", false, "use the /pid/v2 base")
	for _, n := range []string{"organisation", "tech-name", "tech-email", "admin-name", "admin-email", "policy-version",
		"maintenance", "state", "namespace", "note", "name", "custom-id", "idempotency-key", "file", "url", "metadata",
		"if-match", "status", "limit", "cursor", "after", "custom-ids", "suspended", "from", "to"} {
		c.values[n] = fs.String(n, "", "")
	}
	c.multi["prefix"] = &multiFlag{}
	fs.Var(c.multi["prefix"], "prefix", "a prefix the SNAA may write under (repeatable)")
	// Flags may come before or after positional arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) == 0 {
		usage(stderr)
		return 2
	}
	cmd, ok := adminCommands[pos[0]]
	if !ok {
		fmt.Fprintf(stderr, "pidctl: unknown command %q\n", pos[0])
		usage(stderr)
		return 2
	}
	c.base = strings.TrimRight(*adminURL, "/")
	if *keyFile != "" {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "pidctl: %v\n", err)
			return 2
		}
		c.key = strings.TrimSpace(string(b))
	}
	err := cmd(c, pos[1:])
	var ae *apiError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ae):
		fmt.Fprintf(stderr, "pidctl: %d %s: %s\n", ae.Status, ae.Title, ae.Detail)
		for _, fe := range ae.Errors {
			fmt.Fprintf(stderr, "  %s: %s\n", fe.Field, fe.Message)
		}
		if c.json {
			c.out.Write(ae.body)
		}
		return 1
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "pidctl %s: %v\n", pos[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "pidctl %s: %v\n", pos[0], err)
		return 2
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// apiError is a problem+json reply.
type apiError struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
	body []byte
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail) }

func (c *client) v(name string) string { return *c.values[name] }

// do sends a request and returns the reply body; non-2xx replies are *apiError.
func (c *client) do(method, path string, body any, hdr ...string) ([]byte, http.Header, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		jb, err := json.Marshal(b)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(jb)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode/100 != 2 && res.StatusCode != http.StatusNotModified {
		ae := &apiError{Status: res.StatusCode, Title: res.Status, body: b}
		if json.Unmarshal(b, ae) != nil || ae.Detail == "" {
			ae.Detail = strings.TrimSpace(string(b))
		}
		return nil, nil, ae
	}
	return b, res.Header, nil
}

// emit prints the raw JSON with --json, else calls human.
func (c *client) emit(body []byte, human func() error) error {
	if c.json {
		c.out.Write(body)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			fmt.Fprintln(c.out)
		}
		return nil
	}
	return human()
}

func (c *client) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// kv prints "key: value" lines of a flat JSON object, keys sorted.
func (c *client) kv(body []byte) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return err
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s:\t%s\n", k, show(m[k]))
	}
	return tw.Flush()
}

// listTable GETs path and shows the objects listed under field, one row each,
// with a column per key in cols (the header is the key in capitals, "_" as a
// space); with --json it prints the reply as it came.
func listTable(c *client, path, field string, cols ...string) error {
	b, _, err := c.do("GET", path, nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var reply map[string]json.RawMessage
		if err := json.Unmarshal(b, &reply); err != nil {
			return err
		}
		var list []map[string]any
		if err := json.Unmarshal(reply[field], &list); err != nil && reply[field] != nil {
			return err
		}
		header := make([]string, len(cols))
		for i, col := range cols {
			header[i] = strings.ToUpper(strings.ReplaceAll(col, "_", " "))
		}
		rows := make([][]string, 0, len(list))
		for _, o := range list {
			row := make([]string, len(cols))
			for i, col := range cols {
				row[i] = show(o[col])
			}
			rows = append(rows, row)
		}
		c.table(strings.Join(header, "\t"), rows)
		return nil
	})
}

func show(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		return t
	case bool, float64:
		return fmt.Sprint(t)
	case []any:
		var parts []string
		for _, e := range t {
			parts = append(parts, show(e))
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func cmdApply(c *client, pos []string) error {
	req := map[string]any{
		"organisation":           c.v("organisation"),
		"technical_contact":      map[string]string{"name": c.v("tech-name"), "email": c.v("tech-email")},
		"administrative_contact": map[string]string{"name": c.v("admin-name"), "email": c.v("admin-email")},
		"policy_version":         c.v("policy-version"),
		"maintenance_statement":  c.v("maintenance"),
	}
	var body any = req
	if f := c.v("file"); f != "" {
		b, err := readInput(f)
		if err != nil {
			return err
		}
		body = b
	}
	b, _, err := c.do("POST", "/ops/v1/applications", body)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdApplications(c *client, pos []string) error {
	path := "/ops/v1/applications"
	if s := c.v("state"); s != "" {
		path += "?state=" + url.QueryEscape(s)
	}
	return listTable(c, path, "applications", "id", "state", "submitted", "organisation")
}

func one(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", usageErr("want exactly one %s", what)
	}
	return pos[0], nil
}

// showOne GETs collection+ID for the one positional ID and shows the object.
func showOne(c *client, pos []string, what, collection string) error {
	id, err := one(pos, what)
	if err != nil {
		return err
	}
	b, _, err := c.do("GET", collection+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdApplication(c *client, pos []string) error {
	return showOne(c, pos, "application ID", "/ops/v1/applications/")
}

func cmdApprove(c *client, pos []string) error {
	id, err := one(pos, "application ID")
	if err != nil {
		return err
	}
	req := map[string]any{}
	if ns := c.v("namespace"); ns != "" {
		req["namespace"] = ns
	}
	if len(*c.multi["prefix"]) > 0 {
		req["prefixes"] = []string(*c.multi["prefix"])
	}
	if v := c.v("custom-ids"); v != "" {
		bv, err := strconv.ParseBool(v)
		if err != nil {
			return usageErr("--custom-ids wants true or false")
		}
		req["custom_ids"] = bv
	}
	if n := c.v("note"); n != "" {
		req["note"] = n
	}
	b, _, err := c.do("POST", "/ops/v1/applications/"+url.PathEscape(id)+"/approve", req)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var r struct {
			SNAA struct {
				ID, Namespace string
				Prefixes      []string
				CustomIDs     bool `json:"custom_ids"`
			}
			Key struct{ ID, Name, Secret string }
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "approved: SNAA %s, namespace %s, prefixes %s, custom ids %v\n",
			r.SNAA.ID, r.SNAA.Namespace, strings.Join(r.SNAA.Prefixes, ", "), r.SNAA.CustomIDs)
		fmt.Fprintf(c.out, "key %s (%s) — shown only now, store it:\n%s\n", r.Key.ID, r.Key.Name, r.Key.Secret)
		return nil
	})
}

func cmdReject(c *client, pos []string) error {
	id, err := one(pos, "application ID")
	if err != nil {
		return err
	}
	b, _, err := c.do("POST", "/ops/v1/applications/"+url.PathEscape(id)+"/reject", map[string]string{"note": c.v("note")})
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdSNAAs(c *client, pos []string) error {
	return listTable(c, "/ops/v1/snaas", "snaas", "id", "namespace", "prefixes", "custom_ids", "suspended", "organisation")
}

func cmdSNAA(c *client, pos []string) error {
	return showOne(c, pos, "SNAA ID", "/ops/v1/snaas/")
}

func cmdSNAASet(c *client, pos []string) error {
	id, err := one(pos, "SNAA ID")
	if err != nil {
		return err
	}
	req := map[string]any{}
	for flagName, field := range map[string]string{"custom-ids": "custom_ids", "suspended": "suspended"} {
		if v := c.v(flagName); v != "" {
			bv, err := strconv.ParseBool(v)
			if err != nil {
				return usageErr("--%s wants true or false", flagName)
			}
			req[field] = bv
		}
	}
	if len(*c.multi["prefix"]) > 0 {
		req["prefixes"] = []string(*c.multi["prefix"])
	}
	b, _, err := c.do("PATCH", "/ops/v1/snaas/"+url.PathEscape(id), req)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdKeys(c *client, pos []string) error {
	if len(pos) < 2 {
		return usageErr("keys issue|list|revoke SNAA_ID [KEY_ID]")
	}
	snaa := url.PathEscape(pos[1])
	switch pos[0] {
	case "issue":
		b, _, err := c.do("POST", "/ops/v1/snaas/"+snaa+"/keys", map[string]string{"name": c.v("name")})
		if err != nil {
			return err
		}
		return c.emit(b, func() error {
			var k struct{ ID, Name, Secret string }
			if err := json.Unmarshal(b, &k); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "key %s (%s) — shown only now, store it:\n%s\n", k.ID, k.Name, k.Secret)
			return nil
		})
	case "list":
		return listTable(c, "/ops/v1/snaas/"+snaa+"/keys", "keys", "id", "name", "created", "last_used", "revoked")
	case "revoke":
		if len(pos) != 3 {
			return usageErr("keys revoke SNAA_ID KEY_ID")
		}
		if _, _, err := c.do("DELETE", "/ops/v1/snaas/"+snaa+"/keys/"+url.PathEscape(pos[2]), nil); err != nil {
			return err
		}
		if c.json {
			fmt.Fprintln(c.out, `{"revoked":true}`)
		} else {
			fmt.Fprintf(c.out, "key %s revoked\n", pos[2])
		}
		return nil
	}
	return usageErr("keys issue|list|revoke")
}

func cmdAudit(c *client, pos []string) error {
	q := url.Values{}
	if a := c.v("after"); a != "" {
		q.Set("after", a)
	}
	if l := c.v("limit"); l != "" {
		q.Set("limit", l)
	}
	return listTable(c, "/ops/v1/audit?"+q.Encode(), "entries", "seq", "time", "actor", "action", "target")
}

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

// payload builds a write body from --file, or --url and --metadata.
func (c *client) payload() ([]byte, error) {
	if f := c.v("file"); f != "" {
		return readInput(f)
	}
	p := map[string]any{}
	if u := c.v("url"); u != "" {
		p["url"] = u
	}
	if m := c.v("metadata"); m != "" {
		b, err := readInput(m)
		if err != nil {
			return nil, err
		}
		p["metadata"] = json.RawMessage(b)
	}
	if len(p) == 0 {
		return nil, usageErr("give --file PAYLOAD.json, or --url and/or --metadata FILE")
	}
	return json.Marshal(p)
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
		return c.emit(b, func() error { return c.printIdentifier(b) })
	}
	path = show(me["collection"])
	b, _, err := c.do("POST", path, body, "Idempotency-Key", c.v("idempotency-key"))
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.printIdentifier(b) })
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
				Before  *struct {
					URL string `json:"url"`
				} `json:"before"`
				After *struct {
					URL string `json:"url"`
				} `json:"after"`
			}
		}
		if err := json.Unmarshal(b, &hist); err != nil {
			return err
		}
		var rows [][]string
		for _, ch := range hist.Changes {
			u := ""
			switch {
			case ch.Before == nil && ch.After != nil:
				u = ch.After.URL
			case ch.Before != nil && ch.After != nil && ch.Before.URL != ch.After.URL:
				u = ch.Before.URL + " → " + ch.After.URL
			}
			rows = append(rows, []string{ch.Time, ch.Action, ch.KeyName + " (" + ch.KeyID + ")", u})
		}
		c.table("WHEN\tACTION\tKEY\tURL", rows)
		return nil
	})
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
	for _, k := range []string{"status", "url", "limit", "cursor"} {
		if v := c.v(k); v != "" {
			q.Set(k, v)
		}
	}
	b, _, err := c.do("GET", show(me["collection"])+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var l struct {
			Items []struct {
				Handle, URL string
				Metadata    map[string]any
			}
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		var rows [][]string
		for _, it := range l.Items {
			rows = append(rows, []string{it.Handle, show(it.Metadata["status"]), it.URL})
		}
		c.table("HANDLE\tSTATUS\tURL", rows)
		if l.NextCursor != "" {
			fmt.Fprintf(c.out, "more: --cursor %s\n", l.NextCursor)
		}
		return nil
	})
}

func cmdBackup(c *client, pos []string) error {
	name, err := one(pos, "FILE")
	if err != nil {
		return err
	}
	req, err := http.NewRequest("GET", c.base+"/ops/v1/backup", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := (&http.Client{}).Do(req) // no timeout: a big database takes a while
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		ae := &apiError{Status: res.StatusCode, Title: res.Status, body: b}
		if json.Unmarshal(b, ae) != nil || ae.Detail == "" {
			ae.Detail = strings.TrimSpace(string(b))
		}
		return ae
	}
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, res.Body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	if c.json {
		fmt.Fprintf(c.out, "{\"file\":%q,\"bytes\":%d}\n", name, n)
	} else {
		fmt.Fprintf(c.out, "backup written to %s (%d bytes)\n", name, n)
	}
	return nil
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
	var items []json.RawMessage
	var lines []int
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		items, lines, err = csvItems(raw)
	} else {
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
	}
	if err != nil {
		return err
	}
	if len(items) == 0 {
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
	for i := 0; i < len(items); i += bulkLimit {
		j := min(i+bulkLimit, len(items))
		b, _, err := c.do("POST", path, items[i:j])
		if err != nil {
			return err
		}
		var r struct{ Items []result }
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		all = append(all, r.Items...)
		bad := 0
		for _, x := range r.Items {
			if x.Status >= 300 {
				bad++
			}
		}
		// Progress on stderr, one line per request of up to 1000 items.
		fmt.Fprintf(c.errw, "bulk: %d/%d items sent (%d%%), %d failed in this batch\n", j, len(items), j*100/len(items), bad)
	}
	failed := 0
	for _, r := range all {
		if r.Status >= 300 {
			failed++
		}
	}
	if c.json {
		b, _ := json.Marshal(map[string]any{"items": all})
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
		fmt.Fprintf(c.out, "%d items, %d failed\n", len(all), failed)
	}
	if failed > 0 {
		return &apiError{Status: 422, Title: "bulk", Detail: fmt.Sprintf("%d of %d items failed", failed, len(all))}
	}
	return nil
}

// csvItems turns CSV rows into bulk items: columns id, url, status (sets
// metadata.status) and metadata (a JSON object); other columns are an error.
func csvItems(raw []byte) ([]json.RawMessage, []int, error) {
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("CSV header: %w", err)
	}
	for _, h := range head {
		switch h {
		case "id", "url", "status", "metadata":
		default:
			return nil, nil, fmt.Errorf("CSV column %q: want id, url, status, metadata", h)
		}
	}
	var items []json.RawMessage
	var lines []int
	for n := 2; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		it := map[string]any{}
		meta := map[string]any{}
		for i, h := range head {
			if i >= len(rec) || rec[i] == "" {
				continue
			}
			switch h {
			case "id", "url":
				it[h] = rec[i]
			case "status":
				meta["status"] = rec[i]
			case "metadata":
				var m map[string]any
				if err := json.Unmarshal([]byte(rec[i]), &m); err != nil {
					return nil, nil, fmt.Errorf("line %d: metadata is not a JSON object: %v", n, err)
				}
				for k, v := range m {
					meta[k] = v
				}
			}
		}
		if len(meta) > 0 {
			it["metadata"] = meta
		}
		b, _ := json.Marshal(it)
		items = append(items, b)
		lines = append(lines, n)
	}
	return items, lines, nil
}
