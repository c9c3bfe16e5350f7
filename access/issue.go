package access

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"pidnode/model"
	"pidnode/registry"
)

// How many unrevoked keys an SNAA may hold: DefaultKeysPerSNAA unless the
// operator sets its own number (SNAA.MaxKeys), at most MaxKeysPerSNAA.
const (
	DefaultKeysPerSNAA = 10
	MaxKeysPerSNAA     = 1000
)

// KeyLimit is how many unrevoked keys sn may hold.
func KeyLimit(sn *registry.SNAA) int {
	if sn.MaxKeys > 0 {
		return sn.MaxKeys
	}
	return DefaultKeysPerSNAA
}

// Issue issues a new key named name for SNAA snaaID, audited as actor (the
// operator, or an SNAA key rotating its own keys), and returns the key
// record and its secret (the only time the secret exists outside the
// caller's hands). It refuses a bad name (*model.ValidationError), an
// unknown SNAA (ErrNoSNAA) and a key beyond the SNAA's limit (ErrKeyLimit),
// both as *Error: the one rule of every route that issues keys. Revoked keys
// do not count.
func (k *Keys) Issue(actor, snaaID, name string) (registry.Key, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 || model.HasControl(name) {
		return registry.Key{}, "", &model.ValidationError{Errors: []model.FieldError{{Field: "name", Message: "is required: 1–100 printable characters"}}}
	}
	keyID, err := NewID(k.rnd, "key_")
	if err != nil {
		return registry.Key{}, "", err
	}
	secret, err := NewSecret(k.rnd)
	if err != nil {
		return registry.Key{}, "", err
	}
	sum := Hash(secret)
	key := registry.Key{ID: keyID, SNAAID: snaaID, Name: name, Hash: hex.EncodeToString(sum[:]), Created: k.now().UTC()}
	err = k.update(actor, func(tx registry.Tx) ([]Change, error) {
		sn, ok, err := tx.SNAA(snaaID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(ErrNoSNAA, fmt.Sprintf("no SNAA %q", snaaID))
		}
		keys, err := tx.KeysOf(sn.ID)
		if err != nil {
			return nil, err
		}
		active := 0
		for i := range keys {
			if keys[i].Revoked == nil {
				active++
			}
		}
		if n := KeyLimit(&sn); active >= n {
			return nil, refuse(ErrKeyLimit, fmt.Sprintf("SNAA %s already holds %d unrevoked keys, its limit; revoke a key before issuing another", sn.ID, n))
		}
		kv := KeyView(key)
		return []Change{{registry.ActKeyIssue, snaaID + "/" + key.ID, nil, &kv}}, tx.PutKey(key.Hash, &key)
	})
	if err != nil {
		return registry.Key{}, "", err
	}
	k.log.Info("key issued", "snaa", snaaID, "key", keyID, "name", name)
	return key, secret, nil
}

// Revoke revokes SNAA snaaID's key keyID, audited as actor; revoking a
// revoked key again is harmless. An unknown key (of this SNAA) is
// ErrNoKey.
func (k *Keys) Revoke(actor, snaaID, keyID string) error {
	now := k.now().UTC()
	err := k.update(actor, func(tx registry.Tx) ([]Change, error) {
		hash, key, ok, err := tx.FindKey(snaaID, keyID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(ErrNoKey, fmt.Sprintf("SNAA %q has no key %q", snaaID, keyID))
		}
		if key.Revoked != nil {
			return nil, nil
		}
		before := KeyView(key)
		key.Revoked = &now
		after := KeyView(key)
		return []Change{{registry.ActKeyRevoke, snaaID + "/" + keyID, &before, &after}}, tx.PutKey(hash, &key)
	})
	if err != nil {
		return err
	}
	k.log.Info("key revoked", "snaa", snaaID, "key", keyID, "by", actor)
	return nil
}

// List returns SNAA snaaID's keys, oldest first, as KeyView shows them,
// with their last use noted in memory; an unknown SNAA is ErrNoSNAA.
func (k *Keys) List(snaaID string) ([]registry.Key, error) {
	var keys []registry.Key
	var ok bool
	err := k.reg.View(func(tx registry.Tx) (err error) {
		if _, ok, err = tx.SNAA(snaaID); err != nil || !ok {
			return err
		}
		keys, err = tx.KeysOf(snaaID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refuse(ErrNoSNAA, fmt.Sprintf("no SNAA %q", snaaID))
	}
	out := make([]registry.Key, 0, len(keys))
	for _, key := range keys {
		k.WithPending(&key)
		out = append(out, KeyView(key))
	}
	return out, nil
}

// KeyView is a key without its hash, as the API and the console show it.
func KeyView(key registry.Key) registry.Key {
	key.Hash = ""
	return key
}

// Change is one audit entry of a write of keys or SNAAs: what it did to
// which target.
type Change struct {
	Action, Target string
	Before, After  any
}

// Update is the one shape of the writes of applications, SNAAs and keys.
// In one transaction of the Writer, fn reads and checks; it either refuses
// with an *Error (or a *model.ValidationError) before it writes anything,
// or writes and returns the changes it made, which Update appends to the
// audit log as actor in the same transaction, so that a write and its audit
// entries commit together or not at all. A refusal commits an empty
// transaction (returning nil to the Writer, so that its group partners are
// not rolled back) and is then returned; any other error of fn rolls back.
// fn may be run more than once and must set what it hands out anew each
// time. After the transaction, committed or not, the cache of keys is
// invalidated, since any such write may change a key or an SNAA.
//
// refusal reports which errors of fn are refusals besides *Error and
// *model.ValidationError (a front's own refusals); it may be nil.
func (k *Keys) Update(actor string, refusal func(error) bool, fn func(tx registry.Tx) ([]Change, error)) error {
	defer k.Invalidate()
	var refused error
	err := k.w.Update(func(tx registry.Tx) error {
		refused = nil
		changes, err := fn(tx)
		var e *Error
		var ve *model.ValidationError
		if err != nil && (errors.As(err, &e) || errors.As(err, &ve) || (refusal != nil && refusal(err))) {
			refused = err
			return nil
		}
		if err != nil {
			return err
		}
		for _, c := range changes {
			if err := tx.Audit(actor, c.Action, c.Target, c.Before, c.After); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return refused
}

func (k *Keys) update(actor string, fn func(tx registry.Tx) ([]Change, error)) error {
	return k.Update(actor, nil, fn)
}

// NewID returns prefix + 10 random lower-case base32 characters read from
// rnd: the ids of keys, SNAAs and applications.
func NewID(rnd io.Reader, prefix string) (string, error) {
	var b [10]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", err
	}
	const alpha = "0123456789abcdefghjkmnpqrstvwxyz"
	for i := range b {
		b[i] = alpha[b[i]&31]
	}
	return prefix + string(b[:]), nil
}
