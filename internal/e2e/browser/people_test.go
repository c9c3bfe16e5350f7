//go:build e2e

package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pidnode/people"
)

// approvedKey has the operator approve an application through the API and
// returns the new SNAA's key and namespace.
func approvedKey(t *testing.T, n *consoleNode) (key, ns string) {
	t.Helper()
	call := func(method, path string, body any, out any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, n.admin+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+n.opKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d", method, path, res.StatusCode)
		}
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var app struct{ ID string }
	call("POST", "/ops/v1/applications", map[string]any{
		"organisation":           "Institute for People in Browsers",
		"technical_contact":      map[string]string{"name": "Tess Tech", "email": "tess@example.org"},
		"administrative_contact": map[string]string{"name": "Adam Admin", "email": "adam@example.org"},
		"policy_version":         "v1.0",
		"maintenance_statement":  "Our repository team keeps every landing page current.",
	}, &app)
	var res struct {
		SNAA struct{ Namespace string }
		Key  struct{ Secret string }
	}
	call("POST", "/ops/v1/applications/"+app.ID+"/approve", map[string]any{}, &res)
	return res.Key.Secret, res.SNAA.Namespace
}

// TestPeopleJourney: an SNAA signed in with its key invites a person on
// the people page; the person opens the invitation link in Chromium, sets a
// password and a TOTP second factor, signs in with e-mail, password and
// code, and sees the SNAA's namespace. Each page is checked as the console
// journey checks its pages (no executable markup, every input labelled,
// contrast and focus, phone size) and photographed.
func TestPeopleJourney(t *testing.T) {
	n := startConsoleNode(t)
	key, ns := approvedKey(t, n)
	dir := shots(t)
	ctx, _ := startBrowser(t, 1100, 900)
	shot := 0
	look := func(name string) consolePage {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		p, err := chromedp.Run(tctx, chromedp.Evaluate[consolePage](readConsole))
		if err != nil {
			t.Fatalf("%s: reading the page: %v", name, err)
		}
		a, err := chromedp.Run(tctx, chromedp.Evaluate[a11yFindings](readA11y))
		if err != nil {
			t.Fatalf("%s: reading contrast and focus: %v", name, err)
		}
		if len(p.Dangerous) > 0 || len(p.Unlabeled) > 0 || len(a.Contrast) > 0 || len(a.PositiveTab) > 0 || len(a.Unreachable) > 0 {
			t.Errorf("%s: markup %q, unlabelled %q, contrast %q, tab order %q %q", name, p.Dangerous, p.Unlabeled, a.Contrast, a.PositiveTab, a.Unreachable)
		}
		if strings.Contains(p.Location, key) || strings.Contains(p.Storage, key) {
			t.Fatalf("%s: the key is in the URL or the browser's storage", name)
		}
		shot++
		if png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("people-%02d-%s.png", shot, name)), png, 0o644)
		}
		lookPhone(t, tctx, filepath.Join(dir, fmt.Sprintf("people-%02d-%s-phone.png", shot, name)), name)
		return p
	}
	want := func(p consolePage, texts ...string) {
		t.Helper()
		for _, x := range texts {
			if !strings.Contains(p.Text, x) {
				t.Fatalf("a person does not see %q on %s:\n%s", x, p.Location, p.Text)
			}
		}
	}
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(tctx, actions...); err != nil {
			p, _ := chromedp.Run(ctx, chromedp.Evaluate[consolePage](readConsole))
			t.Fatalf("browser: %v; the page %s shows:\n%s", err, p.Location, p.Text)
		}
	}
	submit := func(button, next string) {
		t.Helper()
		click := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(document.querySelector(`+jsString(button)+`).click(), true)`)(ctx, tg)
			return err
		})
		do(click, chromedp.WaitVisible(chromedp.CSS(next)))
	}
	text := func(sel string) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}

	// The SNAA's key invites a person on the people page.
	do(chromedp.Navigate(n.admin+"/console/sign-in"), chromedp.SendKeys(chromedp.CSS("#f-key"), key))
	submit("form[action='/console/sign-in'] button[type=submit]", "form.signout")
	do(chromedp.Navigate(n.admin + "/console/people"))
	want(look("people"), "People of your SNAA", "Invite a person", "E-mail address")
	do(chromedp.SendKeys(chromedp.CSS("#f-email"), "erin@example.org"), chromedp.SetValue(chromedp.CSS("#f-role"), "editor"))
	submit("form[action='/console/people'] button[type=submit]", "#invite-link")
	want(look("people-invited"), "only this once", "erin@example.org")
	link := text("#invite-link")
	submit("form.signout button", "#f-key")

	// The person opens the link, sets a password and a second factor.
	do(chromedp.Navigate(link))
	want(look("join"), "You were invited as erin@example.org", "editor")
	do(chromedp.SendKeys(chromedp.CSS("#f-password"), "erin's long browser password"),
		chromedp.SendKeys(chromedp.CSS("#f-password2"), "erin's long browser password"),
		chromedp.Click(chromedp.CSS("#f-totp")))
	submit("form[action='/console/join'] button[type=submit]", "#totp-secret")
	want(look("join-totp"), "only this once")
	secret := text("#totp-secret")

	// The link works once.
	do(chromedp.Navigate(link))
	want(look("join-used"), "not valid")

	// Sign in with e-mail, password and code: the SNAA's namespace.
	code, err := people.TOTPCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do(chromedp.Navigate(n.admin+"/console/sign-in"),
		chromedp.SendKeys(chromedp.CSS("#f-email"), "erin@example.org"),
		chromedp.SendKeys(chromedp.CSS("#f-password"), "erin's long browser password"),
		chromedp.SendKeys(chromedp.CSS("#f-code"), code))
	submit("form[action='/console/sign-in/person'] button[type=submit]", "form.signout")
	want(look("person-signed-in"), "Your identifiers", ns, "erin@example.org (", "editor)")
}
