package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/store"
)

// ErrConfig is wrapped by every *ConfigError New returns.
var ErrConfig = errors.New("registry: invalid configuration")

// ConfigError reports a Config field New rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error

// Config configures New.
type Config struct {
	// DB is the database. Required.
	DB *store.DB
	// Namer decides prefixes and storage keys (the URL index and the
	// statistics cover full-form keys under its production and test prefix).
	// Required.
	Namer *handlev.Namer
	// URLIndex is the value index of a record's landing page URL (the
	// metadata model's url.index), which the URL index follows. Required.
	URLIndex int32
	// Now is the clock of audit entries. If nil, time.Now.
	Now func() time.Time
	// OnCommit, if set, is called after each group that Commit committed,
	// with the number of writes it held.
	OnCommit func(writes int)
}

// Registry is the persistence of the admin buckets. It is safe for
// concurrent use.
type Registry struct {
	db       *store.DB
	namer    *handlev.Namer
	urlIndex int32
	now      func() time.Time
	writes   *groupCommit
}

// New returns the registry of cfg.DB. It writes nothing; EnsureIndexes builds
// the indexes a database written before they existed lacks.
func New(cfg Config) (*Registry, error) {
	switch {
	case cfg.DB == nil:
		return nil, cfgerr.Required("registry", "DB", ErrConfig)
	case cfg.Namer == nil:
		return nil, cfgerr.Required("registry", "Namer", ErrConfig)
	case cfg.URLIndex <= 0:
		return nil, &ConfigError{Pkg: "registry", Field: "URLIndex", Value: strconv.Itoa(int(cfg.URLIndex)), Reason: "must be positive", Err: ErrConfig}
	}
	r := &Registry{db: cfg.DB, namer: cfg.Namer, urlIndex: cfg.URLIndex, now: cfg.Now}
	if r.now == nil {
		r.now = time.Now
	}
	r.writes = newGroupCommit(cfg.DB, cfg.OnCommit)
	return r, nil
}

// Tx is a transaction of the registry: the store's transaction (records) with
// typed access to the admin buckets. Like store.Tx, it and every []byte it
// hands out are valid only inside the function it was passed to; the values
// its getters return are decoded into memory of their own.
type Tx struct {
	*store.Tx
	r *Registry
}

