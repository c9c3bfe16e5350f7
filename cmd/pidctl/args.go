package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// pidctl has one argument parser for every command. Options may come before
// or after the command and its positional arguments (pidctl approve ID
// --namespace X), as -x or --x; a value follows as --x=v or --x v; a switch
// is --x, --x=false or --no-x (and, as older scripts wrote it, --x true|false);
// -- ends the options. Each command accepts its own options and those of its
// group; anything else is a usage error naming the command.

type optKind int

const (
	optValue  optKind = iota // --x VALUE, the last one wins
	optSwitch                // --x, --no-x, --x=true|false
	optList                  // --x VALUE, repeatable
)

type optDef struct {
	kind optKind
	arg  string // the value's name in help text (optValue, optList)
	help string
}

// options are every option of every command; a name means the same to each.
var options = map[string]optDef{
	"admin":           {optValue, "URL", "admin API base URL (env PIDCTL_ADMIN; default http://127.0.0.1:8001)"},
	"key-file":        {optValue, "FILE", "file holding the API key, operator or SNAA (env PIDCTL_KEY_FILE)"},
	"json":            {optSwitch, "", "print the reply as JSON (for scripts)"},
	"svc":             {optValue, "SEG", "the service segment of full-form handles (default svc)"},
	"test":            {optSwitch, "", "use the /testpid/v2 base"},
	"prod":            {optSwitch, "", "use the /pid/v2 base"},
	"organisation":    {optValue, "NAME", "the applying organisation"},
	"tech-name":       {optValue, "NAME", "technical contact's name"},
	"tech-email":      {optValue, "EMAIL", "technical contact's email"},
	"admin-name":      {optValue, "NAME", "administrative contact's name"},
	"admin-email":     {optValue, "EMAIL", "administrative contact's email"},
	"policy-version":  {optValue, "V", "the PID policy version accepted"},
	"maintenance":     {optValue, "TEXT", "how landing pages are maintained"},
	"file":            {optValue, "FILE", "the request body as a JSON file (- for stdin)"},
	"state":           {optValue, "STATE", "only this state (applications: SUBMITTED, APPROVED or REJECTED; linkcheck: broken, recovering, failing or all)"},
	"token-file":      {optValue, "FILE", "file holding the application's status token (env PIDCTL_STATUS_TOKEN_FILE)"},
	"namespace":       {optValue, "NS", "the SNAA's namespace"},
	"shard":           {optValue, "NAME", "the etcd shard of the namespace, in a cluster of several (default the least full)"},
	"prefix":          {optList, "P", "a prefix the SNAA may write under (repeatable; apply: asked for, approve: granted, default what the application asked for)"},
	"custom-ids":      {optSwitch, "", "the SNAA may choose its identifiers (apply: asked for; approve: default what the application asked for)"},
	"suspended":       {optSwitch, "", "the SNAA's keys are refused"},
	"max-keys":        {optValue, "N", "unrevoked keys the SNAA may hold (0: the node's default)"},
	"note":            {optValue, "TEXT", "a note for the audit log"},
	"name":            {optValue, "NAME", "the key's name"},
	"after":           {optValue, "SEQ", "entries after this sequence number"},
	"all":             {optSwitch, "", "every page, not only the first"},
	"kind":            {optList, "KIND", "an event kind to deliver (repeatable; default every kind)"},
	"description":     {optValue, "TEXT", "what the endpoint is for"},
	"limit":           {optValue, "N", "at most N entries"},
	"custom-id":       {optValue, "ID", "create under this identifier instead of a generated one"},
	"idempotency-key": {optValue, "K", "a retry with the same key creates nothing new"},
	"url":             {optValue, "URL", "the landing page URL"},
	"metadata":        {optValue, "FILE", "the metadata as a JSON file (- for stdin)"},
	"if-match":        {optValue, "VERSION", "update only if the identifier is at this version"},
	"from":            {optValue, "YYYY-MM-DD", "first day"},
	"to":              {optValue, "YYYY-MM-DD", "last day"},
	"status":          {optValue, "S", "metadata.status: SUBMITTED, REGISTERED, OBSOLETED or DEPRECATED (create, update: set it; list: only identifiers with it)"},
	"cursor":          {optValue, "C", "continue a listing where it stopped"},
	"q":               {optValue, "WORDS", "only identifiers with a word starting with each of these (id, label, URL, description)"},
	"sort":            {optValue, "ORDER", "id, label, created or changed; -ORDER reverses it (-changed: latest first)"},
	"page":            {optValue, "N", "page N (from 1) of numbered pages with a total"},
	"format":          {optValue, "csv|jsonl", "print every match (not one page) as CSV or JSON Lines"},
	"server":          {optValue, "HOST:PORT", "the node's native protocol address (default 127.0.0.1:2641)"},
	"udp":             {optSwitch, "", "use UDP instead of TCP"},
	"timeout":         {optValue, "DURATION", "time limit for the exchange (default 10s)"},
	"type":            {optList, "T", "only values of this type (repeatable; \"URL.\" includes subtypes)"},
	"index":           {optList, "N", "only the value with this index (repeatable)"},
}

