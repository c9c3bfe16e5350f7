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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
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

// submit presses a button or follows a link (by selector) and waits for
// the next page to have loaded and to show selector next. The old page is
// marked first, so that a next the old page shows too is not taken for
// the new page's.
func (b *tab) submit(button, next string) {
	b.t.Helper()
	click := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(window.__old = true, document.querySelector(`+jsString(button)+`).click(), true)`)(ctx, tg)
		return err
	})
	loaded := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		// An evaluation fails while the page is replaced; try again.
		for {
			ok, err := chromedp.Evaluate[bool](`!window.__old && document.readyState === 'complete'`)(ctx, tg)
			if err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	b.do(click, loaded, chromedp.WaitVisible(chromedp.CSS(next)))
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
	// The public pages a steward meets first.
	for _, pg := range []struct{ path, name, says string }{
		{"/", "index", "pidnode"}, {"/apply", "apply", "Policy for Sub-Name Assigning Authorities"},
		{"/apply/status", "apply-status", "Status token"}, {"/console/sign-in", "sign-in", "Sign in"},
		{"/console/no-such-page", "not-found", "no console page"},
	} {
		b.open(pg.path)
		b.see(b.look(pg.name), pg.says)
	}
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

	// A tombstone is previewed before it is set.
	b.do(chromedp.SetValue(chromedp.CSS("#f-newstatus"), "OBSOLETED"))
	b.submit("form[action='/console/status'] button", "#tombstone")
	b.see(b.look("tombstone-preview"), "OBSOLETED", "Label from the browser", "Set the status to OBSOLETED")

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
	b.open("/console/ops/audit?snaa=" + a.snaaID)
	p = b.look("audit-snaa")
	b.see(p, "created identifier", "approved application", "created SNAA "+a.snaaID)
	if got := b.count("#audit > li"); got != 6 {
		t.Errorf("entries about %s: %d, want 6 (approval, SNAA, key, 3 identifiers):\n%s", a.snaaID, got, p.Text)
	}

	// Suspend, with a confirmation and a notice.
	b.open("/console/ops/snaa?id=" + a.snaaID)
	b.see(b.look("ops-snaa"), "Resolutions of AUA", "Busiest day")
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

// sessionCookie is the browser's console session cookie, for the test's
// own requests of what the browser would download (an export, the
// template).
func (b *tab) sessionCookie() *http.Cookie {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	var out *http.Cookie
	err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{})
		if err != nil {
			return err
		}
		for _, c := range res.Cookies {
			if strings.Contains(c.Name, "pidnode-session") {
				out = &http.Cookie{Name: c.Name, Value: c.Value}
			}
		}
		return nil
	}))
	if err != nil || out == nil {
		b.t.Fatalf("the browser's session cookie: %v", err)
	}
	return out
}

// download GETs path as the browser's session would and returns the body.
func (b *tab) download(path, wantType string) []byte {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.admin+path, nil)
	req.AddCookie(b.sessionCookie())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), wantType) || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		b.t.Fatalf("GET %s: %d %s %s\n%s", path, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"), body)
	}
	return body
}

func (b *tab) attr(sel, name string) string {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(sel)+`).getAttribute(`+jsString(name)+`)`))
	if err != nil {
		b.t.Fatalf("%s[%s]: %v", sel, name, err)
	}
	return v
}

func (b *tab) cells(sel string) []string {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.innerText.trim())`))
	if err != nil {
		b.t.Fatalf("%s: %v", sel, err)
	}
	return v
}

