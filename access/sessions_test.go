package access

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"pidnode/registry"
)

// TestSessionLifetimes: a session is found until its idle or absolute
// lifetime runs out or its key is revoked; then it fails with the reason
// once and is gone.
func TestSessionLifetimes(t *testing.T) {
	keys, reg := newKeys(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ss, err := NewSessions(SessionsConfig{Registry: reg, Keys: keys, Idle: 10 * time.Minute, Max: time.Hour,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	secret := putKey(t, reg, "s1", "k1")
	sum := Hash(secret)
	snaaSession := registry.Session{SNAAID: "s1", KeyID: "k1", KeyHash: hex.EncodeToString(sum[:])}

	start := func() string {
		t.Helper()
		tok, err := ss.Start(snaaSession)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	gone := func(tok string, want error) {
		t.Helper()
		if _, err := ss.Lookup(tok); !errors.Is(err, want) {
			t.Fatalf("Lookup = %v, want %v", err, want)
		}
		if _, err := ss.Lookup(tok); !errors.Is(err, ErrSessionUnknown) {
			t.Fatalf("Lookup after the end = %v, want ErrSessionUnknown", err)
		}
	}

	tok := start()
	got, err := ss.Lookup(tok)
	if err != nil || got.Operator || got.SNAA.ID != "s1" || got.Key.ID != "k1" || got.Hash != TokenHash(tok) {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	if got.CSRF() != CSRFToken(tok) || CSRFToken(tok) == CSRFToken(start()) {
		t.Error("the CSRF token is not the session's own")
	}
	// Use keeps a session alive past its idle lifetime, up to its maximum.
	for range 6 {
		now = now.Add(9 * time.Minute)
		if _, err := ss.Lookup(tok); err != nil {
			t.Fatalf("Lookup after 9 idle minutes: %v", err)
		}
	}
	now = now.Add(9 * time.Minute)
	gone(tok, ErrSessionExpired)

	tok = start()
	now = now.Add(10 * time.Minute)
	gone(tok, ErrSessionIdle)

	tok = start()
	if _, err := ss.Lookup(tok); err != nil {
		t.Fatal(err)
	}
	err = reg.Update(func(tx registry.Tx) error {
		k, _, err := tx.KeyByHash(snaaSession.KeyHash)
		if err != nil {
			return err
		}
		k.Revoked = &now
		return tx.PutKey(snaaSession.KeyHash, &k)
	})
	if err != nil {
		t.Fatal(err)
	}
	keys.Invalidate()
	gone(tok, ErrSessionKeyRevoked)

	tok, err = ss.Start(registry.Session{Operator: true, KeyHash: hex.EncodeToString(make([]byte, 32))})
	if err != nil {
		t.Fatal(err)
	}
	gone(tok, ErrSessionOperatorChanged)
	tok, err = ss.Start(registry.Session{Operator: true, KeyHash: keys.OperatorHash()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ss.Lookup(tok); err != nil || !got.Operator {
		t.Errorf("operator session: %+v, %v", got, err)
	}
	if _, err := ss.Lookup("no-such-token"); !errors.Is(err, ErrSessionUnknown) {
		t.Errorf("Lookup(unknown) = %v, want ErrSessionUnknown", err)
	}
}