// command is one pidctl command. Its name is one word, or two for a group
// (keys issue, hdl resolve). Exactly one of admin and hdl is set.
type command struct {
	name  string
	args  string   // the synopsis after the name
	about string   // what it does, one line
	opts  []string // options beyond its group's
	admin func(c *client, pos []string) error
	hdl   func(p *parsed, stdout, stderr io.Writer) int
}

// adminGlobals are the options of every admin API command.
var adminGlobals = []string{"admin", "key-file", "json"}

// handleOpts choose the base path of a HANDLE argument.
var handleOpts = []string{"svc", "test", "prod"}

var commands []*command

func init() {
	commands = []*command{
		{name: "apply", args: "--organisation NAME --tech-name N --tech-email E --admin-name N --admin-email E --policy-version V --maintenance TEXT [--prefix P]… [--custom-ids] | --file APPLICATION.json",
			about: "apply to become an SNAA (no key needed; prints the status token, shown once)", admin: cmdApply,
			opts: []string{"organisation", "tech-name", "tech-email", "admin-name", "admin-email", "policy-version", "maintenance", "prefix", "custom-ids", "file"}},
		{name: "apply-status", args: "ID --token-file FILE", about: "an application's state, with its status token (no key needed)", admin: cmdApplyStatus, opts: []string{"token-file"}},
		{name: "applications", args: "[--state SUBMITTED|APPROVED|REJECTED]", about: "list applications", admin: cmdApplications, opts: []string{"state"}},
		{name: "application", args: "ID", about: "show one application", admin: cmdApplication},
		{name: "approve", args: "ID [--namespace NS] [--prefix P]… [--custom-ids] [--note TEXT] [--shard NAME]",
			about: "approve: creates the SNAA, prints its first key", admin: cmdApprove, opts: []string{"namespace", "prefix", "custom-ids", "note", "shard"}},
		{name: "reject", args: "ID --note TEXT", about: "reject an application", admin: cmdReject, opts: []string{"note"}},
		{name: "snaas", about: "list SNAAs", admin: cmdSNAAs},
		{name: "snaa", args: "ID", about: "show one SNAA", admin: cmdSNAA},
		{name: "snaa-set", args: "ID [--custom-ids|--no-custom-ids] [--suspended|--no-suspended] [--prefix P]… [--max-keys N]",
			about: "change an SNAA (options not given stay as they are)", admin: cmdSNAASet, opts: []string{"custom-ids", "suspended", "prefix", "max-keys"}},
		{name: "keys issue", args: "SNAA_ID --name NAME", about: "issue an SNAA a key (operator key; the secret is shown once)", admin: cmdKeysIssue, opts: []string{"name"}},
		{name: "keys create", args: "--name NAME", about: "issue yourself another key (SNAA key; the secret is shown once)", admin: cmdKeysCreate, opts: []string{"name"}},
		{name: "keys list", args: "[SNAA_ID]", about: "list keys, never secrets: an SNAA's (operator key) or your own (SNAA key)", admin: cmdKeysList},
		{name: "keys revoke", args: "[SNAA_ID] KEY_ID", about: "revoke a key: an SNAA's (operator key) or one of your own (SNAA key)", admin: cmdKeysRevoke},
		{name: "audit", args: "[--after SEQ] [--limit N]", about: "read the audit log", admin: cmdAudit, opts: []string{"after", "limit"}},
		{name: "backup", args: "FILE", about: "consistent copy of the running node's database", admin: cmdBackup},
		{name: "whoami", args: "[--test]", about: "the SNAA of the key (SNAA key)", admin: cmdWhoami, opts: []string{"test"}},
		{name: "create", args: "[--test] [--custom-id ID] [--idempotency-key K] (--file PAYLOAD.json | --url URL --metadata FILE|-) [--status S]",
			about: "create an identifier (--status overrides the metadata's status)", admin: cmdCreate, opts: []string{"test", "custom-id", "idempotency-key", "file", "url", "metadata", "status"}},
		{name: "update", args: "HANDLE [--if-match VERSION] (--file PATCH.json | [--url URL] [--metadata FILE|-] [--status S])",
			about: "update an identifier by merge", admin: cmdUpdate, opts: append([]string{"if-match", "file", "url", "metadata", "status"}, handleOpts...)},
		{name: "get", args: "HANDLE", about: "read an identifier", admin: cmdGet, opts: handleOpts},
		{name: "history", args: "HANDLE", about: "its changes: time, key, and every field that changed, before → after", admin: cmdHistory, opts: handleOpts},
		{name: "stats", args: "[HANDLE] [--test] [--from YYYY-MM-DD] [--to YYYY-MM-DD]",
			about: "resolutions per day of the namespace or one identifier", admin: cmdStats, opts: append([]string{"from", "to"}, handleOpts...)},
		{name: "list", args: "[--test] [--q WORDS] [--sort ORDER] [--page N] [--format csv|jsonl] [--status S] [--url URL] [--limit N] [--cursor C]",
			about: "list or search the namespace's identifiers (--q, --sort, --page: numbered pages; --format: export every match; --url: exact, or a prefix ending in *)",
			admin: cmdList, opts: []string{"test", "q", "sort", "page", "format", "status", "url", "limit", "cursor"}},
		{name: "events", args: "[--test] [--after SEQ] [--limit N] [--all]",
			about: "the namespace's change feed: every write in order (--after: the last seq you have)", admin: cmdEvents, opts: []string{"test", "after", "limit", "all"}},
		{name: "linkcheck", args: "[HANDLE] [--test] [--state broken|recovering|failing|all] [--limit N] [--cursor C]",
			about: "the link checker's findings in the namespace, or every result of one identifier", admin: cmdLinkcheck, opts: append([]string{"state", "limit", "cursor"}, handleOpts...)},
		{name: "webhooks list", args: "[--test]", about: "the namespace's webhook endpoints", admin: cmdWebhooksList, opts: []string{"test"}},
		{name: "webhooks add", args: "--url URL [--kind KIND]… [--description TEXT] [--after SEQ] [--test]",
			about: "register an endpoint for the change feed (its signing secret is shown once)", admin: cmdWebhooksAdd, opts: []string{"test", "url", "kind", "description", "after"}},
		{name: "webhooks get", args: "ID [--test]", about: "one endpoint and its delivery state", admin: cmdWebhooksGet, opts: []string{"test"}},
		{name: "webhooks deliveries", args: "ID [--limit N] [--test]", about: "an endpoint's last delivery attempts, newest first", admin: cmdWebhooksDeliveries, opts: []string{"test", "limit"}},
		{name: "webhooks enable", args: "ID [--test]", about: "resume a disabled endpoint from its cursor", admin: cmdWebhooksEnable, opts: []string{"test"}},
		{name: "webhooks delete", args: "ID [--test]", about: "remove an endpoint and its delivery log", admin: cmdWebhooksDelete, opts: []string{"test"}},
		{name: "bulk", args: "FILE|- [--test]", about: "create/update from JSON Lines ({\"op\"?,\"id\"?,\"url\"?,\"metadata\"?} per line) or CSV (.csv; op,id,url and one column per model field: docs/product.md)",
			admin: cmdBulk, opts: []string{"test"}},
		{name: "hdl resolve", args: "HANDLE --server HOST:PORT [--udp] [--type T]… [--index N]… [--json]",
			about: "resolve over the native Handle protocol", hdl: hdlResolve, opts: []string{"server", "udp", "timeout", "type", "index", "json"}},
		{name: "hdl siteinfo", args: "--server HOST:PORT [--udp]", about: "the node's HS_SITE over the native protocol",
			hdl: hdlSiteinfo, opts: []string{"server", "udp", "timeout"}},
	}
}