// TestStewardSearchExportBulk: over a few thousand identifiers the list
// searches id, label, URL and description, sorts by label, creation and
// change, counts and numbers its pages, and exports the search as CSV and
// JSON Lines; the bulk template the console links is a file pidctl bulk
// takes as it is, and a file in that format uploaded in the console is
// summarised with each failure in words.
func TestStewardSearchExportBulk(t *testing.T) {
	n := startConsoleNode(t, "--admin-rate", "0") // the setup's bulks of 1000
	st := onboard(t, n, "Search Lab", "SRC")
	const total = 3000
	for start := 0; start < total; start += 1000 {
		var items []any
		for i := start; i < start+1000; i++ {
			word := "alumina"
			if i%500 == 7 {
				word = "zeolite"
			}
			p := payload(fmt.Sprintf("Sample %04d %s", i, word), fmt.Sprintf("https://repository.example.org/batch/%04d", i))
			p["op"] = "create"
			items = append(items, p)
		}
		var sum struct{ Created, Failed int }
		api(t, "POST", st.coll+"bulk", st.key, items, 200, &sum)
		if sum.Created != 1000 {
			t.Fatalf("bulk created %d of 1000 (%d failed)", sum.Created, sum.Failed)
		}
	}
	b := newTab(t, n.admin, "search")
	b.signIn(st.key)

	b.open("/console/ids?base=test")
	p := b.look("list")
	b.see(p, "3000 identifiers; page 1 of 60", "alumina", "REGISTERED", "https://repository.example.org/batch/", "Next")
	if rows := b.count("#ids tbody tr"); rows != 50 {
		t.Errorf("the first page has %d rows, want 50", rows)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#f-q"), "zeol"), chromedp.SetValue(chromedp.CSS("#f-sort"), "-label"))
	b.submit("form[role=search] button", "#total")
	p = b.look("list-search")
	b.see(p, "6 identifiers match")
	labels := b.cells("#ids td.label")
	if len(labels) != 6 || labels[0] != "Sample 2507 zeolite" || labels[5] != "Sample 0007 zeolite" {
		t.Errorf("zeol by label Z to A: %q", labels)
	}
	// Sorting by creation, newest first, over every page: the last bulk
	// (one transaction, one time) first, the first one last.
	batchOf := func(label string) int {
		var i int
		fmt.Sscanf(label, "Sample %d", &i)
		return i / 1000
	}
	b.open("/console/ids?base=test&sort=-created")
	for _, l := range b.cells("#ids td.label") {
		if batchOf(l) != 2 {
			t.Errorf("the first page newest first shows %q", l)
		}
	}
	b.open("/console/ids?base=test&sort=-created&page=60")
	p = b.look("list-last-page")
	b.see(p, "page 60 of 60", "Previous")
	got := b.cells("#ids td.label")
	if len(got) != 50 {
		t.Errorf("the last page has %d rows", len(got))
	}
	for _, l := range got {
		if batchOf(l) != 0 {
			t.Errorf("the last page newest first shows %q", l)
		}
	}
	// A word of the URL and of the description.
	b.open("/console/ids?base=test&q=batch+0042")
	b.see(b.look("list-url-word"), "1 identifier match", "Sample 0042 alumina")

	// Export of the current search.
	b.open("/console/ids?base=test&q=zeolite&sort=label")
	b.look("list-export")
	csvBody := b.download(b.attr("a[href*='format=csv']", "href"), "text/csv")
	lines := strings.Split(strings.TrimSpace(string(csvBody)), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "handle,id,label,status,url") || !strings.Contains(lines[1], "Sample 0007 zeolite") {
		t.Errorf("CSV export:\n%s", csvBody)
	}
	jl := b.download(b.attr("a[href*='format=jsonl']", "href"), "application/x-ndjson")
	if n := strings.Count(string(jl), "\n"); n != 6 || !strings.Contains(string(jl), `"label":"Sample 2507 zeolite"`) {
		t.Errorf("JSON Lines export:\n%s", jl)
	}

	// The bulk template: linked from the console, taken by pidctl as it is.
	b.open("/console/bulk?base=test")
	b.look("bulk")
	href := b.attr("a[href*='template']", "href")
	tpl := b.download(href, "text/csv")
	dir := t.TempDir()
	pidctl := filepath.Join(dir, "pidctl")
	if out, err := exec.Command("go", "build", "-o", pidctl, "pidnode/cmd/pidctl").CombinedOutput(); err != nil {
		t.Fatalf("go build pidctl: %v\n%s", err, out)
	}
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte(st.key), 0o600)
	var first struct{ Items []struct{ ID string } }
	api(t, "GET", st.coll+"?q=sample+0001", st.key, nil, 200, &first)
	if len(first.Items) != 1 {
		t.Fatalf("search for sample 0001: %+v", first)
	}
	rows := string(tpl) +
		`create,,https://repository.example.org/pidctl/1,curator@example.org,REGISTERED,v1.0.1,CC0-1.0,,From pidctl,,SAMPLE,"[{""variant_url"":""https://repository.example.org/pidctl/1.ttl""}]",` + "\n" +
		`update,` + first.Items[0].ID + `,https://repository.example.org/pidctl/moved,,,,,,,,,,` + "\n"
	file := filepath.Join(dir, "from-template.csv")
	os.WriteFile(file, []byte(rows), 0o644)
	out, err := exec.Command(pidctl, "--admin", n.admin, "--key-file", keyFile, "bulk", file, "--test").CombinedOutput()
	if err != nil {
		t.Fatalf("pidctl bulk of the console's template with two rows: %v\n%s", err, out)
	}
	// The same format uploaded in the console: a create, an update, an
	// update of an unknown id (fails, creates nothing), a bad status.
	upload := string(tpl) +
		`create,,https://repository.example.org/console/1,curator@example.org,REGISTERED,v1.0.1,CC0-1.0,,From the console,,SAMPLE,"[{""variant_url"":""https://repository.example.org/console/1.ttl""}]",` + "\n" +
		`update,` + first.Items[0].ID + `,https://repository.example.org/console/moved,,,,,,,,,,` + "\n" +
		`update,NO-SUCH-1D,https://repository.example.org/console/none,,,,,,,,,,` + "\n" +
		`create,,https://repository.example.org/console/2,curator@example.org,PUBLISHED,v1.0.1,CC0-1.0,,Bad status,,SAMPLE,"[{""variant_url"":""https://repository.example.org/console/2.ttl""}]",` + "\n"
	upfile := filepath.Join(dir, "upload.csv")
	os.WriteFile(upfile, []byte(upload), 0o644)
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#f-file"), []string{upfile}))
	b.submit("form[action='/console/bulk'] button[type=submit]", "#summary")
	p = b.look("bulk-results")
	b.see(p, "1 created, 1 updated, 2 failed.", "Status must be one of")
	for _, bad := range []string{"422", "404", "^"} {
		if strings.Contains(b.cells("#results")[0], bad) {
			t.Errorf("the bulk results show %q:\n%s", bad, p.Text)
		}
	}
	if failed := b.cells("#results tr.failed td:last-child"); len(failed) != 2 || !strings.Contains(strings.ToLower(failed[0]), "no-such-1d") {
		t.Errorf("failed rows: %q", failed)
	}
	api(t, "GET", st.coll+"?q=console+none", st.key, nil, 200, &first)
	if len(first.Items) != 0 {
		t.Errorf("an update of an unknown id created %+v", first.Items)
	}
	// The same file through pidctl: the same outcome.
	out, err = exec.Command(pidctl, "--admin", n.admin, "--key-file", keyFile, "bulk", upfile, "--test").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "2 of 4 items failed") {
		t.Errorf("pidctl bulk of the console's upload: %v\n%s", err, out)
	}
}
