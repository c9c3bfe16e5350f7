//go:build e2e

package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// consoleNode is the real binary without demo data, with statistics
// flushed every second.
type consoleNode struct {
	resolver, admin, opKey string
}

func startConsoleNode(t *testing.T) *consoleNode {
	t.Helper()
	data := t.TempDir()
	ready := filepath.Join(data, "ready")
	cmd := exec.Command(binPath, "serve", "--data", data, "--resolver-addr", "127.0.0.1:0",
		"--admin-addr", "127.0.0.1:0", "--dns-addr", "", "--hdl-addr", "", "--ready-file", ready, "--stats-interval", "1s")
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
	n := &consoleNode{}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, err := os.ReadFile(ready); err == nil {
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
			if n.admin != "" && n.resolver != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pidnode not ready:\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	k, err := os.ReadFile(filepath.Join(data, "operator.key"))
	if err != nil {
		t.Fatal(err)
	}
	n.opKey = strings.TrimSpace(string(k))
	return n
}

// consolePage is what a person sees of a console page.
type consolePage struct {
	Title     string   `json:"title"`
	H1        string   `json:"h1"`
	Text      string   `json:"text"`
	Location  string   `json:"location"`
	Dangerous []string `json:"dangerous"`
	Unlabeled []string `json:"unlabeled"`
	Bars      int      `json:"bars"`
	History   int      `json:"history"`
	Storage   string   `json:"storage"`
}

// readConsole reads the page; Dangerous lists scripts, frames, on*
// attributes and javascript: URLs, Unlabeled the visible inputs without a
// label (accessibility), Storage whatever the page keeps in the browser.
const readConsole = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const dangerous = [];
  for (const el of q('script, iframe, object, embed, img, base, frame, math')) dangerous.push('<' + el.tagName.toLowerCase() + '>');
  for (const el of q('svg')) if (el.id !== 'chart') dangerous.push('<svg>');
  for (const el of q('*')) for (const a of Array.from(el.attributes)) {
    if (a.name.toLowerCase().startsWith('on')) dangerous.push(el.tagName.toLowerCase() + '[' + a.name + ']');
    if (['href','src','action','formaction'].includes(a.name.toLowerCase()) && /^\s*(javascript|data|vbscript):/i.test(a.value)) dangerous.push(el.tagName.toLowerCase() + '[' + a.name + ']');
  }
  const unlabeled = q('input, select, textarea').filter(el => el.type !== 'hidden' && !el.closest('[aria-hidden=true]') &&
    !(el.id && document.querySelector('label[for="' + el.id + '"]')) && !el.getAttribute('aria-label')).map(el => el.name);
  let storage = '';
  try { storage = JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie; } catch (e) {}
  return {
    title: document.title, h1: (document.querySelector('h1') || {}).innerText || '',
    text: document.body ? document.body.innerText : '', location: location.href,
    dangerous: dangerous, unlabeled: unlabeled,
    bars: q('svg#chart rect').length, history: q('#history li').length, storage: storage,
  };
})()`

// TestConsoleJourney: an organisation applies, the operator approves, the
// SNAA signs in with its key, creates an identifier through the generated
// form, edits it, sees it resolve, sees its history and chart, rotates its
// key, and the old key's session ends; each page in headless Chromium, with
// a screenshot.
func TestConsoleJourney(t *testing.T) {
	exe := "/usr/bin/chromium"
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("%s not found (make e2e installs Debian's chromium): %v", exe, err)
	}
	n := startConsoleNode(t)
	dir := shots(t)
	t.Logf("screenshots in %s", dir)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1100, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var dialogs sync.Map
	go func() {
		for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			dialogs.Store(ev.Message, true)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	secrets := []string{n.opKey}

	shot := 0
	// look reads the page in the browser now, checks it and saves a screenshot.
	look := func(t *testing.T, name string) consolePage {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		p, err := chromedp.Run(tctx, chromedp.Evaluate[consolePage](readConsole))
		if err != nil {
			t.Fatalf("%s: reading the page: %v", name, err)
		}
		shot++
		if png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err != nil {
			t.Errorf("%s: screenshot: %v", name, err)
		} else if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("console-%02d-%s.png", shot, name)), png, 0o644); err != nil {
			t.Error(err)
		}
		if len(p.Dangerous) > 0 {
			t.Errorf("%s: executable markup %q", name, p.Dangerous)
		}
		if len(p.Unlabeled) > 0 {
			t.Errorf("%s: inputs without a label: %q", name, p.Unlabeled)
		}
		for _, s := range secrets {
			if strings.Contains(p.Location, s) || strings.Contains(p.Storage, s) {
				t.Fatalf("%s: a key is in the URL or the browser's storage", name)
			}
		}
		return p
	}
	want := func(t *testing.T, p consolePage, texts ...string) {
		t.Helper()
		for _, x := range texts {
			if !strings.Contains(p.Text, x) {
				t.Fatalf("a person does not see %q on %s:\n%s", x, p.Location, p.Text)
			}
		}
	}
	do := func(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, actions...); err != nil {
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			defer dcancel()
			p, _ := chromedp.Run(dctx, chromedp.Evaluate[consolePage](readConsole))
			t.Fatalf("browser: %v; the page %s shows:\n%s", err, p.Location, p.Text)
		}
	}
	text := func(t *testing.T, sel string) string {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		defer tcancel()
		s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	// submit presses a form's button (by selector) and waits for a
	// selector of the next page.
	submit := func(t *testing.T, button, next string) {
		t.Helper()
		click := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(document.querySelector(`+jsString(button)+`).click(), true)`)(ctx, tg)
			return err
		})
		do(t, click, chromedp.WaitVisible(chromedp.CSS(next)))
	}
	signIn := func(t *testing.T, key string) {
		t.Helper()
		do(t, chromedp.Navigate(n.admin+"/console/sign-in"), chromedp.SendKeys(chromedp.CSS("#f-key"), key))
		submit(t, "form[action='/console/sign-in'] button[type=submit]", "form.signout")
	}

	// 1. Apply.
	do(t, chromedp.Navigate(n.admin+"/apply"))
	want(t, look(t, "apply-form"), "Policy for Sub-Name Assigning Authorities", "Maintenance statement")
	do(t,
		chromedp.SendKeys(chromedp.CSS("#f-organisation"), "Institute for Browser Catalysis"),
		chromedp.SendKeys(chromedp.CSS("#f-technical_contact-name"), "Tess Tech"),
		chromedp.SendKeys(chromedp.CSS("#f-technical_contact-email"), "tess@example.org"),
		chromedp.SendKeys(chromedp.CSS("#f-administrative_contact-name"), "Adam Admin"),
		chromedp.SendKeys(chromedp.CSS("#f-administrative_contact-email"), "adam@example.org"),
		chromedp.SendKeys(chromedp.CSS("#f-maintenance_statement"), "Our repository team keeps every landing page current."),
	)
	// Forgetting to agree: the form comes back with the error and what was typed.
	submit(t, "form[action='/apply'] button[type=submit]", "#problem")
	p := look(t, "apply-error")
	want(t, p, "policy_version", "is required")
	do(t, chromedp.Click(chromedp.CSS("#f-policy_version")))
	submit(t, "form[action='/apply'] button[type=submit]", "#status-token")
	want(t, look(t, "apply-done"), "only this once")
	appID, statusTok := text(t, "#app-id"), text(t, "#status-token")
	secrets = append(secrets, statusTok)

	// 2. The operator approves.
	signIn(t, n.opKey)
	want(t, look(t, "ops-queue"), "Institute for Browser Catalysis", appID)
	do(t, chromedp.Navigate(n.admin+"/console/ops/application?id="+appID))
	want(t, look(t, "ops-application"), "Our repository team keeps every landing page current.", "Approve", "Reject")
	submit(t, "#approve button[type=submit]", "#new-key")
	want(t, look(t, "ops-approved"), "only this once")
	key := text(t, "#new-key")
	secrets = append(secrets, key)
	submit(t, "form.signout button", "#f-key")

	// The applicant's status page.
	do(t, chromedp.Navigate(n.admin+"/apply/status"), chromedp.SendKeys(chromedp.CSS("#f-id"), appID), chromedp.SendKeys(chromedp.CSS("#f-token"), statusTok))
	submit(t, "form[action='/apply/status'] button", "#status")
	want(t, look(t, "apply-status"), "APPROVED", "contact")

	// 3. The SNAA signs in with its new key.
	signIn(t, key)
	want(t, look(t, "snaa-identifiers"), "Your identifiers", "Institute for Browser Catalysis")

	// 4. Create through the generated form.
	landing := n.resolver + "/?landed=1"
	do(t, chromedp.Navigate(n.admin+"/console/new?base=test"))
	look(t, "snaa-new-form")
	do(t,
		chromedp.SendKeys(chromedp.CSS("#f-url"), landing),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-curation_contact"), "curator@example.org"),
		chromedp.SetValue(chromedp.CSS("#f-metadata-status"), "REGISTERED"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-schema_version"), "v1.0.1"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-label"), "Cu/ZnO sample from the browser"),
		chromedp.SetValue(chromedp.CSS("#f-metadata-resource_info-resource_category"), "SAMPLE"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-representation_variants-0-variant_url"), "https://example.org/sample.ttl"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-representation_variants-0-media_type"), "text/turtle"),
	)
	// A second representation variant, without JavaScript on the page.
	submit(t, "button[value='add:metadata.resource_info.representation_variants']", "#f-metadata-resource_info-representation_variants-1-variant_url")
	do(t, chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-representation_variants-1-variant_url"), "https://example.org/sample.json"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-representation_variants-1-size"), "many"))
	submit(t, "form.model button[name=save]:not(.default-submit)", "#problem")
	want(t, look(t, "snaa-new-error"), "must be an integer")
	do(t, chromedp.SetValue(chromedp.CSS("#f-metadata-resource_info-representation_variants-1-size"), "2048"))
	submit(t, "form.model button[name=save]:not(.default-submit)", "#resolve-link")
	p = look(t, "snaa-created")
	want(t, p, "The identifier was created.", "Cu/ZnO sample from the browser", "sample.json")
	handle := text(t, "h1")

	// 5. Edit.
	do(t, chromedp.Navigate(strings.Replace(p.Location, "/console/id?", "/console/edit?", 1)))
	look(t, "snaa-edit-form")
	do(t, chromedp.SetValue(chromedp.CSS("#f-metadata-resource_info-label"), "Cu/ZnO sample, edited"))
	submit(t, "form.model button[name=save]:not(.default-submit)", ".flash")
	want(t, look(t, "snaa-edited"), "Your changes were saved.", "Cu/ZnO sample, edited")
	idPage := p.Location

	// 6. It resolves.
	do(t, chromedp.Navigate(n.resolver+"/"+handle))
	loc := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && loc != landing; time.Sleep(100 * time.Millisecond) {
		tctx, tcancel := context.WithTimeout(ctx, 5*time.Second)
		loc, _ = chromedp.Run(tctx, chromedp.Location())
		tcancel()
	}
	if loc != landing {
		t.Fatalf("%s resolves to %q, want %q", handle, loc, landing)
	}
	if res, err := http.Get(n.resolver + "/" + handle); err == nil { // a second resolution
		res.Body.Close()
	}

	// 7. History and chart (statistics are flushed every second).
	time.Sleep(2500 * time.Millisecond)
	do(t, chromedp.Navigate(idPage))
	p = look(t, "snaa-history-chart")
	if p.History != 2 {
		t.Errorf("history shows %d writes, want 2 (create, edit)", p.History)
	}
	if p.Bars == 0 {
		t.Error("no chart bars")
	}
	want(t, p, "Resolutions per day", "Created", "Changed", "metadata.resource_info")
	if !strings.Contains(p.Text, "2 resolutions") {
		t.Errorf("the chart does not count the 2 resolutions:\n%s", p.Text)
	}

	// 8. Rotate the key; the old key's session ends.
	do(t, chromedp.Navigate(n.admin+"/console/keys"), chromedp.SendKeys(chromedp.CSS("#f-name"), "rotated"))
	submit(t, "form[action='/console/keys'] button", "#new-key")
	want(t, look(t, "snaa-key-issued"), "only this once", "rotated")
	newKey := text(t, "#new-key")
	secrets = append(secrets, newKey)
	submit(t, "button[aria-label='Revoke key initial']", "#f-key")
	want(t, look(t, "snaa-session-ended"), "revoked")
	do(t, chromedp.Navigate(n.admin+"/console/ids"), chromedp.WaitVisible(chromedp.CSS("#f-key")))
	signIn(t, newKey)
	do(t, chromedp.Navigate(n.admin+"/console/ids?base=test"))
	want(t, look(t, "snaa-new-key-signed-in"), "Your identifiers", handle)

	dialogs.Range(func(k, _ any) bool {
		t.Errorf("a JavaScript dialog opened: %v", k)
		return true
	})
}

func jsString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}
