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
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// consoleNode is the real binary without demo data, with statistics
// flushed every second (and flags, if given).
type consoleNode struct {
	resolver, admin, opKey string
}

func startConsoleNode(t *testing.T, flags ...string) *consoleNode {
	t.Helper()
	data := t.TempDir()
	ready := filepath.Join(data, "ready")
	cmd := exec.Command(binPath, append([]string{"serve", "--data", data, "--resolver-addr", "127.0.0.1:0",
		"--admin-addr", "127.0.0.1:0", "--dns-addr", "", "--hdl-addr", "", "--ready-file", ready, "--stats-interval", "1s"}, flags...)...)
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

// a11yFindings is what readA11y finds wrong with a page for a person who
// reads with low vision or moves with the keyboard (docs/product.md §4.2):
//   - Contrast: visible elements with their own text whose WCAG 2.x
//     contrast ratio against the effective background is under 4.5:1, or
//     under 3:1 for large text (24 px, or 18.66 px at weight 700 and more).
//     The background is the first ancestor's background-color blended from
//     the root down over white, so translucent backgrounds count as drawn;
//     a translucent text colour is blended over that background. SVG text
//     is measured by its fill. Disabled controls are exempt as in WCAG
//     1.4.3.
//   - PositiveTab: elements with tabindex above 0, which take focus ahead
//     of the document order.
//   - Unreachable: visible, enabled form controls and links taken out of
//     the tab order with tabindex -1.
//   - FocusRule: empty when the style sheets have a :focus or
//     :focus-visible rule setting an outline or box-shadow.
//   - NoFocusRing: reachable controls that, focused, show neither an
//     outline nor a box-shadow.
//
// Elements moved off-screen on purpose (the skip link, the honeypot, the
// default submit button) end left of the viewport or are 1 px wide and so
// are not counted.
type a11yFindings struct {
	Contrast    []string `json:"contrast"`
	PositiveTab []string `json:"positiveTab"`
	Unreachable []string `json:"unreachable"`
	FocusRule   string   `json:"focusRule"`
	NoFocusRing []string `json:"noFocusRing"`
}

const readA11y = `(() => {
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.getAttribute('name') ? '[name=' + el.getAttribute('name') + ']' : '') +
    (el.getAttribute('href') ? '[href=' + el.getAttribute('href') + ']' : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 1 && r.height > 1 && r.right > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const cap = a => { if (a.length > 8) a.splice(8, a.length - 8, 'and ' + (a.length - 8) + ' more'); return a; };
  const rgba = s => {
    const m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(s);
    if (!m) return null;
    let a = m[4] === undefined ? 1 : parseFloat(m[4]);
    if (m[4] && m[4].endsWith('%')) a /= 100;
    return [+m[1], +m[2], +m[3], a];
  };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = el => {
    const chain = [];
    for (let a = el; a; a = a.parentElement) chain.push(a);
    let bg = [255, 255, 255, 1];
    for (const a of chain.reverse()) {
      const c = rgba(getComputedStyle(a).backgroundColor);
      if (c && c[3] > 0) bg = over(c, bg);
    }
    return bg;
  };
  const lum = c => { const l = c.slice(0, 3).map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const contrast = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (!Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim() !== '')) continue;
    if (!shown(el) || el.closest(':disabled')) continue;
    const cs = getComputedStyle(el);
    if (parseFloat(cs.opacity) === 0) continue;
    const bg = background(el);
    const fgRaw = el instanceof SVGElement ? cs.fill : cs.color;
    const fg0 = rgba(fgRaw);
    const snippet = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join(' ').trim().replace(/\s+/g, ' ').slice(0, 30);
    if (!fg0) { contrast.push(name(el) + ' "' + snippet + '" colour ' + fgRaw + ' not understood'); continue; }
    const fg = over(fg0, bg);
    const L1 = lum(fg), L2 = lum(bg);
    const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
    const size = parseFloat(cs.fontSize), weight = parseInt(cs.fontWeight, 10) || 400;
    const large = size >= 24 || (size >= 18.66 && weight >= 700);
    const need = large ? 3 : 4.5;
    if (ratio < need) contrast.push(name(el) + ' "' + snippet + '" ' + ratio.toFixed(2) + ':1, needs ' + need + ':1');
  }
  const positiveTab = [], unreachable = [], noRing = [];
  for (const el of document.querySelectorAll('[tabindex]')) if (el.tabIndex > 0) positiveTab.push(name(el) + ' tabindex=' + el.getAttribute('tabindex'));
  const reachable = [];
  for (const el of document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')) {
    if (el.type === 'hidden' || el.disabled || !shown(el)) continue;
    if (el.tabIndex < 0) { if (el.matches('a[href], button, input, select, textarea, summary')) unreachable.push(name(el)); continue; }
    reachable.push(el);
  }
  const hasRing = cs => (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || (cs.boxShadow && cs.boxShadow !== 'none');
  const sx = window.scrollX, sy = window.scrollY, was = document.activeElement;
  let focused = 0;
  for (const el of reachable) {
    el.focus({ preventScroll: true });
    if (!el.matches(':focus')) continue;
    focused++;
    if (!hasRing(getComputedStyle(el))) noRing.push(name(el));
  }
  if (reachable.length > 0 && focused === 0) noRing.push('none of ' + reachable.length + ' controls takes focus, so the focus ring was not checked');
  if (was && was !== document.body && was.focus) was.focus({ preventScroll: true }); else if (document.activeElement) document.activeElement.blur();
  window.scrollTo(sx, sy);
  let focusRule = 'no :focus or :focus-visible rule sets an outline or box-shadow';
  const walk = rules => { for (const r of Array.from(rules || [])) {
    if (r.selectorText && r.selectorText.includes(':focus') && r.style &&
      ((r.style.outlineStyle && r.style.outlineStyle !== 'none') || (r.style.outlineWidth && parseFloat(r.style.outlineWidth) > 0) || (r.style.boxShadow && r.style.boxShadow !== 'none'))) focusRule = '';
    if (r.cssRules) walk(r.cssRules);
  } };
  for (const sheet of Array.from(document.styleSheets)) { try { walk(sheet.cssRules); } catch (e) {} }
  return { contrast: cap(contrast), positiveTab: cap(positiveTab), unreachable: cap(unreachable), focusRule: focusRule, noFocusRing: cap(noRing) };
})()`

// The phone every console page is also looked at with: 390×844 CSS px at
// device scale 2, mobile, portrait, touch (docs/product.md §4.2: pages fit a
// phone screen).
const phoneWidth, phoneHeight, phoneScale = 390, 844, 2

// phoneFit is what the page does wrong at phone width; each check is one a
// person on a phone would notice:
//   - Width: the page does not lay out at the device width (a missing
//     <meta name=viewport> gives a 980 px layout shrunk to a third, and
//     then no width check below would mean anything).
//   - Overflow: the document is wider than the viewport, so the whole page
//     scrolls sideways.
//   - Wide: visible elements whose right edge is past the viewport and that
//     are not inside a container scrolling on its own (overflow-x auto or
//     scroll, the wrapper tables are allowed to scroll in) - text cut off or
//     reachable only by panning the page.
//   - Small: buttons and text-entry controls (input other than checkbox,
//     radio, hidden; select; textarea) under 40 CSS px tall, too small to
//     hit with a finger (Apple and Android ask for 44 and 48).
//   - Zooms: text-entry controls with a font-size under 16 px, which iOS
//     Safari zooms into on focus, leaving the page zoomed in.
//
// Elements moved off-screen on purpose (the skip link, the honeypot, the
// default submit button) end left of the viewport or are 1 px wide and so
// are not counted.
type phoneFit struct {
	Width    int      `json:"width"`
	Overflow string   `json:"overflow"`
	Wide     []string `json:"wide"`
	Small    []string `json:"small"`
	Zooms    []string `json:"zooms"`
}

// readPhoneFit is a function of the device width: a page wider than the
// device makes a mobile browser widen its layout, so innerWidth is not the
// measure.
const readPhoneFit = `(vw => {
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.getAttribute('name') ? '[name=' + el.getAttribute('name') + ']' : '') +
    (el.getAttribute('href') ? '[href=' + el.getAttribute('href') + ']' : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 1 && r.height > 1 && r.right > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const scrolls = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
  const wide = [], small = [], zooms = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > vw + 1 && !scrolls(el)) wide.push(name(el) + ' right=' + Math.round(r.right));
  }
  for (const el of document.querySelectorAll('button, .button, input, select, textarea')) {
    if (['hidden', 'checkbox', 'radio'].includes(el.type) || !shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.height < 39.5) small.push(name(el) + ' ' + r.height.toFixed(1) + 'px');
    if (el.matches('input, select, textarea')) {
      const fs = parseFloat(getComputedStyle(el).fontSize);
      if (fs < 16) zooms.push(name(el) + ' ' + fs + 'px');
    }
  }
  if (wide.length > 8) wide.splice(8, wide.length - 8, 'and ' + (wide.length - 8) + ' more');
  const sw = document.documentElement.scrollWidth;
  return {
    width: window.innerWidth,
    overflow: sw <= vw + 1 ? '' : 'document ' + sw + ' px wide in a ' + vw + ' px viewport',
    wide: wide, small: small, zooms: zooms,
  };
})`

// TestConsoleJourney: an organisation applies, the operator approves, the
// SNAA signs in with its key, creates an identifier through the generated
// form, edits it, sees it resolve, sees its history and chart, rotates its
// key, and the old key's session ends; each page in headless Chromium, with
// a screenshot, looked at again at phone size (lookPhone).
func TestConsoleJourney(t *testing.T) {
	n := startConsoleNode(t)
	dir := shots(t)
	t.Logf("screenshots in %s", dir)
	ctx, dialogs := startBrowser(t, 1100, 900)
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
		lookPhone(t, tctx, filepath.Join(dir, fmt.Sprintf("console-%02d-%s-phone.png", shot, name)), name)
		// Headless, the window has no focus and :focus never matches
		// unless focus is emulated.
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
		if len(a.Contrast) > 0 {
			t.Errorf("%s: text with too little contrast: %q", name, a.Contrast)
		}
		if len(a.PositiveTab) > 0 {
			t.Errorf("%s: positive tabindex breaks the focus order: %q", name, a.PositiveTab)
		}
		if len(a.Unreachable) > 0 {
			t.Errorf("%s: visible controls out of the tab order (tabindex -1): %q", name, a.Unreachable)
		}
		if a.FocusRule != "" {
			t.Errorf("%s: focus is not visible: %s", name, a.FocusRule)
		}
		if len(a.NoFocusRing) > 0 {
			t.Errorf("%s: focused, these show no outline or box-shadow: %q", name, a.NoFocusRing)
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
	want(t, p, "Policy version", "is required")
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
		chromedp.SetValue(chromedp.CSS("#f-metadata-schema_version"), "v1.0.1"),
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
	want(t, look(t, "snaa-new-error"), "must be a whole number")
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
	want(t, p, "Resolutions per day", "Created", "Changed", "Resource info › Label")
	if !strings.Contains(p.Text, "2 resolutions") {
		t.Errorf("the chart does not count the 2 resolutions:\n%s", p.Text)
	}

	// 8. Rotate the key; the old key's session ends.
	do(t, chromedp.Navigate(n.admin+"/console/keys"), chromedp.SendKeys(chromedp.CSS("#f-name"), "rotated"))
	submit(t, "form[action='/console/keys'] button", "#new-key")
	want(t, look(t, "snaa-key-issued"), "only this once", "rotated")
	newKey := text(t, "#new-key")
	secrets = append(secrets, newKey)
	submit(t, "button[aria-label='Revoke key initial']", "#confirm")
	want(t, look(t, "snaa-revoke-confirm"), "Revoke this key?", "It is the key you signed in with")
	submit(t, "#confirm button.danger", "#f-key")
	want(t, look(t, "snaa-session-ended"), "revoked")
	do(t, chromedp.Navigate(n.admin+"/console/ids"), chromedp.WaitVisible(chromedp.CSS("#f-key")))
	signIn(t, newKey)
	do(t, chromedp.Navigate(n.admin+"/console/ids?base=test"))
	want(t, look(t, "snaa-new-key-signed-in"), "Your identifiers", handle[strings.LastIndexByte(handle, '/')+1:], "Cu/ZnO sample, edited")

	dialogs.Range(func(k, _ any) bool {
		t.Errorf("a JavaScript dialog opened: %v", k)
		return true
	})
}

// lookPhone lays the page in the browser out again at phone size, saves a
// screenshot to png, reports what phoneFit finds and returns the browser to
// its desktop size. The page is not loaded again, so pages reached by a
// form post are looked at as they are.
func lookPhone(t *testing.T, ctx context.Context, png, name string) {
	t.Helper()
	desktop := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{})
		return err
	})
	defer func() {
		err := chromedp.Do(ctx, desktop)
		if err == nil {
			_, err = chromedp.Run(ctx, chromedp.Poll[bool](`window.innerWidth > `+fmt.Sprint(phoneWidth)))
		}
		if err != nil {
			t.Fatalf("%s: back to desktop size: %v", name, err)
		}
	}()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateScale(phoneScale), chromedp.EmulateMobile, chromedp.EmulatePortrait, chromedp.EmulateTouch),
	); err != nil {
		t.Fatalf("%s: phone size: %v", name, err)
	}
	// The new size takes effect with the next layout; wait for it, but
	// only so long: a page that never lays out at the device width is
	// reported below.
	var f phoneFit
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if f, err = chromedp.Run(ctx, chromedp.Evaluate[phoneFit](fmt.Sprintf("(%s)(%d)", readPhoneFit, phoneWidth))); err != nil {
			t.Fatalf("%s: reading the page at phone size: %v", name, err)
		}
		if f.Width == phoneWidth || time.Now().After(deadline) {
			break
		}
	}
	if b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Errorf("%s: phone screenshot: %v", name, err)
	} else if err := os.WriteFile(png, b, 0o644); err != nil {
		t.Error(err)
	}
	if f.Width != phoneWidth {
		t.Errorf("%s on a phone: the page lays out %d CSS px wide, not at the device width %d", name, f.Width, phoneWidth)
	}
	if f.Overflow != "" {
		t.Errorf("%s on a phone: the page scrolls sideways: %s", name, f.Overflow)
	}
	if len(f.Wide) > 0 {
		t.Errorf("%s on a phone: wider than the screen and not in a scrolling box: %q", name, f.Wide)
	}
	if len(f.Small) > 0 {
		t.Errorf("%s on a phone: controls under 40 px tall: %q", name, f.Small)
	}
	if len(f.Zooms) > 0 {
		t.Errorf("%s on a phone: inputs under 16 px, iOS zooms on focus: %q", name, f.Zooms)
	}
}

func jsString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}
