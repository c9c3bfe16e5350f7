package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseRows hold, for every command, a command line as people type it and what
// it must parse to. TestParseEveryCommand fails for a command without a row
// and for an option of a command that no row of it gives.
var parseRows = []struct {
	args  []string
	cmd   string
	pos   []string
	vals  map[string]string
	lists map[string][]string
}{
	{[]string{"--admin", "http://a", "apply", "--organisation", "Org", "--tech-name=T", "--tech-email", "t@x", "--admin-name", "A",
		"--admin-email=a@x", "--policy-version", "v1", "--maintenance", "we do", "--file", "app.json", "--key-file", "k", "--json", "--prefix", "21.T1", "--custom-ids"},
		"apply", nil, map[string]string{"admin": "http://a", "organisation": "Org", "tech-name": "T", "tech-email": "t@x", "admin-name": "A",
			"admin-email": "a@x", "policy-version": "v1", "maintenance": "we do", "file": "app.json", "key-file": "k", "json": "true", "custom-ids": "true"},
		map[string][]string{"prefix": {"21.T1"}}},
	{[]string{"apply-status", "APP1", "--token-file", "t"}, "apply-status", []string{"APP1"}, map[string]string{"token-file": "t"}, nil},
	{[]string{"keys", "create", "--name", "ci"}, "keys create", nil, map[string]string{"name": "ci"}, nil},
	{[]string{"events", "--test", "--after", "3", "--limit", "10", "--all"}, "events", nil, map[string]string{"test": "true", "after": "3", "limit": "10", "all": "true"}, nil},
	{[]string{"linkcheck", "21.1/NS/ID", "--state", "all", "--limit", "5", "--cursor", "c", "--svc", "s", "--test", "--prod"}, "linkcheck", []string{"21.1/NS/ID"},
		map[string]string{"state": "all", "limit": "5", "cursor": "c", "svc": "s", "test": "true", "prod": "true"}, nil},
	{[]string{"webhooks", "list", "--test"}, "webhooks list", nil, map[string]string{"test": "true"}, nil},
	{[]string{"webhooks", "add", "--url", "https://h", "--kind", "handle.create", "--kind=handle.update", "--description", "d", "--after", "0", "--test"}, "webhooks add", nil,
		map[string]string{"url": "https://h", "description": "d", "after": "0", "test": "true"}, map[string][]string{"kind": {"handle.create", "handle.update"}}},
	{[]string{"webhooks", "get", "W1", "--test"}, "webhooks get", []string{"W1"}, map[string]string{"test": "true"}, nil},
	{[]string{"webhooks", "deliveries", "W1", "--limit", "5", "--test"}, "webhooks deliveries", []string{"W1"}, map[string]string{"limit": "5", "test": "true"}, nil},
	{[]string{"webhooks", "enable", "W1", "--test"}, "webhooks enable", []string{"W1"}, map[string]string{"test": "true"}, nil},
	{[]string{"webhooks", "delete", "W1", "--test"}, "webhooks delete", []string{"W1"}, map[string]string{"test": "true"}, nil},
	{[]string{"applications", "--state", "SUBMITTED"}, "applications", nil, map[string]string{"state": "SUBMITTED"}, nil},
	{[]string{"application", "APP1", "--json=false"}, "application", []string{"APP1"}, map[string]string{"json": "false"}, nil},
	{[]string{"approve", "APP1", "--namespace", "X", "--prefix", "21.1", "--prefix=21.T1", "--custom-ids", "--note", "hi", "--shard", "d1"},
		"approve", []string{"APP1"}, map[string]string{"namespace": "X", "custom-ids": "true", "note": "hi", "shard": "d1"}, map[string][]string{"prefix": {"21.1", "21.T1"}}},
	{[]string{"reject", "--note", "no", "APP2"}, "reject", []string{"APP2"}, map[string]string{"note": "no"}, nil},
	{[]string{"snaas", "--json"}, "snaas", nil, map[string]string{"json": "true"}, nil},
	{[]string{"snaa", "S1"}, "snaa", []string{"S1"}, map[string]string{}, nil},
	{[]string{"snaa-set", "S1", "--no-custom-ids", "--suspended", "--prefix", "21.2"}, "snaa-set", []string{"S1"},
		map[string]string{"custom-ids": "false", "suspended": "true"}, map[string][]string{"prefix": {"21.2"}}},
	{[]string{"snaa-set", "S1", "--max-keys", "20"}, "snaa-set", []string{"S1"}, map[string]string{"max-keys": "20"}, nil},
	{[]string{"keys", "issue", "S1", "--name", "ci"}, "keys issue", []string{"S1"}, map[string]string{"name": "ci"}, nil},
	{[]string{"keys", "list", "S1"}, "keys list", []string{"S1"}, map[string]string{}, nil},
	{[]string{"keys", "revoke", "S1", "K1"}, "keys revoke", []string{"S1", "K1"}, map[string]string{}, nil},
	{[]string{"audit", "--after", "10", "--limit=5"}, "audit", nil, map[string]string{"after": "10", "limit": "5"}, nil},
	{[]string{"backup", "--", "-odd-name.db"}, "backup", []string{"-odd-name.db"}, map[string]string{}, nil},
	{[]string{"whoami", "--test"}, "whoami", nil, map[string]string{"test": "true"}, nil},
	{[]string{"--test", "create", "--custom-id", "c1", "--idempotency-key", "k1", "--url", "https://x", "--metadata", "-", "--file", "p.json", "--status", "SUBMITTED"},
		"create", nil, map[string]string{"test": "true", "custom-id": "c1", "idempotency-key": "k1", "url": "https://x", "metadata": "-", "file": "p.json", "status": "SUBMITTED"}, nil},
	{[]string{"update", "21.1/NS/ID", "--if-match", "3", "--url", "https://y", "--metadata", "m.json", "--file", "p.json", "--svc", "s", "--prod", "--no-test", "--status", "DEPRECATED"},
		"update", []string{"21.1/NS/ID"}, map[string]string{"if-match": "3", "url": "https://y", "metadata": "m.json", "file": "p.json", "svc": "s", "prod": "true", "test": "false", "status": "DEPRECATED"}, nil},
	{[]string{"get", "21.1/NS/ID", "-test", "--svc=x", "--prod=false"}, "get", []string{"21.1/NS/ID"}, map[string]string{"test": "true", "svc": "x", "prod": "false"}, nil},
	{[]string{"history", "--svc", "x", "21.1/NS/ID", "--test", "false", "--prod"}, "history", []string{"21.1/NS/ID"}, map[string]string{"svc": "x", "test": "false", "prod": "true"}, nil},
	{[]string{"stats", "21.1/NS/ID", "--from", "2026-01-01", "--to=2026-01-31", "--test", "--svc", "svc", "--prod"}, "stats", []string{"21.1/NS/ID"},
		map[string]string{"from": "2026-01-01", "to": "2026-01-31", "test": "true", "svc": "svc", "prod": "true"}, nil},
	{[]string{"list", "--test", "--status", "REGISTERED", "--url", "https://x/*", "--limit", "10", "--cursor", "abc"}, "list", nil,
		map[string]string{"test": "true", "status": "REGISTERED", "url": "https://x/*", "limit": "10", "cursor": "abc"}, nil},
	{[]string{"list", "--q", "zinc oxide", "--sort=-changed", "--page", "2", "--format", "csv"}, "list", nil,
		map[string]string{"q": "zinc oxide", "sort": "-changed", "page": "2", "format": "csv"}, nil},
	{[]string{"bulk", "-", "--test"}, "bulk", []string{"-"}, map[string]string{"test": "true"}, nil},
	{[]string{"hdl", "resolve", "21.1/X", "--server", "h:1", "--udp", "--timeout", "2s", "--type", "URL", "--type=EMAIL", "--index", "1", "--json"},
		"hdl resolve", []string{"21.1/X"}, map[string]string{"server": "h:1", "udp": "true", "timeout": "2s", "json": "true"},
		map[string][]string{"type": {"URL", "EMAIL"}, "index": {"1"}}},
	{[]string{"--udp", "hdl", "siteinfo", "--server=h:2", "--timeout", "1s"}, "hdl siteinfo", nil, map[string]string{"server": "h:2", "udp": "true", "timeout": "1s"}, nil},
}

