package admin

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"pidnode/webhook"
)

// metricLine returns the value of the metric line that starts with name
// (with its labels), "" if /metrics has none.
func (e *env) metricLine(name string) string {
	e.t.Helper()
	r := e.want(e.do("GET", "/metrics", "", nil), 200)
	for _, l := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			return v
		}
	}
	return ""
}

// issue issues a key through the operator's route and returns the reply.
func (e *env) issue(snaaID, name string) *resp {
	e.t.Helper()
	return e.do("POST", "/ops/v1/snaas/"+snaaID+"/keys", testOpKey, map[string]any{"name": name})
}

// TestKeysPerSNAA: an SNAA holds at most DefaultKeysPerSNAA unrevoked keys;
// the next is refused with 409 and the key-limit problem type, through the
// operator's route and through the SNAA's own console alike; a revoked key
// frees its place; the operator raises and lowers the limit per SNAA with
// PATCH max_keys, and a bad value is a 422 naming the field.
func TestKeysPerSNAA(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(nil) // approval issues the first key
	for i := 1; i < DefaultKeysPerSNAA; i++ {
		e.want(e.issue(a.SNAA.ID, fmt.Sprintf("k%d", i)), 201)
	}
	p := e.want(e.issue(a.SNAA.ID, "one too many"), 409).problem(t)
	if p.Type != problemKeyLimit || !strings.Contains(p.Detail, "revoke a key") {
		t.Errorf("key beyond the limit: %+v, want type %s and how to free a place", p, problemKeyLimit)
	}
	if got := e.metricLine(`pidnode_admin_limit_refusals_total{limit="snaa_keys"}`); got != "1" {
		t.Errorf("snaa_keys refusals = %q, want 1", got)
	}
	// The console's self-service route applies the same rule.
	b := e.browser()
	b.signIn(a.Key.Secret)
	b.get("/console/keys")
	wantPage(t, b.post("/console/keys", url.Values{"name": {"from the console"}}), 409, "its limit; revoke a key before issuing another")

	// A revoked key does not count.
	var list struct{ Keys []Key }
	e.want(e.do("GET", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, nil), 200).json(t, &list)
	e.want(e.do("DELETE", "/ops/v1/snaas/"+a.SNAA.ID+"/keys/"+list.Keys[len(list.Keys)-1].ID, testOpKey, nil), 204)
	b.get("/console/keys")
	wantPage(t, b.post("/console/keys", url.Values{"name": {"from the console"}}), 200, "only this once")
	e.want(e.issue(a.SNAA.ID, "again too many"), 409)

	// The operator's own number, per SNAA; another SNAA keeps the default.
	var sn SNAA
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"max_keys": DefaultKeysPerSNAA + 2}), 200).json(t, &sn)
	if sn.MaxKeys != DefaultKeysPerSNAA+2 {
		t.Errorf("max_keys after PATCH = %d", sn.MaxKeys)
	}
	e.want(e.issue(a.SNAA.ID, "raised 1"), 201)
	e.want(e.issue(a.SNAA.ID, "raised 2"), 201)
	e.want(e.issue(a.SNAA.ID, "raised 3"), 409)
	other := e.snaa(nil)
	for i := 1; i < DefaultKeysPerSNAA; i++ {
		e.want(e.issue(other.SNAA.ID, fmt.Sprintf("k%d", i)), 201)
	}
	e.want(e.issue(other.SNAA.ID, "beyond the default"), 409)
	// Lowered below what it holds: no key is revoked, none can be issued.
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"max_keys": 1}), 200)
	e.want(e.issue(a.SNAA.ID, "lowered"), 409)
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	for _, bad := range []int{-1, MaxKeysPerSNAA + 1} {
		r := e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"max_keys": bad}), 422)
		if p := r.problem(t); len(p.Errors) == 0 || p.Errors[0].Field != "max_keys" {
			t.Errorf("max_keys %v: %+v, want an error naming max_keys", bad, p)
		}
	}
	// 0 is the default again.
	var reset SNAA
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"max_keys": 0}), 200).json(t, &reset)
	if reset.MaxKeys != 0 {
		t.Errorf("max_keys 0 stored as %d", reset.MaxKeys)
	}
}

// TestEventStreamsPerSNAA: an SNAA's keys together hold at most
// EventStreamsPerSNAA streams, however many keys it has, so another SNAA
// still gets a stream on a node whose limit the first would otherwise fill.
func TestEventStreamsPerSNAA(t *testing.T) {
	e := newStreamEnv(t, ListenerConfig{}, func(c *webhook.RoutesConfig) {
		c.EventStreamsPerKey, c.EventStreamsPerSNAA, c.EventStreams = 2, 3, 5
	})
	a := e.snaa(map[string]any{"namespace": "EPA"})
	b := e.snaa(map[string]any{"namespace": "EPB"})
	keys := []string{a.Key.Secret}
	for i := range 3 {
		var ik IssuedKey
		e.want(e.issue(a.SNAA.ID, fmt.Sprintf("extra %d", i)), 201).json(t, &ik)
		keys = append(keys, ik.Secret)
	}
	pa, pb := "/pid/v2/handles/21.12345/EPA/events", "/pid/v2/handles/21.12345/EPB/events"
	open, refused := 0, 0
	for _, k := range keys {
		for range 2 {
			s, res := openStream(t, e.base, pa, k, "")
			if s != nil {
				open++
				defer s.close()
				continue
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
				t.Fatalf("SNAA a's stream beyond its share: %d %s, want 429 with Retry-After", res.StatusCode, body)
			}
			refused++
		}
	}
	if open != 3 || refused != 5 {
		t.Errorf("SNAA a with %d keys opened %d streams (%d refused), want 3", len(keys), open, refused)
	}
	sb, res := openStream(t, e.base, pb, b.Key.Secret, "")
	if sb == nil {
		t.Fatalf("another SNAA's stream: %d, want 200", res.StatusCode)
	}
	defer sb.close()
	if got := e.metricLine(`pidnode_admin_limit_refusals_total{limit="snaa_streams"}`); got != "5" {
		t.Errorf("snaa_streams refusals = %q, want 5", got)
	}
}

