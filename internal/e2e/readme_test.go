package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeSkipped are the README's pidctl and pidnode command lines this test
// does not run, each with the reason. A line listed here that the README no
// longer holds fails the test, so the list follows README edits.
var readmeSkipped = map[string]string{
	"pidnode serve [--config FILE] [flags]":                 "serves until stopped; the node every other example runs against is this command",
	"pidnode serve":                                         "serves until stopped (as above)",
	"pidnode serve --config /etc/pidnode.toml":              "a step of the restore procedure on a host (systemctl, /var/lib/pidnode, /etc/pidnode.toml)",
	"pidctl backup":                                         "the command's name in a sentence; `pidctl backup FILE` is run",
	"pidnode import":                                        "the command's name in a sentence; `pidnode import --data DIR FILE` is run",
	"pidnode cluster seed --data DIR --etcd-endpoints URLS": "needs an etcd cluster; TestClusterSeed runs it against embedded etcd members",
	"pidnode cluster reclaim --etcd-endpoints URLS":         "needs a full etcd; TestClusterStorageFull runs it against an embedded etcd member at its quota",
	"pidnode cluster move-namespace --namespace NS --to d2 --etcd-shard reg=URLS --etcd-shard d1=URLS …": "needs etcd shards; TestClusterShardsMoveNamespace runs it against embedded etcd members",
}

var (
	inlineCmdRE = regexp.MustCompile("`((?:bin/)?(?:pidctl|pidnode) [^`]*)`")
	commentRE   = regexp.MustCompile(`\s+#.*$`)
)

