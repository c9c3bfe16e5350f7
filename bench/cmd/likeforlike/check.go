package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// server is one NAME=ADDR argument.
type server struct {
	name, addr string
	minimal    bool
}

func parseServer(s string, minimal bool) (server, error) {
	name, addr, ok := strings.Cut(s, "=")
	if !ok || name == "" || addr == "" {
		return server{}, fmt.Errorf("%q: want NAME=ADDR", s)
	}
	return server{name, addr, minimal}, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// names returns the header names of r without the skipped ones, lower case,
// each as often as it occurs.
func names(r *response) map[string]int {
	m := map[string]int{}
	for _, h := range r.Headers {
		if !skipped(h.Name) {
			m[strings.ToLower(h.Name)]++
		}
	}
	return m
}

// nameList is names(r) in the order sent, "link×5" for repeats.
func nameList(r *response) string {
	count := names(r)
	var out []string
	seen := map[string]bool{}
	for _, h := range r.Headers {
		n := strings.ToLower(h.Name)
		if skipped(n) || seen[n] {
			continue
		}
		seen[n] = true
		if count[n] > 1 {
			out = append(out, fmt.Sprintf("%s×%d", h.Name, count[n]))
		} else {
			out = append(out, h.Name)
		}
	}
	return strings.Join(out, ", ")
}

// values returns the values of header name with the server's base URL set
// aside, sorted.
func values(r *response, name, base string) []string {
	var vs []string
	for _, v := range r.get(name) {
		vs = append(vs, strings.ReplaceAll(v, base, baseToken))
	}
	sort.Strings(vs)
	return vs
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "…"
	}
	return s
}

