//go:build e2e

package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// A data steward's day in the console (issue 37), each flow in headless
// Chromium: every page looked at 1280 px and 390 px wide (screenshots kept
// as artefacts in the directory the test logs), checked by axe-core and by
// the console's own contrast, focus and phone checks.

// tab is one browser session of a console test: its pages are looked at
// with look, which screenshots them at both widths and checks them.
type tab struct {
	t     *testing.T
	ctx   context.Context
	admin string
	dir   string
	shot  int
	name  string
}

const deskWidth, deskHeight = 1280, 900

func newTab(t *testing.T, admin, name string) *tab {
	ctx, _ := startBrowser(t, deskWidth, deskHeight)
	dir := shots(t)
	t.Logf("screenshots in %s", dir)
	return &tab{t: t, ctx: ctx, admin: admin, dir: dir, name: name}
}

// look reads the page, saves its screenshots at 1280 and 390 px and checks
// it: axe-core, contrast and focus (readA11y), the phone's layout
// (lookPhone), no executable markup, every input labelled.
func (b *tab) look(name string) consolePage {
	t := b.t
	t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	p, err := chromedp.Run(tctx, chromedp.Evaluate[consolePage](readConsole))
	if err != nil {
		t.Fatalf("%s: reading the page: %v", name, err)
	}
	b.shot++
	base := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s", b.name, b.shot, name))
	if png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err != nil {
		t.Errorf("%s: screenshot: %v", name, err)
	} else if err := os.WriteFile(base+"-1280.png", png, 0o644); err != nil {
		t.Error(err)
	}
	lookPhone(t, tctx, base+"-390.png", name)
	focus := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
	if err := chromedp.Do(tctx, focus); err != nil {
		t.Fatalf("%s: emulating focus: %v", name, err)
	}
	axeCheck(t, tctx, name)
	a, err := chromedp.Run(tctx, chromedp.Evaluate[a11yFindings](readA11y))
	if err != nil {
		t.Fatalf("%s: reading contrast and focus: %v", name, err)
	}
	for what, l := range map[string][]string{"too little contrast": a.Contrast, "positive tabindex": a.PositiveTab,
		"out of the tab order": a.Unreachable, "no focus ring": a.NoFocusRing, "executable markup": p.Dangerous, "inputs without a label": p.Unlabeled} {
		if len(l) > 0 {
			t.Errorf("%s: %s: %q", name, what, l)
		}
	}
	if a.FocusRule != "" {
		t.Errorf("%s: %s", name, a.FocusRule)
	}
	return p
}

// see fails the test unless the page shows each of texts.
func (b *tab) see(p consolePage, texts ...string) {
	b.t.Helper()
	for _, x := range texts {
		if !strings.Contains(p.Text, x) {
			b.t.Fatalf("a person does not see %q on %s:\n%s", x, p.Location, p.Text)
		}
	}
}

func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		dctx, dcancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer dcancel()
		p, _ := chromedp.Run(dctx, chromedp.Evaluate[consolePage](readConsole))
		b.t.Fatalf("browser: %v; the page %s shows:\n%s", err, p.Location, p.Text)
	}
}

func (b *tab) open(path string) { b.t.Helper(); b.do(chromedp.Navigate(b.admin + path)) }

