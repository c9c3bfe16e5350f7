package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
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

func one(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", usageErr("want exactly one %s", what)
	}
	return pos[0], nil
}
