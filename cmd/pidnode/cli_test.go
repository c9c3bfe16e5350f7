package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"pidnode/handlev"
)

func runAll(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// An import under a prefix the node does not serve says, in the same line,
// how to serve it; with that flag the same import goes through.
func TestImportUnservedPrefixSaysHowToServeIt(t *testing.T) {
	dir := t.TempDir()
	rec := strings.Replace(referenceRecord, `"handle":"123/abc"`, `"handle":"21.T11978/abc"`, 1)
	code, _, errs := runAll([]string{"import", "--data", dir, "-"}, rec+"\n")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errs)
	}
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("want one line, got %q", errs)
	}
	for _, want := range []string{`"21.T11978"`, "line 1", "--extra-prefix 21.T11978", "extra_prefix", "PIDNODE_EXTRA_PREFIX", "--prefix", "--test-prefix"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q: %q", want, errs)
		}
	}
	if code, _, errs := runAll([]string{"import", "--data", dir, "--extra-prefix", "21.T11978", "-"}, rec+"\n"); code != 0 {
		t.Fatalf("with --extra-prefix: exit %d: %s", code, errs)
	}
	// The hint wraps the typed error, which still carries the prefix.
	err := prefixHint(&handlev.PrefixError{Prefix: "9.X"})
	var pe *handlev.PrefixError
	if !errors.As(err, &pe) || pe.Prefix != "9.X" || !errors.Is(err, handlev.ErrPrefixNotServed) {
		t.Errorf("prefixHint lost the typed error: %v", err)
	}
	if other := errors.New("x"); prefixHint(other) != other {
		t.Error("prefixHint changed an unrelated error")
	}
}

// A usage error prints the one usage line of the command and where the rest
// is, exit 2; `pidnode help CMD` prints the command's full help.
func TestUsageErrorsAndHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"serve", "--no-such-flag"}, []string{"pidnode serve: flag provided but not defined: -no-such-flag", "usage: pidnode serve", "pidnode help serve"}},
		{[]string{"import", "--data", "x"}, []string{"usage: pidnode import --data DIR FILE", "pidnode help import"}},
		{[]string{"export", "--resolver-addr", "x"}, []string{"flag provided but not defined: -resolver-addr", "pidnode help export"}},
		{[]string{"keygen"}, []string{"usage: pidnode keygen FILE", "pidnode help keygen"}},
		{[]string{"version", "extra"}, []string{"usage: pidnode version"}},
		{[]string{"help", "nope"}, []string{`unknown command "nope"`}},
	} {
		code, out, errs := runAll(c.args, "")
		if code != 2 || out != "" {
			t.Errorf("%q: exit %d stdout %q, want 2 and nothing", c.args, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", c.args, w, errs)
			}
		}
		if strings.Count(errs, "\n") > 3 && c.args[0] != "help" {
			t.Errorf("%q: %d lines of stderr, want the usage line only:\n%s", c.args, strings.Count(errs, "\n"), errs)
		}
	}
	for cmd, u := range commandUsage {
		code, out, errs := runAll([]string{"help", cmd}, "")
		if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: "+u.line+"\n") {
			t.Errorf("help %s: exit %d stderr %q stdout:\n%s", cmd, code, errs, out)
		}
		if u.flags == nil || len(u.flags) > 0 {
			for name := range u.flags {
				if !strings.Contains(out, "-"+name+" ") {
					t.Errorf("help %s lacks --%s:\n%s", cmd, name, out)
				}
			}
			if !strings.Contains(out, "-config ") {
				t.Errorf("help %s lacks --config:\n%s", cmd, out)
			}
		}
		if !strings.Contains(usage, "pidnode "+cmd+" ") && !strings.Contains(usage, "pidnode "+cmd+"\n") {
			t.Errorf("the command list lacks %s", cmd)
		}
	}
	if _, out, _ := runAll([]string{"help", "serve"}, ""); !strings.Contains(out, "-extra-prefix") || !strings.Contains(out, "PIDNODE_DATA") {
		t.Errorf("help serve lacks the settings:\n%s", out)
	}
	// -h is the same help, exit 0.
	if code, _, errs := runAll([]string{"serve", "-h"}, ""); code != 0 || !strings.Contains(errs, "usage: pidnode serve") {
		t.Errorf("serve -h: exit %d\n%s", code, errs)
	}
}
