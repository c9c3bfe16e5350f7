package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeShellSkipped are the README's sh-block lines that TestReadmeShellBlocks
// does not run, each with the reason. A line listed here that the README no
// longer holds fails the test.
var readmeShellSkipped = map[string]string{
	"make run":               "starts the node every other example runs against (this test starts it as make run does: pidnode serve --demo)",
	"make test":              "runs every test, this one included",
	"systemctl stop pidnode": "a step of the restore procedure on a host with systemd",
	"mv /var/lib/pidnode/pidnode.db /var/lib/pidnode/pidnode.db.old": "a step of the restore procedure on a host (/var/lib/pidnode)",
	"cp pidnode-2026-11-22.db /var/lib/pidnode/pidnode.db":           "a step of the restore procedure on a host (/var/lib/pidnode)",
}

// bannerURL is an address the banner prints.
var bannerURL = regexp.MustCompile(`http://[^\s)]+`)

// shellLine is one command of the README or the banner, with the comment
// after it ("# 302 …" names the status the command shows).
type shellLine struct{ cmd, comment string }

// readmeShellLines returns the command lines of the README's sh blocks other
// than pidctl and pidnode ones (TestReadmeExamples runs those), in README
// order; comment-only lines are left out.
func readmeShellLines(t *testing.T) []shellLine {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []shellLine
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			in = !in && s == "sh"
			continue
		}
		if !in {
			continue
		}
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cmd, comment := splitComment(l)
		if w, _, _ := strings.Cut(cmd, " "); w == "pidctl" || w == "pidnode" {
			continue
		}
		out = append(out, shellLine{cmd, comment})
	}
	return out
}

// splitComment cuts a shell line at its first '#' that starts a comment
// (after a space and outside quotes).
func splitComment(l string) (cmd, comment string) {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && (l[i-1] == ' ' || l[i-1] == '\t'):
			return strings.TrimSpace(l[:i]), strings.TrimSpace(l[i+1:])
		}
	}
	return strings.TrimSpace(l), ""
}

// optionalTools are the commands the README's "Optional tools:" line names:
// an example needing one that is not installed is skipped; any other missing
// command fails.
func optionalTools(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Optional tools:") {
			for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(line, -1) {
				tools[m[1]] = true
			}
		}
	}
	if len(tools) == 0 {
		t.Fatal(`the README has no "Optional tools:" line`)
	}
	return tools
}

// demoRoot starts a real `pidnode serve --demo` (every listener on port 0)
// with its data in ROOT/data, as make run keeps it in ./data, and bin/pidctl
// and bin/pidnode beside it: commands run in ROOT find what they find in the
// repository's directory after make run.
func demoRoot(t *testing.T) (*node, string) {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "pidctl"), "pidnode/cmd/pidctl").CombinedOutput(); err != nil {
		t.Fatalf("go build pidctl: %v\n%s", err, out)
	}
	if err := os.Symlink(binPath, filepath.Join(bin, "pidnode")); err != nil {
		t.Fatal(err)
	}
	return startNode(t, filepath.Join(root, "data"), "--demo"), root
}

var (
	statusLineRE = regexp.MustCompile(`(?m)^HTTP/[0-9.]+ ([0-9]{3})`)
	problemRE    = regexp.MustCompile(`"status":\s*[45][0-9][0-9]`)
	leadStatusRE = regexp.MustCompile(`^([0-9]{3})\b`)
)

