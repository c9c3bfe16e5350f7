package admin

import (
	"testing"
	"time"
)

// TestRateLimitPerKey: a key sending at its configured rate never sees 429
// while another key of the same SNAA floods and is limited to rate×time+burst.
func TestRateLimitPerKey(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const rate, burst = 5, 10
	e := newEnv(t, func(c *Config) { c.RateLimit = rate; c.RateBurst = burst; c.Now = clk.now })
	a := e.snaa(nil)
	var flood IssuedKey
	e.want(e.do("POST", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, map[string]any{"name": "flood"}), 201).json(t, &flood)
	okFlood, limited := 0, 0
	const seconds = 20
	for tick := 0; tick < seconds*rate; tick++ {
		// The polite key: exactly its rate.
		if r := e.do("GET", "/pid/v2/me", a.Key.Secret, nil); r.Status != 200 {
			t.Fatalf("tick %d: key under its limit got %d %s", tick, r.Status, r.Body)
		}
		// The flooding key: 4 requests per tick.
		for range 4 {
			switch r := e.do("GET", "/pid/v2/me", flood.Secret, nil); r.Status {
			case 200:
				okFlood++
			case 429:
				limited++
				if r.Header.Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
			default:
				t.Fatalf("flood: %d", r.Status)
			}
		}
		clk.add(time.Second / rate)
	}
	// Over 20 s at 5/s with a burst of 10 the flood may pass about 110 times.
	if want := seconds*rate + burst; okFlood < want-2 || okFlood > want+2 {
		t.Errorf("flooding key passed %d times, want about %d", okFlood, want)
	}
	if limited == 0 {
		t.Error("flooding key never limited")
	}
}