// accepts lists every option the command takes, its group's first.
func (cmd *command) accepts() []string {
	if cmd.admin != nil {
		return append(append([]string(nil), adminGlobals...), cmd.opts...)
	}
	return cmd.opts
}

func (cmd *command) usageLine() string {
	if cmd.args == "" {
		return "pidctl " + cmd.name
	}
	return "pidctl " + cmd.name + " " + cmd.args
}

// help prints the command's full help.
func (cmd *command) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\noptions:\n", cmd.usageLine(), cmd.about)
	for _, name := range cmd.accepts() {
		d := options[name]
		flag := "--" + name
		switch d.kind {
		case optSwitch:
			flag += ", --no-" + name
		default:
			flag += " " + d.arg
		}
		fmt.Fprintf(w, "  %-34s %s\n", flag, d.help)
	}
	if cmd.admin != nil && strings.Contains(cmd.args, "HANDLE") {
		fmt.Fprint(w, "\nHANDLE is PREFIX/svc/NS/ID or PREFIX/NS/ID; a prefix with T after the first dot\n(21.T12345) uses the /testpid/v2 base, others /pid/v2 (override with --test/--prod).\n")
	}
}

func findCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// parsed is a command line taken apart.
type parsed struct {
	cmd   *command
	pos   []string            // positional arguments after the command's name
	vals  map[string]string   // optValue and optSwitch ("true"/"false") options given
	lists map[string][]string // optList options given, in order
	help  bool                // -h or --help
}

