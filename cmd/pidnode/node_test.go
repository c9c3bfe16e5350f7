package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pidnode/store"
)

// referenceRecord is docs/handle-protocol.md §1.1's example as one JSON line, the
// shape `pidnode import` reads (responseCode optional).
const referenceRecord = `{"handle":"123/abc","values":[{"index":100,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"0.NA/123","index":200,"permissions":"111111111111"}},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z"},{"index":1,"type":"URL","data":{"format":"string","value":"http://example.org/x?a=1&b=<2>"},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z"},{"index":2,"type":"BLOB","data":{"format":"base64","value":"AAEC/w=="},"permissions":"1100","ttl":"2033-05-18T03:33:20Z"},{"index":3,"type":"HS_VLIST","data":{"format":"vlist","value":[{"handle":"0.NA/123","index":300}]},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z","references":[{"handle":"123/ref","index":1}]}]}`

func runCmd(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb); code != 0 {
		t.Fatalf("pidnode %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

func startTestNode(t *testing.T, dir string, extra ...string) (*node, context.CancelFunc, chan error) {
	t.Helper()
	args := append([]string{"--data", dir, "--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--dns-addr", "127.0.0.1:0", "--hdl-addr", "127.0.0.1:0", "--ready-file", filepath.Join(dir, "ready"),
		"--shutdown-delay", "0", "--linkcheck-interval", "0"}, extra...)
	cfg, _, err := loadConfig("serve", args, func(string) string { return "" }, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n, err := startNode(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.run(ctx) }()
	return n, cancel, done
}

func stopTestNode(t *testing.T, cancel context.CancelFunc, done chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node did not stop")
	}
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestImportThenResolveByteForByte is the import promise: a record
// imported with `pidnode import` comes back from /api/handles with exactly its
// values, and the handle as the client wrote it.
func TestImportThenResolveByteForByte(t *testing.T) {
	dir := t.TempDir()
	runCmd(t, referenceRecord+"\n", "import", "--data", dir, "--extra-prefix", "123", "-")
	n, cancel, done := startTestNode(t, dir, "--extra-prefix", "123")
	defer stopTestNode(t, cancel, done)

	ready, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"resolver", "admin", "dns", "hdl"} {
		if !bytes.Contains(ready, []byte(name+" 127.0.0.1:")) {
			t.Errorf("ready file lacks %s: %q", name, ready)
		}
	}
	base := "http://" + n.addr("resolver")
	// Anonymous requests are publicOnly (docs/handle-protocol.md §1.4): the BLOB
	// value with permissions 1100 (no public read) is withheld; every other
	// value comes back exactly as imported.
	blob := `{"index":2,"type":"BLOB","data":{"format":"base64","value":"AAEC/w=="},"permissions":"1100","ttl":"2033-05-18T03:33:20Z"},`
	if !strings.Contains(referenceRecord, blob) {
		t.Fatal("test record changed: BLOB value not found")
	}
	values := strings.Replace(referenceRecord[strings.Index(referenceRecord, `"values":`):], blob, "", 1)
	for _, asWritten := range []string{"123/abc", "123/ABC", "hdl:123/aBc"} {
		resp, body := get(t, base+"/api/handles/"+asWritten)
		echo := strings.TrimPrefix(asWritten, "hdl:")
		want := `{"responseCode":1,"handle":"` + echo + `",` + values
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("GET /api/handles/%s = %d\n%s\nwant 200\n%s", asWritten, resp.StatusCode, body, want)
		}
	}
	resp, _ := get(t, base+"/123/abc")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://example.org/x?a=1&b=%3C2%3E" {
		t.Errorf("redirect = %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestExportImportRoundTrip: export → import into a fresh node → export gives
// the same bytes (docs/product.md §9.1), and backup produces a database holding the same.
func TestExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// A demo node writes real records through the admin API first.
	n, cancel, done := startTestNode(t, dir, "--demo")
	stopTestNode(t, cancel, done)
	if n.demo == nil || len(n.demo.Handles) == 0 {
		t.Fatal("--demo on an empty database loaded nothing")
	}
	// A second start with --demo keeps the data and does not fail.
	n, cancel, done = startTestNode(t, dir, "--demo")
	stopTestNode(t, cancel, done)
	if n.demo != nil {
		t.Error("--demo loaded the demo again into a non-empty database")
	}
	runCmd(t, referenceRecord+"\n", "import", "--data", dir, "--extra-prefix", "123", "-")

	first := runCmd(t, "", "export", "--data", dir)
	if got := strings.Count(first, "\n"); got < 8 {
		t.Fatalf("export has %d lines, want the demo records and the imported one:\n%s", got, first)
	}
	dir2 := t.TempDir()
	runCmd(t, first, "import", "--data", dir2, "--extra-prefix", "123", "-")
	if second := runCmd(t, "", "export", "--data", dir2); second != first {
		t.Errorf("export after import differs:\n%s\nwant\n%s", second, first)
	}

	backup := filepath.Join(t.TempDir(), "copy.db")
	runCmd(t, "", "backup", "--data", dir, backup)
	dir3 := t.TempDir()
	if err := os.Rename(backup, dbPath(dir3)); err != nil {
		t.Fatal(err)
	}
	if third := runCmd(t, "", "export", "--data", dir3); third != first {
		t.Errorf("export of the backup differs from the source")
	}
}

func TestExportRefusesMissingDatabase(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"export", "--data", filepath.Join(t.TempDir(), "nope")}, os.Getenv, nil, &out, &errb); code == 0 || !strings.Contains(errb.String(), "no database") {
		t.Errorf("export of a missing directory: exit %d, stderr %q", code, errb.String())
	}
}

