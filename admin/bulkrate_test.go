package admin

import (
	"testing"
	"time"
)

// TestBulkCostsItsItems: the per-key rate limit charges a bulk one token per
// item, as many creates would cost; a bulk the bucket cannot cover is refused
// whole with 429 and a Retry-After after which it passes; a bulk of more
// items than the burst passes only with a full bucket and leaves the key in
// debt for the items beyond it.
func TestBulkCostsItsItems(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const rate, burst = 10, 20
	e := newEnv(t, func(c *Config) { c.RateLimit = rate; c.RateBurst = burst; c.Now = clk.now })
	a := e.snaa(map[string]any{"namespace": "RAT"})
	bulk := "/pid/v2/handles/21.12345/RAT/bulk"
	items := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = validPayload()
		}
		return out
	}
	e.want(e.do("POST", bulk, a.Key.Secret, items(15)), 200) // 20 → 5 tokens
	r := e.want(e.do("POST", bulk, a.Key.Secret, items(15)), 429)
	if ra := r.Header.Get("Retry-After"); ra != "1" { // 10 more tokens take 1 s
		t.Errorf("Retry-After = %q, want 1", ra)
	}
	if n := e.recordCount(); n != 15 {
		t.Errorf("records = %d: the refused bulk wrote", n)
	}
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200) // 5 → 4
	clk.add(time.Second + 100*time.Millisecond)               // 4 → 15
	e.want(e.do("POST", bulk, a.Key.Secret, items(15)), 200)  // 15 → 0

	// 50 items, more than the burst: refused until the bucket is full,
	// then passed, then 30 tokens of debt.
	clk.add(time.Second)
	e.want(e.do("POST", bulk, a.Key.Secret, items(50)), 429)
	clk.add(time.Second)
	e.want(e.do("POST", bulk, a.Key.Secret, items(50)), 200)
	r = e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 429)
	if ra := r.Header.Get("Retry-After"); ra != "4" { // 30 of debt and one token: 3.1 s
		t.Errorf("Retry-After after the big bulk = %q, want 4", ra)
	}
	clk.add(3200 * time.Millisecond)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
}