func TestParseEveryCommand(t *testing.T) {
	covered := map[string]map[string]bool{}
	for _, r := range parseRows {
		p, err := parseArgs(r.args)
		if err != nil {
			t.Errorf("%q: %v", r.args, err)
			continue
		}
		if p.cmd.name != r.cmd || !slices.Equal(p.pos, r.pos) || !maps.Equal(p.vals, r.vals) {
			t.Errorf("%q: got %s %q %v, want %s %q %v", r.args, p.cmd.name, p.pos, p.vals, r.cmd, r.pos, r.vals)
		}
		if want := r.lists; !(len(want) == 0 && len(p.lists) == 0) && !reflect.DeepEqual(p.lists, want) {
			t.Errorf("%q: lists %v, want %v", r.args, p.lists, want)
		}
		if covered[r.cmd] == nil {
			covered[r.cmd] = map[string]bool{}
		}
		for k := range p.vals {
			covered[r.cmd][k] = true
		}
		for k := range p.lists {
			covered[r.cmd][k] = true
		}
	}
	for _, c := range commands {
		if covered[c.name] == nil {
			t.Errorf("command %q has no row in parseRows", c.name)
			continue
		}
		for _, o := range c.opts {
			if !covered[c.name][o] {
				t.Errorf("command %q: no row gives --%s", c.name, o)
			}
		}
	}
}

