//go:build e2e

package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var binPath string

func TestMain(m *testing.M) {
	// No test checks links: the demo data's URLs are public ones, and tests
	// send nothing beyond loopback (docs/product.md §4.4). Every pidnode these
	// tests start inherits it.
	os.Setenv("PIDNODE_LINKCHECK_INTERVAL", "0")
	dir, err := os.MkdirTemp("", "pidnode-browser-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "pidnode")
	if b := os.Getenv("PIDNODE_E2E_BIN"); b != "" {
		binPath = b
	} else if out, err := exec.Command("go", "build", "-o", binPath, "pidnode/cmd/pidnode").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build pidnode: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// node is the running binary with the demo data.
type node struct {
	resolver, admin string
	key             string
	handles         []string // demo production handles; the last is OBSOLETED
}

func startNode(t *testing.T) *node {
	t.Helper()
	data := t.TempDir()
	ready := filepath.Join(data, "ready")
	cmd := exec.Command(binPath, "serve", "--data", data, "--demo", "--resolver-addr", "127.0.0.1:0",
		"--admin-addr", "127.0.0.1:0", "--dns-addr", "", "--hdl-addr", "", "--ready-file", ready)
	out, errb := &syncBuf{}, &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if s := errb.String(); strings.Contains(s, "panic") {
			t.Errorf("pidnode panicked:\n%s", s)
		}
	})
	n := &node{}
	for deadline := time.Now().Add(30 * time.Second); ; {
		b, err := os.ReadFile(ready)
		if err == nil && strings.Contains(out.String(), "Create an identifier") && strings.Contains(out.String(), "-d '") {
			for _, line := range strings.Split(string(b), "\n") {
				if name, a, ok := strings.Cut(line, " "); ok {
					switch name {
					case "resolver":
						n.resolver = "http://" + a
					case "admin":
						n.admin = "http://" + a
					}
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pidnode not ready:\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	w := out.String()
	n.key = regexp.MustCompile(`\bpid_[a-z0-9]{20,}\b`).FindString(w)
	seen := map[string]bool{}
	for _, h := range regexp.MustCompile(`21\.12345/svc/DMO/[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]\b`).FindAllString(w, -1) {
		if !seen[h] {
			seen[h] = true
			n.handles = append(n.handles, h)
		}
	}
	if n.key == "" || len(n.handles) != 5 {
		t.Fatalf("welcome text: key %q handles %q\n%s", n.key, n.handles, w)
	}
	return n
}

// create makes an identifier through the admin API.
func (n *node) create(t *testing.T, body map[string]any) (handle string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", n.admin+"/testpid/v2/handles/21.T12345/DMO/", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+n.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, rb)
	}
	var id struct{ Handle string }
	json.Unmarshal(rb, &id)
	return id.Handle
}

const (
	xLabel   = `<script>alert("label")</script>`
	xDesc    = `<img src=x onerror=alert("desc")>`
	xContact = `"><script>alert("contact")</script>@example.org`
	xRelID   = `ex:<svg/onload=alert("rel")>`
	xRelURL  = `https://example.org/"onmouseover="alert('relurl')`
)

func xssMeta(status, url string) map[string]any {
	return map[string]any{"url": url, "metadata": map[string]any{
		"status": status, "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"curation_contact": xContact,
		"resource_info": map[string]any{"label": xLabel, "description": xDesc, "resource_category": "SAMPLE",
			"representation_variants": []any{map[string]any{"variant_url": "https://example.org/v.ttl", "media_type": "text/turtle"}}},
		"related_identifiers": []any{map[string]any{"relation_type": "IS_OBSOLETED_BY",
			"related_identifier": map[string]any{"type": "ExampleIdentifier", "identifier": xRelID, "resolving_url": xRelURL}}},
	}}
}

// shots is where screenshots go: the directory PIDNODE_E2E_SHOTS_DIR names,
// bench/results/e2e with PIDNODE_E2E_SHOTS, else a temporary directory
// that is kept and logged.
func shots(t *testing.T) string {
	if d := os.Getenv("PIDNODE_E2E_SHOTS_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if os.Getenv("PIDNODE_E2E_SHOTS") != "" {
		d, _ := filepath.Abs("../../../bench/results/e2e")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d, err := os.MkdirTemp("", "pidnode-e2e-shots-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// seen is what a person sees on a page, read from the live DOM.
type seen struct {
	Title     string     `json:"title"`
	H1        string     `json:"h1"`
	Text      string     `json:"text"`
	Rows      [][]string `json:"rows"`      // tbody rows, cell texts
	HeadCells []string   `json:"headCells"` // thead cells
	Links     [][]string `json:"links"`     // [href as written, resolved href, text]
	Dangerous []string   `json:"dangerous"` // script-like elements and on* attributes found
	Location  string     `json:"location"`
}

const readPage = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const dangerous = [];
  for (const el of q('script, iframe, object, embed, svg, img, base, frame, math')) dangerous.push('<' + el.tagName.toLowerCase() + '>');
  for (const el of q('*')) for (const a of Array.from(el.attributes)) {
    if (a.name.toLowerCase().startsWith('on')) dangerous.push(el.tagName.toLowerCase() + '[' + a.name + ']');
    if (['href','src','action','formaction'].includes(a.name.toLowerCase()) && /^\s*(javascript|data|vbscript):/i.test(a.value)) dangerous.push(el.tagName.toLowerCase() + '[' + a.name + '=' + a.value + ']');
  }
  return {
    title: document.title,
    h1: (document.querySelector('h1') || {}).innerText || '',
    text: document.body ? document.body.innerText : '',
    rows: q('tbody tr').map(tr => Array.from(tr.children).map(c => c.innerText)),
    headCells: q('thead th').map(th => th.innerText),
    links: q('a').map(a => [a.getAttribute('href'), a.href, a.innerText]),
    dangerous: dangerous,
    location: location.href,
  };
})()`

// problems lists what is wrong with a page a person sees: executable markup
// (an unescaped payload) or a table whose rows do not match its header.
func problems(s seen) []string {
	var out []string
	if len(s.Dangerous) > 0 {
		out = append(out, fmt.Sprintf("the page renders executable markup: %q", s.Dangerous))
	}
	for i, r := range s.Rows {
		if len(r) != len(s.HeadCells) {
			out = append(out, fmt.Sprintf("broken table: row %d has %d cells, the header %d: %q", i, len(r), len(s.HeadCells), r))
		}
	}
	return out
}

// TestBrowser loads the resolver's pages in headless Chromium.
func TestBrowser(t *testing.T) {
	n := startNode(t)
	landing := n.resolver + "/?landed=1"
	self := n.create(t, map[string]any{"url": landing, "metadata": xssMeta("REGISTERED", landing)["metadata"]})
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html>\n<title>Elsewhere</title>\n<h1>A landing page on another site</h1>\n")
	}))
	t.Cleanup(far.Close)
	farLanding := far.URL + "/item?landed=1"
	elsewhere := n.create(t, map[string]any{"url": farLanding, "metadata": xssMeta("REGISTERED", farLanding)["metadata"]})
	xssRegistered := n.create(t, xssMeta("REGISTERED", `https://example.org/"><svg/onload=alert("url")>`))
	xssObsoleted := n.create(t, xssMeta("OBSOLETED", `https://example.org/"><svg/onload=alert("url")>`))
	dir := shots(t)
	t.Logf("screenshots in %s", dir)

	// Any JavaScript dialog means a payload ran: fail (dialogs records it).
	ctx, dialogs := startBrowser(t, 1280, 900)

	visit := func(t *testing.T, name, url string, wantStatus int) seen {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		resp, err := chromedp.Run(tctx, chromedp.NavigateResponse(url))
		if err != nil {
			t.Fatalf("%s: navigate %s: %v", name, url, err)
		}
		if wantStatus != 0 && int(resp.Status) != wantStatus {
			t.Errorf("%s: status %d, want %d", name, resp.Status, wantStatus)
		}
		s, err := chromedp.Run(tctx, chromedp.Evaluate[seen](readPage))
		if err != nil {
			t.Fatalf("%s: reading the page: %v", name, err)
		}
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("%s: screenshot: %v", name, err)
		} else if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
		for _, p := range problems(s) {
			t.Errorf("%s: %s", name, p)
		}
		return s
	}
	wantText := func(t *testing.T, name string, s seen, texts ...string) {
		t.Helper()
		for _, x := range texts {
			if !strings.Contains(s.Text, x) {
				t.Errorf("%s: a person does not see %q on the page:\n%s", name, x, s.Text)
			}
		}
	}
	link := func(s seen, text string) string {
		for _, l := range s.Links {
			if strings.Contains(l[2], text) {
				return l[1]
			}
		}
		return ""
	}

	t.Run("home", func(t *testing.T) {
		s := visit(t, "1-home", n.resolver+"/", 200)
		if s.Title != "Identifier resolver" || s.H1 != "Identifier resolver" {
			t.Errorf("title %q, h1 %q", s.Title, s.H1)
		}
		wantText(t, "home", s, "21.12345", "21.T12345", "Resolve")
	})
	// submit types handle into the lookup form of the page at from, clicks
	// Resolve and wants the browser at want.
	submit := func(t *testing.T, shot, from, handle, want string) {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.Navigate(from), chromedp.SendKeys("#h", handle)); err != nil {
			t.Fatalf("typing the identifier: %v", err)
		}
		// Click without waiting for the click's own completion: it navigates away.
		go chromedp.Do(tctx, chromedp.Click("button[type=submit]"))
		deadline := time.Now().Add(10 * time.Second)
		var loc string
		for time.Now().Before(deadline) {
			loc, _ = chromedp.Run(tctx, chromedp.Location())
			if loc == want {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if loc != want {
			t.Errorf("after resolving %s from %s the browser is at %q, want the landing page %q", handle, from, loc, want)
		}
		png, _ := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		os.WriteFile(filepath.Join(dir, shot+".png"), png, 0o644)
	}
	t.Run("redirect through the lookup form", func(t *testing.T) {
		submit(t, "2-redirect-landed", n.resolver+"/", self, landing)
	})
	// Another loopback port is another origin: the form's redirect chain
	// ends on a site other than the resolver's, as it does for nearly every
	// identifier, and form-action must not block it.
	t.Run("lookup form to a landing page on another origin", func(t *testing.T) {
		submit(t, "2-redirect-elsewhere-home", n.resolver+"/", elsewhere, farLanding)
		submit(t, "2-redirect-elsewhere-notfound", n.resolver+"/21.12345/svc/DMO/NOPE", elsewhere, farLanding)
	})
	t.Run("direct redirect", func(t *testing.T) {
		s := visit(t, "3-redirect", n.resolver+"/"+self, 200) // the landing page's own status
		if s.Location != landing {
			t.Errorf("redirect landed at %q, want %q", s.Location, landing)
		}
	})
	t.Run("noredirect", func(t *testing.T) {
		s := visit(t, "4-noredirect-demo", n.resolver+"/"+n.handles[0]+"?noredirect", 200)
		if s.Title != "Handle Values for: "+n.handles[0] {
			t.Errorf("title %q", s.Title)
		}
		if got := strings.Join(s.HeadCells, "|"); got != "Index|Type|Timestamp|Data" {
			t.Errorf("table header %q", got)
		}
		var idx []string
		for _, r := range s.Rows {
			idx = append(idx, r[0]+" "+r[1])
		}
		if got := strings.Join(idx, ", "); got != "1 URL, 10 EMAIL, 11 STATUS, 12 SCHEMA_VER, 13 METADATA_LICENSE, 14 RESOURCE, 16 CHANGES, 100 HS_ADMIN" {
			t.Errorf("rows %s", got)
		}
		if got := link(s, "https://repository.demo-catalysis.example.org/samples/cu-zno-al2o3-2025-017"); got != "https://repository.demo-catalysis.example.org/samples/cu-zno-al2o3-2025-017" {
			t.Errorf("URL row links to %q", got)
		}
		if got := link(s, "/api/handles/"); got != n.resolver+"/api/handles/"+n.handles[0] {
			t.Errorf("Handle JSON link %q", got)
		}

		s = visit(t, "5-noredirect-xss", n.resolver+"/"+xssRegistered+"?noredirect", 200)
		if len(s.Rows) != 9 {
			t.Errorf("XSS record: %d table rows, want 9: %q", len(s.Rows), s.Rows)
		}
		wantText(t, "noredirect-xss", s, xContact, `https://example.org/"><svg/onload=alert("url")>`,
			`<script>alert(\"label\")</script>`, `<img src=x onerror=alert(\"desc\")>`, `ex:<svg/onload=alert(\"rel\")>`)
		if got := link(s, "svg/onload"); got != `https://example.org/%22%3E%3Csvg/onload=alert(%22url%22)%3E` {
			t.Errorf("URL link target %q", got)
		}
	})
	t.Run("tombstone", func(t *testing.T) {
		obs := n.handles[4]
		s := visit(t, "6-tombstone-demo", n.resolver+"/"+obs, http.StatusGone)
		if s.Title != "Gone: "+obs {
			t.Errorf("title %q", s.Title)
		}
		wantText(t, "tombstone", s, "OBSOLETED", "Cu/ZnO/Al2O3 catalyst, batch 2024-101 (superseded)", "IS_OBSOLETED_BY")
		short := strings.Replace(n.handles[0], "/svc/", "/", 1)
		if got := link(s, short); got != "https://hdl.handle.net/"+short {
			t.Errorf("IS_OBSOLETED_BY links to %q, want https://hdl.handle.net/%s; links %q", got, short, s.Links)
		}
		s = visit(t, "7-tombstone-xss", n.resolver+"/"+xssObsoleted, http.StatusGone)
		wantText(t, "tombstone-xss", s, xLabel, xDesc, xContact, xRelID)
		if got := link(s, xRelID); got != "https://example.org/%22onmouseover=%22alert('relurl')" {
			t.Errorf("related identifier links to %q", got)
		}
	})
	t.Run("404", func(t *testing.T) {
		s := visit(t, "8-not-found", n.resolver+"/21.12345/svc/DMO/NOPE-NOPE", http.StatusNotFound)
		wantText(t, "404", s, "21.12345/svc/DMO/NOPE-NOPE", "cannot be found")
		s = visit(t, "9-not-found-xss", n.resolver+"/21.12345/svc/DMO/%3Cscript%3Ealert(1)%3C%2Fscript%3E", http.StatusNotFound)
		wantText(t, "404-xss", s, "21.12345/svc/DMO/<script>alert(1)</script>")
	})
	t.Run("the checks catch a bad page", func(t *testing.T) {
		bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!DOCTYPE html><title>bad</title><table><thead><tr><th>a</th><th>b</th></tr></thead>`+
				`<tbody><tr><td>1</td></tr></tbody></table><p><img src=x onerror="void 0"><script>void 0</script></p>`)
		}))
		defer bad.Close()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.Navigate(bad.URL)); err != nil {
			t.Fatal(err)
		}
		s, err := chromedp.Run(tctx, chromedp.Evaluate[seen](readPage))
		if err != nil {
			t.Fatal(err)
		}
		if p := problems(s); len(p) != 2 {
			t.Errorf("on a page with an unescaped payload and a broken table the checks found %q", p)
		}
	})
	dialogs.Range(func(k, _ any) bool {
		t.Errorf("a JavaScript dialog opened: %q — a payload ran", k)
		return true
	})
}

// startBrowser starts Debian's headless Chromium with a window of width ×
// height for the rest of the test. Every JavaScript dialog is recorded in
// dialogs (a payload that ran, for the escaping checks) and dismissed, so
// that the page does not hang.
func startBrowser(t *testing.T, width, height int) (context.Context, *sync.Map) {
	t.Helper()
	exe := "/usr/bin/chromium"
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("%s not found (make e2e installs Debian's chromium): %v", exe, err)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// Start the browser with a context that has no deadline (it lives as long
	// as the context of the first call).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	dialogs := &sync.Map{}
	go func() {
		for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			dialogs.Store(ev.Message, true)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx, dialogs
}