// submit presses a button (by selector) and waits for a selector of the
// next page.
func (b *tab) submit(button, next string) {
	b.t.Helper()
	click := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(document.querySelector(`+jsString(button)+`).click(), true)`)(ctx, tg)
		return err
	})
	b.do(click, chromedp.WaitVisible(chromedp.CSS(next)))
}

func (b *tab) count(sel string) int {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	n, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
	if err != nil {
		b.t.Fatalf("counting %s: %v", sel, err)
	}
	return n
}

func (b *tab) signIn(key string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.admin+"/console/sign-in"), chromedp.SendKeys(chromedp.CSS("#f-key"), key))
	b.submit("form[action='/console/sign-in'] button[type=submit]", "form.signout")
}

// api sends a request to the admin API with key and decodes a JSON reply
// into out (if not nil); it fails the test on another status than want.
func api(t *testing.T, method, url, key string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, res.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
	}
}

// steward is an approved SNAA on a console node: its key, its test
// prefix's collection URL, and the application's id and status token.
type steward struct {
	key, coll, ns       string
	snaaID, appID, tok  string
	opKey, admin, resol string
}

func onboard(t *testing.T, n *consoleNode, org, ns string) *steward {
	t.Helper()
	var rec struct {
		ID          string `json:"id"`
		StatusToken string `json:"status_token"`
	}
	api(t, "POST", n.admin+"/apply/v1/applications", "", map[string]any{
		"organisation": org, "technical_contact": map[string]string{"name": "Tess Tech", "email": "tess@example.org"},
		"administrative_contact": map[string]string{"name": "Adam Admin", "email": "adam@example.org"}, "policy_version": "1",
		"maintenance_statement": "Our repository team keeps every landing page current."}, 201, &rec)
	var res struct {
		SNAA struct{ ID string } `json:"snaa"`
		Key  struct {
			Secret string `json:"secret"`
		} `json:"key"`
	}
	api(t, "POST", n.admin+"/ops/v1/applications/"+rec.ID+"/approve", n.opKey, map[string]any{"namespace": ns, "custom_ids": true}, 200, &res)
	var me struct{ Collection string }
	api(t, "GET", n.admin+"/testpid/v2/me", res.Key.Secret, nil, 200, &me)
	return &steward{key: res.Key.Secret, coll: n.admin + me.Collection, ns: ns, snaaID: res.SNAA.ID, appID: rec.ID, tok: rec.StatusToken,
		opKey: n.opKey, admin: n.admin, resol: n.resolver}
}

// payload is an identifier's create payload with label.
func payload(label, url string) map[string]any {
	return map[string]any{"url": url, "metadata": map[string]any{
		"curation_contact": "curator@example.org", "status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"resource_info": map[string]any{"label": label, "description": "A sample described for the steward test.", "resource_category": "SAMPLE",
			"representation_variants": []any{map[string]any{"variant_url": url + ".ttl", "media_type": "text/turtle"}}}}}
}

// TestStewardConflictHistoryMessages: the form reports every error at
// once in words (a custom id and the payload's fields together, the
// schema version's example); an edit that meets a newer version (412)
// shows both and is saved on top of it; the history shows each field's
// before and after.
func TestStewardConflictHistoryMessages(t *testing.T) {
	n := startConsoleNode(t)
	st := onboard(t, n, "Steward Lab", "STW")
	b := newTab(t, n.admin, "steward")
	b.signIn(st.key)

	// All of a form's errors at once, in words.
	b.open("/console/new?base=test")
	p := b.look("new-form")
	b.see(p, "(required)", "For example: v1.0.1", "For example: data-steward@example.org")
	b.do(
		chromedp.SendKeys(chromedp.CSS("#f-id"), "bad id!"),
		chromedp.SendKeys(chromedp.CSS("#f-url"), "https://repository.example.org/s/1"),
		chromedp.SetValue(chromedp.CSS("#f-metadata-schema_version"), "1.0"),
		chromedp.SetValue(chromedp.CSS("#f-metadata-status"), "REGISTERED"),
		chromedp.SendKeys(chromedp.CSS("#f-metadata-resource_info-label"), "Sample one"),
		chromedp.SetValue(chromedp.CSS("#f-metadata-resource_info-resource_category"), "SAMPLE"),
	)
	b.submit("form.model button[name=save]:not(.default-submit)", "#problem")
	p = b.look("new-form-errors")
	b.see(p, `Custom id "bad id!" may hold only letters`, "Curation contact is required", "Schema version is not in the expected form", "For example: v1.0.1")
	for _, bad := range []string{"^v", `\d`, "must match", "a string", "an object", "metadata.resource", "metadata.curation"} {
		if strings.Contains(p.Text, bad) {
			t.Errorf("the form's errors say %q, words for programs:\n%s", bad, p.Text)
		}
	}

	// An identifier, edited in the browser while a client changes it.
	var created struct{ ID, Handle string }
	api(t, "POST", st.coll, st.key, payload("Sample to edit", "https://repository.example.org/s/2"), 201, &created)
	b.open("/console/edit?base=test&id=" + created.ID)
	b.look("edit-form")
	b.do(chromedp.SetValue(chromedp.CSS("#f-metadata-resource_info-label"), "Label from the browser"))
	other := payload("Label from a client", "https://repository.example.org/s/2-moved")
	api(t, "PUT", st.coll+created.ID, st.key, other, 200, nil)
	b.submit("form.model button[name=save]:not(.default-submit)", "#conflict")
	p = b.look("edit-conflict")
	b.see(p, "Someone else saved this identifier while you were editing", "Version 2 (saved)", "Your edit",
		"Label from a client", "Label from the browser", "Apply my edit on top of version 2")
	b.submit("form.model button[name=save]:not(.default-submit)", ".flash")
	p = b.look("edit-resolved")
	b.see(p, "Your changes were saved.", "Label from the browser")
	if got := b.count("#history > li"); got != 3 {
		t.Errorf("history shows %d writes, want 3 (create, the client's, the browser's)", got)
	}
	// The newest entry is the browser's: the label from the client's to
	// the browser's, the landing page back.
	row := func(i int) string {
		tctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		s, err := chromedp.Run(tctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelectorAll('#history > li')[%d].innerText`, i)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	newest := row(0)
	for _, w := range []string{"Changed", "key “initial”", "Resource info › Label", "Label from a client", "Label from the browser", "Landing page URL",
		"https://repository.example.org/s/2-moved"} {
		if !strings.Contains(newest, w) {
			t.Errorf("the newest history entry does not say %q:\n%s", w, newest)
		}
	}
	if first := row(2); !strings.Contains(first, "Created") || !strings.Contains(first, "(empty)") || !strings.Contains(first, "Sample to edit") {
		t.Errorf("the first history entry:\n%s", first)
	}

	// The overviews of the namespace.
	for _, pg := range []struct{ path, name, says string }{
		{"/console/stats?base=test", "stats", "Resolutions of your namespace"},
		{"/console/events?base=test", "events", "created identifier"},
		{"/console/webhooks?base=test", "webhooks", "no webhook endpoint"},
		{"/console/links?base=test", "links", "Link checks"},
		{"/console/keys", "keys", "Keys of your SNAA"},
	} {
		b.open(pg.path)
		b.see(b.look(pg.name), pg.says)
	}
}