// runShell runs line through sh in dir as a reader would paste it, and checks
// what it shows: exit status 0, no HTTP error status or problem details, the
// status the comment names (when it starts with one), an answer from dig. A
// line that asks for an event stream is ended after 2 s, once it has shown
// something.
func runShell(t *testing.T, dir string, l shellLine, opt map[string]bool) {
	t.Helper()
	tool, _, _ := strings.Cut(l.cmd, " ")
	look := tool
	if strings.Contains(tool, "/") {
		look = filepath.Join(dir, tool) // bin/pidctl, beside the data as after make run
	}
	if _, err := exec.LookPath(look); err != nil {
		if opt[tool] {
			t.Logf("skipped (optional %s is not installed): %s", tool, l.cmd)
			return
		}
		t.Errorf("%s: %s is not installed and the README does not mark it optional", l.cmd, tool)
		return
	}
	stream := strings.Contains(l.cmd, "text/event-stream")
	limit := 10 * time.Second
	if stream {
		limit = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", l.cmd)
	// At the limit the whole group goes (sh and the curl it started), and
	// Run returns even if a grandchild still holds the output open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	got := out.String()
	switch {
	case stream && ctx.Err() != nil:
		if strings.TrimSpace(got) == "" {
			t.Errorf("%s\n  showed nothing in 2 s", l.cmd)
		}
	case err != nil:
		t.Errorf("%s\n  %v\n%s", l.cmd, err, got)
		return
	}
	if m := statusLineRE.FindStringSubmatch(got); m != nil {
		if m[1] >= "400" {
			t.Errorf("%s\n  answered %s:\n%s", l.cmd, m[1], got)
		}
		if w := leadStatusRE.FindStringSubmatch(l.comment); w != nil && w[1] != m[1] {
			t.Errorf("%s\n  answered %s, its comment says %s:\n%s", l.cmd, m[1], w[1], got)
		}
	} else if leadStatusRE.MatchString(l.comment) {
		t.Errorf("%s\n  its comment names a status, the output shows none:\n%s", l.cmd, got)
	}
	if problemRE.MatchString(got) {
		t.Errorf("%s\n  answered with an error:\n%s", l.cmd, got)
	}
	if tool == "dig" && (strings.TrimSpace(got) == "" || strings.Contains(got, "connection timed out")) {
		t.Errorf("%s\n  no answer: %q", l.cmd, got)
	}
}

// TestReadmeShellBlocks runs every command of the README's sh blocks (other
// than pidctl and pidnode lines: TestReadmeExamples) as pasted, in the
// README's order, against a real `pidnode serve --demo` in a directory laid
// out as the repository's after `make run`. Only the addresses change: the
// default ports become the node's.
func TestReadmeShellBlocks(t *testing.T) {
	n, root := demoRoot(t)
	_, dnsPort, _ := net.SplitHostPort(n.addr["dns"])
	addr := strings.NewReplacer("127.0.0.1:8000", n.addr["resolver"], "127.0.0.1:8001", n.addr["admin"],
		"127.0.0.1:2641", n.addr["hdl"], "-p 8053", "-p "+dnsPort)
	opt := optionalTools(t)
	lines := readmeShellLines(t)
	ran := 0
	for _, l := range lines {
		if _, skip := readmeShellSkipped[l.cmd]; skip {
			continue
		}
		l.cmd = addr.Replace(l.cmd)
		runShell(t, root, l, opt)
		ran++
	}
	for c := range readmeShellSkipped {
		found := false
		for _, l := range lines {
			found = found || l.cmd == c
		}
		if !found {
			t.Errorf("readmeShellSkipped lists %q, which the README no longer holds", c)
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README shell lines of %d, want at least 10: is the extraction broken?\n%q", ran, len(lines), lines)
	}
}

// bannerCommands returns the commands of the banner (lines indented by two
// spaces that start with a command; a trailing '\' continues a command on
// the next line) and the http URLs it names elsewhere.
func bannerCommands(banner string) (cmds []shellLine, urls []string) {
	sc := bufio.NewScanner(strings.NewReader(banner))
	sc.Buffer(nil, 1<<20)
	var cont strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if cont.Len() > 0 {
			cont.WriteString(strings.TrimSpace(line))
			if strings.HasSuffix(line, `\`) {
				s := cont.String()
				cont.Reset()
				cont.WriteString(strings.TrimSuffix(s, `\`))
				continue
			}
			cmd, comment := splitComment(cont.String())
			cmds = append(cmds, shellLine{cmd, comment})
			cont.Reset()
			continue
		}
		l, ok := strings.CutPrefix(line, "  ")
		if !ok {
			continue
		}
		if w, _, _ := strings.Cut(l, " "); w == "curl" || w == "dig" || w == "bin/pidctl" {
			if strings.HasSuffix(l, `\`) {
				cont.WriteString(strings.TrimSuffix(l, `\`))
				continue
			}
			cmd, comment := splitComment(l)
			cmds = append(cmds, shellLine{cmd, comment})
			continue
		}
		urls = append(urls, bannerURL.FindAllString(l, -1)...)
	}
	return cmds, urls
}

// TestBannerCommands runs every command the banner of `pidnode serve --demo`
// prints, as printed, in a directory laid out as the repository's after
// `make run`, and opens every other address it names.
func TestBannerCommands(t *testing.T) {
	n, root := demoRoot(t)
	banner := n.stdout.String()
	cmds, urls := bannerCommands(banner)
	opt := optionalTools(t)
	for _, want := range []string{"curl -i", "curl -sS -X PUT", "dig @", "bin/pidctl hdl resolve"} {
		found := false
		for _, c := range cmds {
			found = found || strings.HasPrefix(c.cmd, want)
		}
		if !found {
			t.Errorf("the banner has no %q command:\n%s", want, banner)
		}
	}
	for _, c := range cmds {
		runShell(t, root, c, opt)
	}
	for _, want := range []string{"/console/", "/apply", "/openapi.json", "/metrics", "?action=showurls"} {
		found := false
		for _, u := range urls {
			found = found || strings.Contains(u, want)
		}
		if !found {
			t.Errorf("the banner names no %s address:\n%s", want, banner)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, u := range urls {
		resp, err := client.Get(u)
		if err != nil {
			t.Errorf("GET %s: %v", u, err)
			continue
		}
		resp.Body.Close()
		// Demo identifiers may be reserved (404) or withdrawn (410); the
		// admin pages answer 200 or send the browser on (303).
		if resp.StatusCode >= 500 || (strings.Contains(u, n.addr["admin"]) && resp.StatusCode >= 400) {
			t.Errorf("GET %s: %d", u, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "problem+json") {
			t.Errorf("GET %s: %s, want a page", u, ct)
		}
	}
	if k, err := os.ReadFile(filepath.Join(root, "data", "demo.key")); err != nil || strings.TrimSpace(string(k)) != n.Key {
		t.Errorf("data/demo.key = %q, %v; want the banner's key %q", k, err, n.Key)
	}
}