// v is the value of option name ("" when not given).
func (p *parsed) v(name string) string { return p.vals[name] }

// argError is a usage error: what is wrong, and the command it concerns (nil
// when no command was recognised).
type argError struct {
	cmd   *command
	group string // keys, webhooks or hdl, for an error in choosing the group's subcommand
	msg   string
}

func (e *argError) Error() string { return e.msg }

// parseArgs parses a command line.
func parseArgs(args []string) (*parsed, error) {
	p, err := parseLine(args)
	var ae *argError
	if errors.As(err, &ae) && ae.cmd == nil && ae.group == "" {
		// An option error found before the command was: name the command
		// all the same, from the words that are not options.
		var words []string
		for _, a := range args {
			if a == "--" {
				break
			}
			if !strings.HasPrefix(a, "-") {
				words = append(words, a)
			}
		}
		if len(words) >= 2 {
			ae.cmd = findCommand(words[0] + " " + words[1])
		}
		if ae.cmd == nil && len(words) >= 1 {
			ae.cmd = findCommand(words[0])
		}
	}
	return p, err
}

func parseLine(args []string) (*parsed, error) {
	p := &parsed{vals: map[string]string{}, lists: map[string][]string{}}
	var given []string // option names as given, to check against the command
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimPrefix(a[1:], "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		if name == "h" || name == "help" {
			p.help = true
			continue
		}
		d, ok := options[name]
		if !ok {
			if base, neg := strings.CutPrefix(name, "no-"); neg && options[base].kind == optSwitch && !hasVal {
				if _, known := options[base]; known {
					p.vals[base] = "false"
					given = append(given, base)
					continue
				}
			}
			return nil, &argError{msg: fmt.Sprintf("unknown option %s", strings.SplitN(a, "=", 2)[0])}
		}
		given = append(given, name)
		switch d.kind {
		case optSwitch:
			if !hasVal {
				val = "true"
				// --x true|false, as the switches were once written.
				if i+1 < len(args) && (args[i+1] == "true" || args[i+1] == "false") {
					i++
					val = args[i]
				}
			}
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, &argError{msg: fmt.Sprintf("--%s is a switch: --%s, --no-%s or --%s=true|false, not %q", name, name, name, name, val)}
			}
			p.vals[name] = strconv.FormatBool(b)
		default:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, &argError{msg: fmt.Sprintf("--%s needs a value (%s)", name, d.arg)}
				}
				i++
				val = args[i]
			}
			if d.kind == optList {
				p.lists[name] = append(p.lists[name], val)
			} else {
				p.vals[name] = val
			}
		}
	}
	if len(pos) == 0 {
		if p.help {
			return p, nil
		}
		return nil, &argError{msg: "no command given"}
	}
	name, n := pos[0], 1
	if group := pos[0]; group == "keys" || group == "hdl" || group == "webhooks" {
		if len(pos) < 2 {
			return nil, &argError{group: group, msg: fmt.Sprintf("want a subcommand: %s", groupSubs(group))}
		}
		name, n = group+" "+pos[1], 2
	}
	p.cmd = findCommand(name)
	if p.cmd == nil {
		if n == 2 {
			return nil, &argError{group: pos[0], msg: fmt.Sprintf("unknown subcommand %q: want %s", pos[1], groupSubs(pos[0]))}
		}
		return nil, &argError{msg: fmt.Sprintf("unknown command %q", name)}
	}
	p.pos = pos[n:]
	allowed := map[string]bool{}
	for _, o := range p.cmd.accepts() {
		allowed[o] = true
	}
	for _, g := range given {
		if !allowed[g] {
			return nil, &argError{cmd: p.cmd, msg: fmt.Sprintf("--%s is not an option of %s", g, name)}
		}
	}
	return p, nil
}