// TestStewardOperatorPages: the audit page pages newest first and filters
// by SNAA and action, each entry a sentence with its changes folded;
// suspending an SNAA and revoking a key ask first and say when done; the
// applicant's status after approval names the namespace and the contact.
func TestStewardOperatorPages(t *testing.T) {
	n := startConsoleNode(t)
	a := onboard(t, n, "Audit Lab A", "AUA")
	onboard(t, n, "Audit Lab B", "AUB")
	for i := range 3 {
		api(t, "POST", a.coll, a.key, payload(fmt.Sprintf("Audited %d", i), fmt.Sprintf("https://repository.example.org/a/%d", i)), 201, nil)
	}
	b := newTab(t, n.admin, "operator")

	b.open("/apply/status")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-id"), a.appID), chromedp.SendKeys(chromedp.CSS("#f-token"), a.tok))
	b.submit("form[action='/apply/status'] button", "#granted")
	b.see(b.look("apply-status-approved"), "APPROVED", "Namespace granted", "AUA", "the operator of this node")

	b.signIn(n.opKey)
	b.open("/console/ops/audit?limit=4")
	p := b.look("audit")
	b.see(p, "Audit log", "Audit Lab A (AUA) with key “initial” created identifier", "Older entries")
	if got := b.count("#audit > li"); got != 4 {
		t.Errorf("the first page shows %d entries, want 4", got)
	}
	if b.count("#audit td.json") != 0 || strings.Contains(p.Text, `{"`) {
		t.Error("the audit page shows raw JSON")
	}
	b.do(chromedp.Click(chromedp.CSS("#audit details summary")))
	b.see(b.look("audit-details"), "Resource info › Label", "Audited 2")
	b.submit("a[rel=next]", "#audit")
	b.see(b.look("audit-older"), "Newest entries")
	b.open("/console/ops/audit")
	b.do(chromedp.SetValue(chromedp.CSS("#f-snaa"), a.snaaID), chromedp.SetValue(chromedp.CSS("#f-action"), "key.issue"))
	b.submit("form.filters button", "#audit")
	p = b.look("audit-filtered")
	if got := b.count("#audit > li"); got != 1 {
		t.Errorf("key.issue of %s: %d entries, want 1:\n%s", a.snaaID, got, p.Text)
	}
	b.see(p, "The operator issued key", a.snaaID)
	if strings.Contains(p.Text, "Audit Lab B") && strings.Contains(p.Text, "created SNAA") {
		t.Error("the filter by SNAA shows another SNAA's entries")
	}

	// Suspend, with a confirmation and a notice.
	b.open("/console/ops/snaa?id=" + a.snaaID)
	b.look("ops-snaa")
	b.submit("button[value=suspend]", "#confirm")
	b.see(b.look("suspend-confirm"), "Suspend Audit Lab A?", "its identifiers keep resolving")
	api(t, "GET", a.coll, a.key, nil, 200, nil)
	b.submit("#confirm button.danger", ".flash")
	b.see(b.look("suspended"), "The SNAA is suspended")
	api(t, "GET", a.coll, a.key, nil, 403, nil)
	b.submit("button[value=reinstate]", ".flash")
	b.see(b.look("reinstated"), "The SNAA is reinstated")
	b.submit("#keys button.danger", "#confirm")
	b.see(b.look("revoke-confirm"), "Revoke this key?", "cannot be restored")
	b.submit("#confirm button.danger", ".flash")
	b.see(b.look("revoked"), "The key was revoked.")
	api(t, "GET", a.coll, a.key, nil, 401, nil)
	for _, pg := range []struct{ path, name string }{
		{"/console/ops/applications?state=ALL", "ops-applications"}, {"/console/ops/snaas", "ops-snaas"},
	} {
		b.open(pg.path)
		b.look(pg.name)
	}
}
