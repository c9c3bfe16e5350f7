package registry

import (
	"encoding/json"
	"fmt"
	"time"

	"pidnode/store"
)

// Session is a console session (docs/product.md §4.2), stored as JSON in
// store.BucketSessions under the SHA-256 (hex) of its token; the token itself
// is never stored. It is replicated like the keys, so that a session started
// on one node of a cluster is valid on every node.
type Session struct {
	// Operator is true for a session of the operator key; KeyHash then is
	// the hash of the operator key it was started with, so that a node
	// started with another key ends it.
	Operator bool `json:"operator,omitempty"`
	// SNAAID and KeyID name the SNAA key the session was started with;
	// KeyHash is that key's hash (its record's key in store.BucketKeys).
	SNAAID  string `json:"snaa_id,omitempty"`
	KeyID   string `json:"key_id,omitempty"`
	KeyHash string `json:"key_hash"`
	// PersonID names the person the session was started for (with
	// SNAAID, or for an operator person without); KeyHash is then empty.
	// Removing the person deletes its sessions (PeopleTx.Delete).
	PersonID string    `json:"person_id,omitempty"`
	Created  time.Time `json:"created"`
	// Expires is the absolute end; Seen is when the session was last used,
	// written at most once per the console's refresh interval (a coarse
	// time: idle expiry is checked against it and each node's own finer
	// memory of it).
	Expires time.Time `json:"expires"`
	Seen    time.Time `json:"seen"`
}

// Session returns the session stored under hash.
func (t Tx) Session(hash string) (Session, bool, error) {
	var s Session
	ok, err := getJSON(t.bucket(store.BucketSessions), hash, &s)
	if err != nil {
		return s, false, fmt.Errorf("registry: session record: %w", err)
	}
	return s, ok, nil
}

// PutSession stores s under hash.
func (t Tx) PutSession(hash string, s *Session) error {
	return t.putJSON(store.BucketSessions, hash, s)
}

// DeleteSession removes the session stored under hash, if any.
func (t Tx) DeleteSession(hash string) error {
	return t.Delete(store.BucketSessions, []byte(hash))
}

// DeleteSessions removes every session for which drop is true, at most max
// of them (0: no bound), and returns how many it removed.
func (t Tx) DeleteSessions(max int, drop func(hash string, s *Session) bool) (int, error) {
	var doomed [][]byte
	err := t.bucket(store.BucketSessions).ForEach(func(k, v []byte) error {
		if max > 0 && len(doomed) >= max {
			return nil
		}
		var s Session
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("registry: session record: %w", err)
		}
		if drop(string(k), &s) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range doomed {
		if err := t.Delete(store.BucketSessions, k); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}
