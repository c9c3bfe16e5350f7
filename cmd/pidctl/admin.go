package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// client is one pidctl invocation against the admin API.
type client struct {
	base   string
	key    string
	json   bool
	out    io.Writer
	errw   io.Writer // progress lines (stderr)
	http   *http.Client
	svc    string
	test   bool
	prod   bool
	values map[string]string   // options given (switches as "true"/"false")
	lists  map[string][]string // repeatable options given
}

// adminRun runs an admin API command; exit 0 ok, 1 API error, 2 usage or network.
func adminRun(p *parsed, stdout, stderr io.Writer) int {
	c := &client{out: stdout, errw: stderr, http: &http.Client{Timeout: 60 * time.Second},
		values: p.vals, lists: p.lists, svc: "svc"}
	c.json = p.v("json") == "true"
	c.test = p.v("test") == "true"
	c.prod = p.v("prod") == "true"
	if s := p.v("svc"); s != "" {
		c.svc = s
	}
	adminURL := p.v("admin")
	if adminURL == "" {
		adminURL = envOr("PIDCTL_ADMIN", "http://127.0.0.1:8001")
	}
	c.base = strings.TrimRight(adminURL, "/")
	keyFile := p.v("key-file")
	if keyFile == "" {
		keyFile = os.Getenv("PIDCTL_KEY_FILE")
	}
	name := p.cmd.name
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "pidctl %s: %v\n", name, err)
			return 2
		}
		c.key = strings.TrimSpace(string(b))
	}
	err := p.cmd.admin(c, p.pos)
	var ae *apiError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ae):
		fmt.Fprintf(stderr, "pidctl: %d %s: %s\n", ae.Status, ae.Title, inPidctlTerms(ae.Detail))
		for _, fe := range ae.Errors {
			fmt.Fprintf(stderr, "  %s: %s\n", fe.Field, fe.Message)
		}
		if c.json {
			c.out.Write(ae.body)
		}
		return 1
	case errors.Is(err, errUsage):
		return usageError(stderr, p.cmd, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	default:
		fmt.Fprintf(stderr, "pidctl %s: %v\n", name, err)
		return 2
	}
}

// pidctlTerms rewrite the API's advice, which names HTTP headers and
// methods, into the pidctl options that do the same, so that a hint can be
// followed as printed.
var pidctlTerms = []struct {
	re  *regexp.Regexp
	new string
}{
	{regexp.MustCompile(`send your API key as Authorization: Bearer <key>`), "give an API key: --key-file FILE, or the environment's PIDCTL_KEY_FILE"},
	{regexp.MustCompile(`the Authorization header must be "Bearer <key>"`), "the key file (--key-file, PIDCTL_KEY_FILE) must hold the key alone"},
	{regexp.MustCompile(`update it with PUT \(without If-None-Match\)`), "update it with pidctl update HANDLE"},
	{regexp.MustCompile(`to create it with this custom id send If-None-Match: \*`), "to create it with this custom id: pidctl create --custom-id ID"},
	{regexp.MustCompile(`is at version (\d+) \(ETag "\d+"\), not "?(\d+)"?; read it again and retry`), "is at version $1, not $2; read it again (pidctl get HANDLE) and, if your change still applies, retry with --if-match $1"},
	{regexp.MustCompile(`Idempotency-Key (".*") was already used with a different request; use a new key for a new identifier`), "--idempotency-key $1 was already used with a different request; give a new --idempotency-key for a new identifier"},
	{regexp.MustCompile(`^Idempotency-Key must be`), "--idempotency-key must be"},
	{regexp.MustCompile(`PUT (\S+) needs \?customid=\{id\}; to create with a generated id PUT \S+`), "give the custom id with --custom-id ID, or leave it out for a generated id"},
}

// inPidctlTerms is detail with the API's HTTP advice in pidctl's options.
func inPidctlTerms(detail string) string {
	for _, t := range pidctlTerms {
		detail = t.re.ReplaceAllString(detail, t.new)
	}
	return detail
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

func (c *client) v(name string) string { return c.values[name] }

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
		c.rows(cols, list)
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