// compare judges o (from oAddr) against the reference r (from rAddr): ok and
// a note, or not ok and the reason.
func compare(r *response, rAddr string, o *response, oAddr string, tol float64) (bool, string) {
	if r.Status != o.Status {
		return false, fmt.Sprintf("status %d vs %d", o.Status, r.Status)
	}
	rn, on := names(r), names(o)
	var diff []string
	for n, c := range on {
		if rn[n] < c {
			diff = append(diff, fmt.Sprintf("+%s", n))
		}
	}
	for n, c := range rn {
		if on[n] < c {
			diff = append(diff, fmt.Sprintf("−%s", n))
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		return false, "header sets differ: " + strings.Join(diff, " ")
	}
	rBase, oBase := "http://"+rAddr, "http://"+oAddr
	var keys []string
	for n := range rn {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		rv, ov := values(r, n, rBase), values(o, n, oBase)
		if n == "expires" {
			if len(rv[0]) != len(ov[0]) {
				return false, fmt.Sprintf("Expires %q vs %q", ov[0], rv[0])
			}
			continue
		}
		for i := range rv {
			if rv[i] != ov[i] {
				return false, fmt.Sprintf("%s values differ: %q vs %q", n, short(ov[i]), short(rv[i]))
			}
		}
	}
	d := float64(o.Total()-r.Total()) / float64(r.Total())
	if math.Abs(d) > tol {
		return false, fmt.Sprintf("sizes differ by %+.1f %% (%d vs %d bytes)", 100*d, o.Total(), r.Total())
	}
	body := "same body"
	if strings.ReplaceAll(string(o.Body), oBase, baseToken) != strings.ReplaceAll(string(r.Body), rBase, baseToken) {
		body = fmt.Sprintf("own body of %d bytes (pidnode's %d)", len(o.Body), len(r.Body))
	}
	return true, fmt.Sprintf("same header set and values; %s; %d vs %d bytes (%+.1f %%)", body, o.Total(), r.Total(), 100*d)
}

func check(args []string) error {
	fs := newFlagSet("check")
	scenario := fs.String("scenario", "redirect", "scenario name for the table")
	pathsFile := fs.String("paths", "", "request stream: the first -n distinct paths are checked")
	path := fs.String("path", "", "one path to check (instead of -paths)")
	n := fs.Int("n", 1, "distinct paths of -paths to check")
	prefix := fs.String("prefix", "", "added before every path (e.g. /api/handles)")
	suffix := fs.String("suffix", "", "added after every path (e.g. ?noredirect)")
	accept := fs.String("accept", "", "Accept header of every request")
	tol := fs.Float64("tolerance", 0.05, "largest relative difference of total sizes")
	md := fs.String("md", "", "markdown file the table is appended to")
	var minimal multiFlag
	fs.Var(&minimal, "minimal", "NAME=ADDR of a server printed for reference, not judged (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var servers []server
	for _, a := range fs.Args() {
		s, err := parseServer(a, false)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return errors.New("check needs the reference server as NAME=ADDR")
	}
	for _, a := range minimal {
		s, err := parseServer(a, true)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	var paths []string
	switch {
	case *path != "":
		paths = []string{*path}
	case *pathsFile != "":
		data, err := os.ReadFile(*pathsFile)
		if err != nil {
			return err
		}
		paths = distinctPaths(data, *n)
	}
	if len(paths) == 0 {
		return errors.New("check needs -path or -paths")
	}
	first := make([]*response, len(servers))
	firstErr := make([]error, len(servers))
	verdict := make([]string, len(servers))
	for pi, p := range paths {
		target := *prefix + p + *suffix
		ref, err := fetchOne(servers[0].addr, target, *accept)
		if err != nil {
			return fmt.Errorf("%s: %w", servers[0].name, err)
		}
		if pi == 0 {
			first[0] = ref
		}
		for i := 1; i < len(servers); i++ {
			s := servers[i]
			o, err := fetchOne(s.addr, target, *accept)
			if pi == 0 {
				first[i], firstErr[i] = o, err
			}
			if s.minimal || strings.HasPrefix(verdict[i], "n/a") {
				continue
			}
			if err != nil {
				verdict[i] = "n/a: " + err.Error()
				continue
			}
			ok, note := compare(ref, servers[0].addr, o, s.addr, *tol)
			switch {
			case !ok:
				verdict[i] = fmt.Sprintf("n/a: %s (%s)", note, p)
			case pi == 0:
				verdict[i] = note
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: `%s`", *scenario, *prefix+paths[0]+*suffix)
	if *accept != "" {
		fmt.Fprintf(&b, " with `Accept: %s`", *accept)
	}
	if len(paths) > 1 {
		fmt.Fprintf(&b, " (%d distinct paths of the stream compared, bytes of the first)", len(paths))
	}
	b.WriteString("\n\n| server | status line | header names (without Date, Server, Connection, Content-Length) | status line + headers | body | total | against " + servers[0].name + " |\n|---|---|---|---:|---:|---:|---|\n")
	for i, s := range servers {
		r := first[i]
		if r == nil {
			fmt.Fprintf(&b, "| %s | – | – | – | – | – | n/a: %v |\n", s.name, firstErr[i])
			continue
		}
		v := "reference"
		switch {
		case s.minimal:
			v = "minimal: for reference, not judged"
		case i > 0:
			v = verdict[i]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %s |\n", s.name, r.StatusLine, nameList(r), r.HeadBytes, len(r.Body), r.Total(),
			strings.ReplaceAll(v, "|", `\|`))
	}
	b.WriteString("\n")
	if *md != "" {
		f, err := os.OpenFile(*md, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(b.String()); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprint(os.Stderr, b.String())
	for i, s := range servers {
		total := 0
		if first[i] != nil {
			total = first[i].Total()
		}
		switch {
		case i == 0:
			fmt.Printf("%s\treference\t%d bytes\n", s.name, total)
		case s.minimal:
			fmt.Printf("%s\tminimal\t%d bytes\n", s.name, total)
		case strings.HasPrefix(verdict[i], "n/a"):
			fmt.Printf("%s\t%s\n", s.name, verdict[i])
		default:
			fmt.Printf("%s\tok\t%s\n", s.name, verdict[i])
		}
	}
	return nil
}