// TestBinarySIGTERM builds the real binary, serves, and checks that SIGTERM
// ends it with status 0 and releases the database.
func TestBinarySIGTERM(t *testing.T) {
	bin := pidnodeBin(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(bin, "serve", "--data", filepath.Join(dir, "data"), "--demo", "--resolver-addr", "127.0.0.1:0",
		"--admin-addr", "127.0.0.1:0", "--dns-addr", "", "--hdl-addr", "", "--ready-file", ready)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var welcome strings.Builder
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "Over the native") {
		welcome.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Create an identifier") {
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	b, err := os.ReadFile(ready)
	if err != nil {
		t.Fatalf("no ready file after the welcome text: %v\n%s", err, welcome.String())
	}
	if !strings.Contains(welcome.String(), "pid_") {
		t.Errorf("welcome text does not show the demo key:\n%s", welcome.String())
	}
	_, addr, _ := strings.Cut(strings.Fields(string(b))[0]+" "+strings.Fields(string(b))[1], " ")
	if resp, _ := get(t, "http://"+addr+"/healthz"); resp.StatusCode != 200 {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
	db, err := store.Open(store.Config{Path: dbPath(filepath.Join(dir, "data"))})
	if err != nil {
		t.Fatalf("database not released after SIGTERM: %v", err)
	}
	db.Close()
}

// TestDemoWithoutAdminListener: the demo goes through the admin server, which
// exists even when its listener is off; the demo identifiers then resolve.
func TestDemoWithoutAdminListener(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo", "--admin-addr", "", "--dns-addr", "", "--hdl-addr", "")
	defer stopTestNode(t, cancel, done)
	if n.demo == nil || len(n.demo.Handles) == 0 {
		t.Fatal("--demo with the admin listener off loaded nothing")
	}
	if n.addr("admin") != "" {
		t.Errorf("admin listener bound although --admin-addr is empty")
	}
	resp, _ := get(t, "http://"+n.addr("resolver")+"/"+n.demo.Handles[0])
	if resp.StatusCode != http.StatusFound {
		t.Errorf("demo identifier %s: status %d, want 302", n.demo.Handles[0], resp.StatusCode)
	}
}
