package access

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/registry"
	"pidnode/store"
)

func newKeys(t *testing.T) (*Keys, *registry.Registry) {
	t.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "a.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(Config{Registry: reg, OperatorKey: "operator-secret", LastUsedInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return k, reg
}

// putKey stores an SNAA and a key of it, and returns the key's secret.
func putKey(t *testing.T, reg *registry.Registry, snaaID, keyID string) string {
	t.Helper()
	secret, err := NewSecret(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sum := Hash(secret)
	hx := hex.EncodeToString(sum[:])
	err = reg.Update(func(tx registry.Tx) error {
		if err := tx.PutSNAA(&registry.SNAA{ID: snaaID, Namespace: "NS"}); err != nil {
			return err
		}
		return tx.PutKey(hx, &registry.Key{ID: keyID, SNAAID: snaaID, Name: "k", Hash: hx})
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestSecretShape(t *testing.T) {
	s, err := NewSecret(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !WellFormed(s) || len(s) != KeySecretLen || !strings.HasPrefix(s, KeyPrefix) {
		t.Errorf("NewSecret() = %q: not well formed", s)
	}
	for _, bad := range []string{"", KeyPrefix, s[:len(s)-1], strings.Replace(s, KeyPrefix, "pix_", 1), KeyPrefix + strings.Repeat("1", KeySecretLen-len(KeyPrefix))} {
		if WellFormed(bad) {
			t.Errorf("WellFormed(%q) = true, want false", bad)
		}
	}
}

func TestOperator(t *testing.T) {
	k, _ := newKeys(t)
	if !k.IsOperator("operator-secret") || k.IsOperator("operator-secreT") || k.IsOperator("") {
		t.Error("IsOperator accepts only the operator key")
	}
	if !k.IsOperatorHash(k.OperatorHash()) || k.IsOperatorHash(strings.Repeat("0", 64)) {
		t.Error("IsOperatorHash accepts only the operator key's hash")
	}
}

// TestLookupRevocation: a found key is cached, and a revocation takes
// effect at the first look-up after Invalidate, which also closes the
// channel Changes handed out.
func TestLookupRevocation(t *testing.T) {
	k, reg := newKeys(t)
	if _, _, err := k.Lookup(KeyPrefix + strings.Repeat("a", KeySecretLen-len(KeyPrefix))); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Lookup(unknown) = %v, want ErrUnknownKey", err)
	}
	secret := putKey(t, reg, "s1", "k1")
	key, sn, err := k.Lookup(secret)
	if err != nil || key.ID != "k1" || sn.ID != "s1" {
		t.Fatalf("Lookup = %v, %v, %v", key.ID, sn.ID, err)
	}
	changed := k.Changes()
	sum := Hash(secret)
	hx := hex.EncodeToString(sum[:])
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err = reg.Update(func(tx registry.Tx) error {
		key.Revoked = &at
		return tx.PutKey(hx, &key)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.LookupSum(sum); err != nil {
		t.Fatalf("before Invalidate the cached key is found: %v", err)
	}
	k.Invalidate()
	select {
	case <-changed:
	default:
		t.Error("Invalidate did not close the channel of Changes")
	}
	_, _, err = k.Lookup(secret)
	var re *RevokedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRevokedKey) || !re.At.Equal(at) {
		t.Fatalf("Lookup(revoked) = %v, want a *RevokedError at %v", err, at)
	}
	if want := "this API key was revoked on 2026-01-02T03:04:05Z"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// TestLastUsed: a use is written by Flush, and shown by WithPending before.
func TestLastUsed(t *testing.T) {
	k, reg := newKeys(t)
	secret := putKey(t, reg, "s1", "k1")
	key, _, err := k.Lookup(secret)
	if err != nil {
		t.Fatal(err)
	}
	k.Touch(key.Hash)
	shown := key
	k.WithPending(&shown)
	if shown.LastUsed == nil {
		t.Fatal("WithPending shows no last use after Touch")
	}
	if err := k.Flush(); err != nil {
		t.Fatal(err)
	}
	var stored registry.Key
	err = reg.View(func(tx registry.Tx) error {
		var err error
		stored, _, err = tx.KeyByHash(key.Hash)
		return err
	})
	if err != nil || stored.LastUsed == nil || !stored.LastUsed.Equal(*shown.LastUsed) {
		t.Errorf("stored last use = %v (%v), want %v", stored.LastUsed, err, shown.LastUsed)
	}
}