// View runs fn in a read transaction.
func (r *Registry) View(fn func(tx Tx) error) error {
	return r.db.View(func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// Update runs fn in a write transaction (store.Update: fn may be run again
// and must keep every effect inside tx).
func (r *Registry) Update(fn func(tx Tx) error) error {
	return r.db.Update(func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// UpdateAlone runs fn in a write transaction of its own, committed at once
// (store.DB.UpdateAlone), for a single goroutine that groups its writes.
func (r *Registry) UpdateAlone(fn func(tx Tx) error) error {
	return r.db.UpdateAlone(func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// Commit runs fn in a write transaction shared with concurrent Commit callers
// (group commit, commit.go) and returns after it is committed. fn's error, if
// any, is returned and its changes are rolled back; a panic of fn is its
// error. fn must be idempotent and should do its expensive work (validation,
// record building, JSON encoding) before Commit is called.
func (r *Registry) Commit(fn func(tx Tx) error) error {
	return r.CommitAs("", 1, fn)
}

// CommitAs is Commit for a write of owner (the SNAA) that writes cost
// identifiers (a bulk's items; at least 1). Concurrent writers share the
// commit groups fairly between owners (commit.go): one owner's large or many
// writes delay another owner's write by at most one group.
func (r *Registry) CommitAs(owner string, cost int, fn func(tx Tx) error) error {
	return r.writes.updateAs(owner, cost, func(tx *store.Tx) error { return fn(Tx{tx, r}) })
}

// EnsureIndexes builds the URL and search indexes and the per-record and
// per-namespace audit indexes of a database written before they existed
// (once; every write then maintains them). built is the number of URL
// index entries written, -1 if the URL index was already complete.
func (r *Registry) EnsureIndexes() (built int, err error) {
	urls, err := indexBuilt(r.db, store.BucketURLIndex)
	if err != nil {
		return 0, err
	}
	search, err := indexBuilt(r.db, store.BucketSearch)
	if err != nil {
		return 0, err
	}
	built = -1
	if !urls || !search {
		n, err := reindex(r.db, r.namer, r.urlIndex, !urls, !search)
		if err != nil {
			return n, err
		}
		if !urls {
			built = n
		}
	}
	return built, r.reindexAudit()
}

// getJSON reads and decodes a JSON value of bucket b; false if absent.
func getJSON(b *bbolt.Bucket, key string, v any) (bool, error) {
	return decodeJSON(b.Get([]byte(key)), key, v)
}

// decodeJSON decodes raw, the value under key (nil: absent), into v.
func decodeJSON(raw []byte, key string, v any) (bool, error) {
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("registry: %s: %w", key, err)
	}
	return true, nil
}

// putJSON encodes v into bucket under key, through store.Tx.Put so that a
// cluster node's rehearsal of the write sees it.
func (t Tx) putJSON(bucket []byte, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.Put(bucket, []byte(key), raw)
}

// list decodes every value of bucket b and keeps those keep accepts (nil: all).
func list[T any](b *bbolt.Bucket, keep func(*T) bool) ([]T, error) {
	var out []T
	err := b.ForEach(func(_, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		if keep == nil || keep(&x) {
			out = append(out, x)
		}
		return nil
	})
	return out, err
}

func (t Tx) bucket(name []byte) *bbolt.Bucket { return t.Bolt().Bucket(name) }

// Application returns the application id.
func (t Tx) Application(id string) (Application, bool, error) {
	var a Application
	ok, err := getJSON(t.bucket(store.BucketApplications), id, &a)
	return a, ok, err
}

// PutApplication stores a under a.ID.
func (t Tx) PutApplication(a *Application) error {
	return t.putJSON(store.BucketApplications, a.ID, a)
}

// Applications returns the applications in state (every state if ""), in
// order of submission.
func (t Tx) Applications(state string) ([]Application, error) {
	out, err := list(t.bucket(store.BucketApplications), func(a *Application) bool { return state == "" || a.State == state })
	slices.SortFunc(out, func(a, b Application) int { return a.Submitted.Compare(b.Submitted) })
	return out, err
}

// SNAA returns the SNAA id.
func (t Tx) SNAA(id string) (SNAA, bool, error) {
	var sn SNAA
	ok, err := getJSON(t.bucket(store.BucketSNAAs), id, &sn)
	return sn, ok, err
}

// PutSNAA stores sn under sn.ID.
func (t Tx) PutSNAA(sn *SNAA) error {
	return t.putJSON(store.BucketSNAAs, sn.ID, sn)
}

// SNAAs returns every SNAA, by namespace.
func (t Tx) SNAAs() ([]SNAA, error) {
	out, err := list[SNAA](t.bucket(store.BucketSNAAs), nil)
	slices.SortFunc(out, func(a, b SNAA) int { return strings.Compare(a.Namespace, b.Namespace) })
	return out, err
}

// HasSNAAs reports whether any SNAA exists.
func (t Tx) HasSNAAs() bool {
	k, _ := t.bucket(store.BucketSNAAs).Cursor().First()
	return k != nil
}

// NamespaceTaken reports whether an SNAA already has namespace ns.
func (t Tx) NamespaceTaken(ns string) (bool, error) {
	taken, err := list(t.bucket(store.BucketSNAAs), func(sn *SNAA) bool { return sn.Namespace == ns })
	return len(taken) > 0, err
}

// KeyByHash returns the key stored under hash (hex SHA-256 of its secret).
// The caller compares the stored Key.Hash with the secret's.
func (t Tx) KeyByHash(hash string) (Key, bool, error) {
	var k Key
	ok, err := getJSON(t.bucket(store.BucketKeys), hash, &k)
	if err != nil {
		return k, false, fmt.Errorf("registry: key record: %w", err)
	}
	return k, ok, nil
}

// PutKey stores k under hash.
func (t Tx) PutKey(hash string, k *Key) error {
	return t.putJSON(store.BucketKeys, hash, k)
}

// KeysOf returns the keys of SNAA snaaID, oldest first.
func (t Tx) KeysOf(snaaID string) ([]Key, error) {
	out, err := list(t.bucket(store.BucketKeys), func(k *Key) bool { return k.SNAAID == snaaID })
	slices.SortFunc(out, func(a, b Key) int { return a.Created.Compare(b.Created) })
	return out, err
}

// FindKey returns SNAA snaaID's key keyID and the hash it is stored under.
func (t Tx) FindKey(snaaID, keyID string) (hash string, k Key, ok bool, err error) {
	err = t.bucket(store.BucketKeys).ForEach(func(h, v []byte) error {
		var x Key
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		if x.ID == keyID && x.SNAAID == snaaID {
			hash, k, ok = string(h), x, true
		}
		return nil
	})
	return hash, k, ok, err
}

// SetLastUsed records when keys were last used (by key hash); a time not
// after the stored one and a key that no longer exists are skipped.
func (t Tx) SetLastUsed(times map[string]time.Time) error {
	b := t.bucket(store.BucketKeys)
	for h, tm := range times {
		v := b.Get([]byte(h))
		if v == nil {
			continue
		}
		var k Key
		if err := json.Unmarshal(v, &k); err != nil {
			return err
		}
		if k.LastUsed != nil && !tm.After(*k.LastUsed) {
			continue
		}
		tm := tm.UTC()
		k.LastUsed = &tm
		// Last-used times are each node's own (docs/product.md §10): written
		// on the bucket directly, never replicated.
		raw, err := json.Marshal(&k)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(h), raw); err != nil {
			return err
		}
	}
	return nil
}

// Idem returns the idempotency record stored under key.
func (t Tx) Idem(key string) (IdemRecord, bool, error) {
	var ir IdemRecord
	ok, err := decodeJSON(t.Get(store.BucketIdempotency, []byte(key)), key, &ir)
	return ir, ok, err
}

// PutIdem stores ir under key.
func (t Tx) PutIdem(key string, ir *IdemRecord) error {
	return t.putJSON(store.BucketIdempotency, key, ir)
}

// HasRecord reports whether a record is stored under key, without decoding it.
func (t Tx) HasRecord(key string) bool {
	return t.Get(store.BucketRecords, []byte(key)) != nil
}
