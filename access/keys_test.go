package access

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/model"
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

// TestLastUsed: the first use is written at once, in the background; a
// later one within the interval is shown by WithPending and written by
// Flush.
func TestLastUsed(t *testing.T) {
	k, reg := newKeys(t)
	secret := putKey(t, reg, "s1", "k1")
	key, _, err := k.Lookup(secret)
	if err != nil {
		t.Fatal(err)
	}
	// The first Touch starts a flush of its own; wait until it is written,
	// so that no flush under way can take the next use from the pending
	// ones before WithPending reads them.
	k.Touch(key.Hash)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		var first registry.Key
		if err := reg.View(func(tx registry.Tx) (err error) {
			first, _, err = tx.KeyByHash(key.Hash)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if first.LastUsed != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first use was not written")
		}
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

// TestIssueRevoke: Issue writes a key and its audit entry, refuses a bad
// name, an unknown SNAA and a key beyond the SNAA's limit (revoked keys do
// not count), and Revoke makes the key fail its next look-up.
func TestIssueRevoke(t *testing.T) {
	k, reg := newKeys(t)
	err := reg.Update(func(tx registry.Tx) error {
		return tx.PutSNAA(&registry.SNAA{ID: "s1", Namespace: "NS", MaxKeys: 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	var ve *model.ValidationError
	if _, _, err := k.Issue("operator", "s1", " \u2028 "); !errors.As(err, &ve) {
		t.Errorf("Issue(bad name) = %v, want a *model.ValidationError", err)
	}
	if _, _, err := k.Issue("operator", "nope", "ci"); !errors.Is(err, ErrNoSNAA) {
		t.Errorf("Issue(unknown SNAA) = %v, want ErrNoSNAA", err)
	}
	first, secret, err := k.Issue("operator", "s1", "ci")
	if err != nil || !WellFormed(secret) || !strings.HasPrefix(first.ID, "key_") {
		t.Fatalf("Issue = %+v, %q, %v", first, secret, err)
	}
	if got, _, err := k.Lookup(secret); err != nil || got.ID != first.ID {
		t.Fatalf("Lookup(issued) = %v, %v", got.ID, err)
	}
	if _, _, err := k.Issue("operator", "s1", "second"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.Issue("operator", "s1", "third"); !errors.Is(err, ErrKeyLimit) {
		t.Fatalf("Issue beyond the limit = %v, want ErrKeyLimit", err)
	}
	if err := k.Revoke("snaa:s1", "s1", "key_none"); !errors.Is(err, ErrNoKey) {
		t.Errorf("Revoke(unknown key) = %v, want ErrNoKey", err)
	}
	if err := k.Revoke("snaa:s1", "s1", first.ID); err != nil {
		t.Fatal(err)
	}
	if err := k.Revoke("snaa:s1", "s1", first.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	if _, _, err := k.Lookup(secret); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("Lookup(revoked) = %v, want ErrRevokedKey", err)
	}
	if _, _, err := k.Issue("operator", "s1", "third"); err != nil {
		t.Errorf("Issue after a revocation: %v", err)
	}
	keys, err := k.List("s1")
	if err != nil || len(keys) != 3 || keys[0].Hash != "" {
		t.Errorf("List = %+v, %v; want 3 keys without hashes", keys, err)
	}
	log, err := reg.AuditLog(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Actor+" "+e.Action)
	}
	want := []string{"operator key.issue", "operator key.issue", "snaa:s1 key.revoke", "operator key.issue"}
	if !slices.Equal(actions, want) {
		t.Errorf("audit log = %q, want %q", actions, want)
	}
}
