package admin

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// testClock is an injected Config.Now that only moves when the test says so.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// createIdem creates an identifier with an Idempotency-Key and returns its
// handle and whether the reply was a replay.
func (e *env) createIdem(coll, key, idem string, body any) (string, bool) {
	e.t.Helper()
	r := e.want(e.do("PUT", coll, key, body, "Idempotency-Key", idem), http.StatusCreated)
	var id Identifier
	r.json(e.t, &id)
	return id.Handle, r.Header.Get("Idempotent-Replayed") == "true"
}

// TestIdempotencyKeyScope: an Idempotency-Key belongs to the SNAA that sent it
// and to the API base it was sent to. The same key from another SNAA, or on
// the test base, is a new request (a new identifier, no replay, no 422 for a
// "different request"), and each scope still replays its own.
func TestIdempotencyKeyScope(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "IDA"})
	b := e.snaa(map[string]any{"namespace": "IDB"})
	collA, collB := "/pid/v2/handles/21.12345/IDA/", "/pid/v2/handles/21.12345/IDB/"
	testA := "/testpid/v2/handles/21.T12345/IDA/"

	hA, rep := e.createIdem(collA, a.Key.Secret, "shared-key", validPayload())
	if rep {
		t.Fatal("first use replayed")
	}
	hB, rep := e.createIdem(collB, b.Key.Secret, "shared-key", validPayload())
	if rep || hB == hA {
		t.Errorf("another SNAA's use of the key: %s replayed=%v, want a new identifier (first %s)", hB, rep, hA)
	}
	hT, rep := e.createIdem(testA, a.Key.Secret, "shared-key", validPayload())
	if rep || hT == hA || hT == hB {
		t.Errorf("the same SNAA on the test base: %s replayed=%v, want a new identifier", hT, rep)
	}
	// Each scope replays its own first identifier.
	for _, c := range []struct{ coll, key, want string }{{collA, a.Key.Secret, hA}, {collB, b.Key.Secret, hB}, {testA, a.Key.Secret, hT}} {
		if h, rep := e.createIdem(c.coll, c.key, "shared-key", validPayload()); !rep || h != c.want {
			t.Errorf("retry on %s: %s replayed=%v, want replay of %s", c.coll, h, rep, c.want)
		}
	}
	if n := e.recordCount(); n != 3 {
		t.Errorf("records = %d, want 3", n)
	}
}

// TestIdempotencyKeyExpiry: a key is remembered for Config.IdempotencyTTL
// (24h when zero) after its first use, on the injected clock: a retry just
// inside the window replays (and a different body is still refused), one
// after it creates a new identifier.
func TestIdempotencyKeyExpiry(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want time.Duration
	}{
		{"configured 1h", time.Hour, time.Hour},
		{"default", 0, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &testClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			e := newEnv(t, func(c *Config) { c.Now = clk.Now; c.IdempotencyTTL = tc.ttl })
			a := e.snaa(map[string]any{"namespace": "EXP"})
			coll := "/pid/v2/handles/21.12345/EXP/"
			h1, _ := e.createIdem(coll, a.Key.Secret, "k1", validPayload())

			clk.advance(tc.want - time.Second)
			if h, rep := e.createIdem(coll, a.Key.Secret, "k1", validPayload()); !rep || h != h1 {
				t.Errorf("retry 1s before expiry: %s replayed=%v, want replay of %s", h, rep, h1)
			}
			other := validPayload()
			other["url"] = "https://other.example.org/"
			e.want(e.do("PUT", coll, a.Key.Secret, other, "Idempotency-Key", "k1"), http.StatusUnprocessableEntity).problem(t)

			clk.advance(2 * time.Second)
			h2, rep := e.createIdem(coll, a.Key.Secret, "k1", validPayload())
			if rep || h2 == h1 {
				t.Errorf("retry 1s after expiry: %s replayed=%v, want a new identifier", h2, rep)
			}
			// The key now names the new identifier, for a new window.
			clk.advance(tc.want - time.Second)
			if h, rep := e.createIdem(coll, a.Key.Secret, "k1", validPayload()); !rep || h != h2 {
				t.Errorf("retry within the new window: %s replayed=%v, want replay of %s", h, rep, h2)
			}
			if n := e.recordCount(); n != 2 {
				t.Errorf("records = %d, want 2", n)
			}
		})
	}
}