// Every option of every command, in every spelling, before and after the
// positional arguments; options of other commands are refused, naming the
// command.
func TestParseEveryOptionForm(t *testing.T) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		pos := []string{}
		for _, a := range strings.Fields(c.args) {
			if a == strings.ToUpper(a) && !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "[") && !strings.HasPrefix(a, "(") && !strings.Contains(a, "|") {
				pos = append(pos, strings.ToLower(a)+"-arg")
			}
		}
		accepted := map[string]bool{}
		for _, o := range c.accepts() {
			accepted[o] = true
			d := options[o]
			var forms [][]string
			var want string
			switch d.kind {
			case optSwitch:
				forms = [][]string{{"--" + o}, {"-" + o}, {"--" + o + "=true"}, {"--" + o, "true"}}
				want = "true"
				for _, f := range [][]string{{"--no-" + o}, {"--" + o + "=false"}, {"--" + o, "false"}, {"--" + o + "=0"}} {
					checkForm(t, c, words, pos, f, o, "false")
				}
			default:
				forms = [][]string{{"--" + o, "v1"}, {"--" + o + "=v1"}, {"-" + o, "v1"}, {"-" + o + "=v1"}}
				want = "v1"
			}
			for _, f := range forms {
				checkForm(t, c, words, pos, f, o, want)
			}
			if d.kind != optSwitch {
				if _, err := parseArgs(append(append(words, pos...), "--"+o)); err == nil || !strings.Contains(err.Error(), "needs a value") {
					t.Errorf("%s --%s without a value: %v", c.name, o, err)
				}
				if _, err := parseArgs(append(append(words, pos...), "--no-"+o)); err == nil {
					t.Errorf("%s --no-%s accepted for a value option", c.name, o)
				}
			} else if _, err := parseArgs(append(append(words, pos...), "--"+o+"=maybe")); err == nil || !strings.Contains(err.Error(), "is a switch") {
				t.Errorf("%s --%s=maybe: %v", c.name, o, err)
			}
		}
		for name, d := range options {
			if accepted[name] {
				continue
			}
			arg := []string{"--" + name}
			if d.kind != optSwitch {
				arg = append(arg, "v")
			}
			_, err := parseArgs(append(append(words, pos...), arg...))
			var ae *argError
			if !errors.As(err, &ae) || ae.cmd != c || !strings.Contains(ae.msg, "--"+name+" is not an option of "+c.name) {
				t.Errorf("%s --%s: %v, want refused naming the command", c.name, name, err)
			}
		}
		p, err := parseArgs(append(words, "-h"))
		if err != nil || !p.help || p.cmd != c {
			t.Errorf("%s -h: %+v %v", c.name, p, err)
		}
	}
}

