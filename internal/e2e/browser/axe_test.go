//go:build e2e

package browser

import (
	"context"
	_ "embed"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core (testdata/README.md), run inside Chromium on each
// page the console tests look at.
//
//go:embed testdata/axe.min.js
var axeSource string

// axeViolation is one rule axe-core finds broken on a page, with the
// elements that break it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// runAxe runs axe-core's WCAG 2 A and AA rules and the best practices
// (landmarks, one main, headings) on the page, and returns the violations
// of serious or critical impact: missing labels, landmarks, contrast.
const runAxe = `(async () => {
  const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] });
  return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').split('\n').slice(1).join(' ').trim()),
  }));
})()`

// axeCheck loads axe-core into the page (through the DevTools protocol,
// which the page's Content-Security-Policy does not govern) and fails the
// test for each serious or critical violation.
func axeCheck(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource+"\n;true")); err != nil {
		t.Fatalf("%s: loading axe-core: %v", name, err)
	}
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: running axe-core: %v", name, err)
	}
	for _, v := range vs {
		t.Errorf("%s: accessibility (axe-core %s, %s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
	}
}