// TestRateLimitPerSNAA: the keys of one SNAA share a bucket of
// DefaultSNAARateFactor keys' worth: four keys flooding together pass about
// what two keys would, whichever key sends; another SNAA is not slowed.
func TestRateLimitPerSNAA(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const rate, burst = 5, 10
	e := newEnv(t, func(c *Config) { c.RateLimit = rate; c.RateBurst = burst; c.Now = clk.now })
	a := e.snaa(nil)
	other := e.snaa(nil)
	keys := []string{a.Key.Secret}
	for i := range 3 {
		var ik IssuedKey
		e.want(e.issue(a.SNAA.ID, fmt.Sprintf("flood %d", i)), 201).json(t, &ik)
		keys = append(keys, ik.Secret)
	}
	passed, byKey := 0, make([]int, len(keys))
	const seconds = 10
	for tick := 0; tick < seconds*rate; tick++ {
		if r := e.do("GET", "/pid/v2/me", other.Key.Secret, nil); r.Status != 200 {
			t.Fatalf("tick %d: another SNAA's key at its rate got %d %s", tick, r.Status, r.Body)
		}
		for i, k := range keys {
			for range 2 {
				switch r := e.do("GET", "/pid/v2/me", k, nil); r.Status {
				case 200:
					passed++
					byKey[i]++
				case 429:
					if r.Header.Get("Retry-After") == "" {
						t.Fatal("429 without Retry-After")
					}
				default:
					t.Fatalf("flood: %d %s", r.Status, r.Body)
				}
			}
		}
		clk.add(time.Second / rate)
	}
	// Over 10 s the SNAA's bucket (10/s, burst 20) passes about 120; four
	// separate key buckets alone would pass about 240.
	if want := DefaultSNAARateFactor * (seconds*rate + burst); passed < want-4 || passed > want+4 {
		t.Errorf("an SNAA's four keys passed %d requests (by key %v), want about %d", passed, byKey, want)
	}
	if got := e.metricLine(`pidnode_admin_limit_refusals_total{limit="snaa_rate"}`); got == "" || got == "0" {
		t.Error("no snaa_rate refusal counted")
	}
}

// TestStreamEndsOnRevocation: with the default 15 s heartbeat, a revoked
// key's open stream ends within a second of the revocation, through the
// operator's route and through the SNAA's console; a suspended SNAA's
// streams end as fast; the other keys' streams stay open.
func TestStreamEndsOnRevocation(t *testing.T) {
	e := newStreamEnv(t, ListenerConfig{})
	a := e.snaa(map[string]any{"namespace": "ERV"})
	b := e.snaa(map[string]any{"namespace": "ERW"})
	var second IssuedKey
	e.want(e.issue(a.SNAA.ID, "second"), 201).json(t, &second)
	pa, pb := "/pid/v2/handles/21.12345/ERV/events", "/pid/v2/handles/21.12345/ERW/events"
	open := func(path, key string) *sseClient {
		t.Helper()
		s, res := openStream(t, e.base, path, key, "")
		if s == nil {
			t.Fatalf("stream: %d", res.StatusCode)
		}
		// The stream is being served once its first line has arrived.
		if _, err := s.rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		return s
	}
	ended := func(what string, s *sseClient, after time.Time) {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := s.next(); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s: the stream sent an event", what)
			}
			if d := time.Since(after); d > time.Second {
				t.Errorf("%s: the stream ended %v after, want within 1 s", what, d)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: the stream is still open 3 s after", what)
		}
		s.close()
	}
	first, keep, other := open(pa, a.Key.Secret), open(pa, second.Secret), open(pb, b.Key.Secret)
	start := time.Now()
	e.want(e.do("DELETE", "/ops/v1/snaas/"+a.SNAA.ID+"/keys/"+a.Key.ID, testOpKey, nil), 204)
	ended("operator revocation", first, start)

	// The SNAA revokes its second key in its console (signed in with a third).
	var third IssuedKey
	e.want(e.issue(a.SNAA.ID, "third"), 201).json(t, &third)
	br := e.browser()
	br.signIn(third.Secret)
	br.get("/console/keys")
	start = time.Now()
	if p := br.post("/console/keys/revoke", url.Values{"key_id": {second.ID}, "confirm": {"yes"}}); p.Status != 200 {
		t.Fatalf("console revocation: %d", p.Status)
	}
	ended("console revocation", keep, start)

	// Suspension ends the SNAA's streams; another SNAA's stays.
	s3 := open(pa, third.Secret)
	start = time.Now()
	e.want(e.do("PATCH", "/ops/v1/snaas/"+a.SNAA.ID, testOpKey, map[string]any{"suspended": true}), 200)
	ended("suspension", s3, start)
	var id Identifier
	e.want(e.do("POST", "/pid/v2/handles/21.12345/ERW/", b.Key.Secret, validPayload()), 201).json(t, &id)
	if ev, err := other.next(); err != nil || ev.data.Handle != id.Handle {
		t.Fatalf("another SNAA's stream after the revocations: %+v %v, want %s", ev, err, id.Handle)
	}
	other.close()
}