func checkForm(t *testing.T, c *command, words, pos, form []string, opt, want string) {
	t.Helper()
	for _, args := range [][]string{
		append(append(append([]string{}, words...), pos...), form...), // after the positionals
		append(append(append([]string{}, form...), words...), pos...), // before the command
		append(append(append([]string{}, words...), form...), pos...), // between
	} {
		p, err := parseArgs(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		got := p.vals[opt]
		if options[opt].kind == optList {
			got = strings.Join(p.lists[opt], ",")
		}
		if p.cmd != c || got != want || !slices.Equal(p.pos, pos) {
			t.Errorf("%q: command %s, --%s=%q, positionals %q; want %s, %q, %q", args, p.cmd.name, opt, got, p.pos, c.name, want, pos)
		}
	}
}

// A usage error prints the error, the one usage line of the command and how
// to get the rest, exit 2; help prints a command's full help.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		cmd  string
		msg  string
	}{
		{[]string{"approve"}, "approve", "want exactly one application ID"},
		{[]string{"approve", "A", "--namespace"}, "approve", "--namespace needs a value (NS)"},
		{[]string{"approve", "A", "--udp"}, "approve", "--udp is not an option of approve"},
		{[]string{"--nope", "get", "x"}, "get", "unknown option --nope"},
		{[]string{"approve", "A", "--custom-ids=perhaps"}, "approve", "--custom-ids is a switch"},
		{[]string{"get", "a", "b"}, "get", "want exactly one HANDLE"},
		{[]string{"keys", "revoke", "S1", "K1", "K2"}, "keys revoke", "want KEY_ID (one of your own keys) or SNAA_ID KEY_ID (operator)"},
		{[]string{"snaa-set", "S1"}, "snaa-set", "nothing to change: give --custom-ids/--no-custom-ids, --suspended/--no-suspended, --prefix P or --max-keys N"},
		{[]string{"hdl", "resolve", "--server", "127.0.0.1:1"}, "hdl resolve", "want exactly one HANDLE"},
		{[]string{"hdl", "resolve", "x", "--index", "one"}, "hdl resolve", `--index "one": want an integer`},
		{[]string{"hdl", "siteinfo", "--timeout", "soon"}, "hdl siteinfo", `--timeout "soon"`},
	} {
		code, out, errs := pidctl(t, c.args...)
		cmd := findCommand(c.cmd)
		want := "pidctl " + c.cmd + ": "
		if code != 2 || out != "" || !strings.HasPrefix(errs, want) || !strings.Contains(errs, c.msg) ||
			!strings.Contains(errs, "\nusage: "+cmd.usageLine()+"\n") || !strings.HasSuffix(errs, "run 'pidctl help "+c.cmd+"' for the rest\n") ||
			strings.Count(errs, "\n") != 3 {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", c.args, code, out, errs)
		}
	}
	for _, args := range [][]string{{"keys", "frob"}, {"hdl"}, {"webhooks"}} {
		code, out, errs := pidctl(t, args...)
		g := args[0]
		if code != 2 || out != "" || !strings.HasPrefix(errs, "pidctl "+g+": want ") && !strings.HasPrefix(errs, "pidctl "+g+`: unknown subcommand "frob": want issue, create, list, revoke`) ||
			!strings.HasSuffix(errs, "run 'pidctl help "+g+"' for the rest\n") || !strings.Contains(errs, "\nusage: pidctl "+g+" ") {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, errs)
		}
	}
	for _, args := range [][]string{{"frobnicate"}, {"--nope"}} {
		code, _, errs := pidctl(t, args...)
		if code != 2 || !strings.Contains(errs, "run 'pidctl help' for the commands") || strings.Count(errs, "\n") != 2 {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, errs)
		}
	}
	for _, c := range commands {
		code, out, errs := pidctl(t, append([]string{"help"}, strings.Fields(c.name)...)...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: "+c.usageLine()+"\n") {
			t.Errorf("help %s: exit %d stderr %q stdout:\n%s", c.name, code, errs, out)
		}
		for _, o := range c.accepts() {
			if !strings.Contains(out, "--"+o) {
				t.Errorf("help %s lacks --%s:\n%s", c.name, o, out)
			}
		}
		var viaH bytes.Buffer
		if code := run(append(strings.Fields(c.name), "--help"), &viaH, &viaH); code != 0 || viaH.String() != out {
			t.Errorf("%s --help differs from help %s:\n%s", c.name, c.name, viaH.String())
		}
	}
	if code, out, _ := pidctl(t, "help", "keys"); code != 0 || strings.Count(out, "usage: pidctl keys ") != 4 {
		t.Errorf("help keys: exit %d\n%s", code, out)
	}
	if code, out, _ := pidctl(t, "help"); code != 0 || !strings.Contains(out, "pidctl approve ID") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// The switches reach the server as booleans: approve ID --custom-ids as the