// readmeCommands returns the pidctl and pidnode command lines of the README:
// every line of a sh code block that starts with one, and every inline code
// span that does.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	seen := map[string]bool{}
	add := func(c string) {
		if c = strings.TrimSpace(c); c != "" && !seen[c] {
			seen[c] = true
			cmds = append(cmds, c)
		}
	}
	fence := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			if fence == "" {
				fence = s
				if fence == "" {
					fence = "text"
				}
			} else {
				fence = ""
			}
			continue
		}
		switch {
		case fence == "sh":
			l := commentRE.ReplaceAllString(strings.TrimSpace(line), "")
			if w, _, _ := strings.Cut(l, " "); w == "pidctl" || w == "pidnode" {
				add(l)
			}
		case fence == "":
			for _, m := range inlineCmdRE.FindAllStringSubmatch(line, -1) {
				add(m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestReadmeExamples runs every pidctl and pidnode command line of the README
// against a real node (the built binaries, loopback, a temporary data
// directory, demo data), through sh as a reader would paste it, and wants exit
// status 0. Placeholders (DIR, FILE, HANDLE, HOST:PORT, URL, F, COMMAND, the
// example admin host) become this node's values; options shown in brackets
// are given.
func TestReadmeExamples(t *testing.T) {
	bin := t.TempDir()
	pidctlBin := filepath.Join(bin, "pidctl")
	if out, err := exec.Command("go", "build", "-o", pidctlBin, "pidnode/cmd/pidctl").CombinedOutput(); err != nil {
		t.Fatalf("go build pidctl: %v\n%s", err, out)
	}
	if err := os.Symlink(binPath, filepath.Join(bin, "pidnode")); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	n := startNode(t, data, "--demo")
	opKey := filepath.Join(data, "operator.key")
	snaaKey := filepath.Join(t.TempDir(), "snaa.key")
	if err := os.WriteFile(snaaKey, []byte(n.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()    // files the examples write
	offline := t.TempDir() // DIR of the offline pidnode commands (the node holds data's database)
	records := filepath.Join(work, "records.jsonl")
	if err := os.WriteFile(records, []byte(`{"handle":"21.12345/README-1","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/readme"}}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileFor := map[string]string{
		"pidnode import": records,
		"pidnode backup": filepath.Join(work, "offline-backup.db"),
		"pidnode keygen": filepath.Join(work, "hdl-key.pem"),
		"pidctl backup":  filepath.Join(work, "online-backup.db"),
	}
	// SNAA commands take the demo SNAA's key, the rest the operator's.
	snaaCommands := map[string]bool{"pidctl stats": true, "pidctl get": true, "pidctl list": true, "pidctl create": true,
		"pidctl update": true, "pidctl history": true, "pidctl whoami": true, "pidctl bulk": true}
	words := regexp.MustCompile(`\S+`)

	cmds := readmeCommands(t)
	ran := 0
	for _, c := range cmds {
		if _, skip := readmeSkipped[c]; skip {
			continue
		}
		w := strings.Fields(c)
		name := strings.TrimPrefix(w[0], "bin/")
		if len(w) > 1 {
			name += " " + w[1]
		}
		key := opKey
		if snaaCommands[name] {
			key = snaaKey
		}
		line := strings.ReplaceAll(c, "https://admin.example.org:8001", n.adminURL())
		for _, opt := range []string{"[--json]", "[--udp]", "[HANDLE]"} {
			line = strings.ReplaceAll(line, opt, strings.Trim(opt, "[]"))
		}
		line = words.ReplaceAllStringFunc(line, func(word string) string {
			switch word {
			case "DIR":
				return offline
			case "FILE":
				if f, ok := fileFor[name]; ok {
					return f
				}
				t.Errorf("README example %q: no FILE for %s; add one to fileFor", c, name)
			case "HANDLE":
				return n.Handles[0]
			case "HOST:PORT":
				return n.addr["hdl"]
			case "URL":
				return n.adminURL()
			case "F":
				return key
			case "COMMAND":
				return "snaas"
			}
			return word
		})
		line = strings.Replace(line, "bin/", "", 1)
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = data // where operator.key is, as on the node's host
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"PIDCTL_ADMIN="+n.adminURL(), "PIDCTL_KEY_FILE="+key)
		out, err := cmd.CombinedOutput()
		t.Logf("%s\n  ran as: %s", c, line)
		if err != nil {
			t.Errorf("README example %q\n  ran as: %s\n  %v\n%s", c, line, err, out)
		}
		ran++
	}
	for c := range readmeSkipped {
		found := false
		for _, x := range cmds {
			found = found || x == c
		}
		if !found {
			t.Errorf("readmeSkipped lists %q, which the README no longer holds", c)
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README examples of %d found, want at least 10: is the extraction broken?\n%q", ran, len(cmds), cmds)
	}
	t.Logf("ran %d README command lines, skipped %d", ran, len(readmeSkipped))
}

// TestVersionMatchesBuildInfo: `pidnode version` of the real binary reports what
// `go version -m` reads from the same file.
func TestVersionMatchesBuildInfo(t *testing.T) {
	v := checkVersion(t, binPath)
	// make run's banner is the first line pidnode serve prints.
	n := startNode(t, t.TempDir())
	if first, _, _ := strings.Cut(n.stdout.String(), "\n"); first != v+" is running. Ctrl-C stops it." {
		t.Errorf("banner %q, want the version %q", first, v)
	}
}

// TestVersionFromGitCheckout builds the binary as `make build` does, in a fresh
// clone of this commit, and wants the commit's revision and an unmodified
// tree in `pidnode version`.
func TestVersionFromGitCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary in a fresh clone")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "pidnode")
	if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "pidnode")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", bin, "./cmd/pidnode")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the clone: %v\n%s", err, out)
	}
	got := checkVersion(t, bin)
	if want := strings.TrimSpace(string(head)); !strings.Contains(got, " revision "+want+" (") || strings.Contains(got, "modified") {
		t.Errorf("pidnode version = %q, want revision %s of an unmodified tree", got, want)
	}
}

// checkVersion runs bin version, compares it field by field with go version
// -m, and returns the line.
func checkVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	settings := map[string]string{}
	var goVersion, modVersion string
	for i, l := range strings.Split(string(meta), "\n") {
		f := strings.Fields(l)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				settings[k] = v
			}
		}
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	mod := ""
	switch settings["vcs.modified"] {
	case "true":
		mod = ", modified"
	case "":
		mod = ", modified unknown"
	}
	want := fmt.Sprintf("pidnode %s revision %s (%s%s) %s\n", or(modVersion, "(devel)"), or(settings["vcs.revision"], "unknown"),
		or(settings["vcs.time"], "unknown"), mod, goVersion)
	if string(out) != want {
		t.Errorf("pidnode version = %q, want %q (go version -m:\n%s)", out, want, meta)
	}
	return strings.TrimSpace(string(out))
}