func groupSubs(group string) string {
	var subs []string
	for _, c := range commands {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			subs = append(subs, sub)
		}
	}
	return strings.Join(subs, ", ")
}

// groupUsageError prints an error in choosing a subcommand of group: the
// message, the group's usage lines and where their help is. It returns 2.
func groupUsageError(w io.Writer, group, msg string) int {
	fmt.Fprintf(w, "pidctl %s: %s\n", group, msg)
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(w, "usage: %s\n", c.usageLine())
		}
	}
	fmt.Fprintf(w, "run 'pidctl help %s' for the rest\n", group)
	return 2
}

// usageError prints a usage error: the message, the command's usage line and
// where its full help is. It returns the exit status, 2.
func usageError(w io.Writer, cmd *command, msg string) int {
	if cmd == nil {
		fmt.Fprintf(w, "pidctl: %s\nrun 'pidctl help' for the commands\n", msg)
		return 2
	}
	fmt.Fprintf(w, "pidctl %s: %s\nusage: %s\nrun 'pidctl help %s' for the rest\n", cmd.name, msg, cmd.usageLine(), cmd.name)
	return 2
}

// usage prints every command's usage line.
func usage(w io.Writer) {
	fmt.Fprint(w, "usage: pidctl COMMAND [arguments] [options]   (options may come anywhere)\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c.usageLine())
	}
	fmt.Fprint(w, `
Admin API commands take --admin URL, --key-file FILE and --json; the environment
can hold the first two (PIDCTL_ADMIN, PIDCTL_KEY_FILE). Switches are --x or --no-x.
'pidctl help COMMAND' prints a command's options.
`)
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