// help shows it, then snaa-set --no-custom-ids and --suspended, each option
// after the positional argument.
func TestSwitchesAgainstTheAPI(t *testing.T) {
	url, opFile := adminServer(t)
	op := []string{"--admin", url, "--key-file", opFile}
	var app struct{ ID string }
	out := mustRun(t, append(op, "apply", "--json", "--organisation", "Switch Lab", "--tech-name", "T", "--tech-email", "t@example.org",
		"--admin-name", "A", "--admin-email", "a@example.org", "--policy-version", "1", "--maintenance", "The lab keeps its pages.")...)
	if err := json.Unmarshal([]byte(out), &app); err != nil || app.ID == "" {
		t.Fatalf("apply: %q %v", out, err)
	}
	out = mustRun(t, append(op, "approve", app.ID, "--namespace", "SWL", "--custom-ids")...)
	if !strings.Contains(out, "namespace SWL") || !strings.Contains(out, "custom ids true") {
		t.Fatalf("approve --custom-ids:\n%s", out)
	}
	var snaas struct {
		SNAAs []struct {
			ID        string
			CustomIDs bool `json:"custom_ids"`
			Suspended bool
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(op, "snaas", "--json")...)), &snaas); err != nil || len(snaas.SNAAs) != 1 {
		t.Fatalf("snaas: %v %+v", err, snaas)
	}
	id := snaas.SNAAs[0].ID
	mustRun(t, append(op, "snaa-set", id, "--no-custom-ids", "--suspended")...)
	var s struct {
		CustomIDs bool `json:"custom_ids"`
		Suspended bool
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(op, "snaa", id, "--json")...)), &s); err != nil || s.CustomIDs || !s.Suspended {
		t.Fatalf("after snaa-set --no-custom-ids --suspended: %+v %v", s, err)
	}
	// A switch not given leaves the field alone.
	mustRun(t, append(op, "snaa-set", id, "--suspended=false")...)
	if err := json.Unmarshal([]byte(mustRun(t, append(op, "snaa", id, "--json")...)), &s); err != nil || s.CustomIDs || s.Suspended {
		t.Fatalf("after snaa-set --suspended=false: %+v %v", s, err)
	}
}
