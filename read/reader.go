package read

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// Config configures New. Every field but PublicURL is required.
type Config struct {
	DB       *store.DB
	Registry *registry.Registry
	Namer    *handlev.Namer
	Model    *model.Model
	// PublicURL is the resolver's base URL, for an Identifier's Links;
	// a trailing '/' is dropped.
	PublicURL string
}

// Reader reads identifiers for the API and the console. Safe for
// concurrent use.
type Reader struct {
	db     *store.DB
	reg    *registry.Registry
	namer  *handlev.Namer
	model  *model.Model
	public string
}

// New returns the Reader of cfg.
func New(cfg Config) (*Reader, error) {
	for _, f := range []struct {
		name    string
		missing bool
	}{{"DB", cfg.DB == nil}, {"Registry", cfg.Registry == nil}, {"Namer", cfg.Namer == nil}, {"Model", cfg.Model == nil}} {
		if f.missing {
			return nil, cfgerr.Required("read", f.name, ErrConfig)
		}
	}
	return &Reader{db: cfg.DB, reg: cfg.Registry, namer: cfg.Namer, model: cfg.Model, public: strings.TrimRight(cfg.PublicURL, "/")}, nil
}

// key is the storage key of identifier id in namespace ns under prefix, or
// ErrNotFound.
func (r *Reader) key(prefix, ns, id string) (key, display string, err error) {
	display = r.namer.Full(prefix, ns, id)
	key, _, err = r.namer.Key(display)
	if err != nil {
		return "", display, refuse(ErrNotFound, fmt.Sprintf("no identifier %s: %v", display, err))
	}
	return key, display, nil
}

// Get returns identifier id of namespace ns under prefix, or ErrNotFound.
func (r *Reader) Get(prefix, ns, id string) (*Identifier, error) {
	key, display, err := r.key(prefix, ns, id)
	if err != nil {
		return nil, err
	}
	st, ok, err := r.db.Get(key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refuse(ErrNotFound, "no identifier "+display)
	}
	return r.Identifier(&st), nil
}

// HistoryEntry is one change of an identifier, from the audit log: when, by
// which key (or which person), and the URL and metadata before and after.
type HistoryEntry struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Action  string    `json:"action"`
	KeyID   string    `json:"key_id,omitempty"`
	KeyName string    `json:"key_name,omitempty"`
	// Person is the e-mail address of the person whose session made the
	// change.
	Person string `json:"person,omitempty"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// History is an identifier's history: every audited write, oldest first
// (records imported offline have none until their first write through the
// API), and the record's own change log (value index 16), never nil.
type History struct {
	Handle    string
	Version   uint64
	Changes   []HistoryEntry
	ChangeLog []json.RawMessage
}

// History returns the history of identifier id of namespace ns under
// prefix, or ErrNotFound.
func (r *Reader) History(prefix, ns, id string) (*History, error) {
	key, display, err := r.key(prefix, ns, id)
	if err != nil {
		return nil, err
	}
	var (
		st      store.Stored
		ok      bool
		entries []registry.AuditEntry
	)
	err = r.reg.View(func(tx registry.Tx) error {
		var err error
		if st, ok, err = tx.Record(key); err != nil || !ok {
			return err
		}
		entries, err = tx.HandleAudit(key)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refuse(ErrNotFound, "no identifier "+display)
	}
	h := &History{Handle: st.Record.Handle, Version: st.Version, Changes: make([]HistoryEntry, len(entries))}
	for i, e := range entries {
		_, kid, _ := strings.Cut(e.Actor, " key:")
		h.Changes[i] = HistoryEntry{Seq: e.Seq, Time: e.Time, Action: e.Action, KeyID: kid, KeyName: e.KeyName, Person: e.Person, Before: e.Before, After: e.After}
	}
	h.ChangeLog = r.model.Extract(st.Record.Values).Changes
	if h.ChangeLog == nil {
		h.ChangeLog = []json.RawMessage{}
	}
	return h, nil
}

// ListQuery selects a page of a namespace.
type ListQuery struct {
	// Status, if set, keeps the identifiers whose status field has this
	// value (compared without case).
	Status string
	// URL, if set, walks the URL index instead of the namespace: exact,
	// or a prefix ending in '*'.
	URL string
	// Cursor is the NextCursor of the page before ("" for the first).
	Cursor string
	// Limit is the page's size; at least 1.
	Limit int
}

// List returns a page of namespace ns under prefix and the cursor of the
// next page ("" after the last). Without q.URL it walks the namespace's
// range of the records bucket; with q.URL the URL index, so neither reads
// records of other namespaces. q.Status filters what either walk finds. The
// cursor is the last key returned (record key or index key), opaque to the
// client and checked to lie inside the namespace (ErrBadCursor).
func (r *Reader) List(prefix, ns string, q ListQuery) (items []Identifier, next string, err error) {
	rng, err := r.reg.NamespaceRange(prefix, ns, q.URL)
	if err != nil {
		return nil, "", err
	}
	start := rng
	if q.Cursor != "" {
		c, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !bytes.HasPrefix(c, rng) {
			return nil, "", refuse(ErrBadCursor, "invalid cursor")
		}
		start = append(c, 0)
	}
	limit := max(q.Limit, 1)
	items = []Identifier{}
	err = r.reg.View(func(tx registry.Tx) error {
		return tx.ScanNamespace(q.URL != "", rng, start, func(k []byte, st *store.Stored) (bool, error) {
			if len(items) == limit {
				next = base64.RawURLEncoding.EncodeToString([]byte(items[len(items)-1].key))
				return false, nil
			}
			if st == nil {
				return true, nil
			}
			ident := r.Identifier(st)
			if q.Status != "" {
				if sv, _ := ident.Metadata["status"].(string); !strings.EqualFold(sv, q.Status) {
					return true, nil
				}
			}
			ident.key = string(k)
			items = append(items, *ident)
			return true, nil
		})
	})
	if err != nil {
		return nil, "", err
	}
	return items, next, nil
}

// StatusFilter checks a list's status filter (upper case; "" for none)
// against the model's status field, when that lists its values: a typo
// would otherwise list nothing and look like an empty namespace. It
// returns what is wrong with it ("must be one of …"), or "".
func (r *Reader) StatusFilter(status string) string {
	f := r.model.Field("status")
	if status == "" || f == nil || f.Schema == nil || len(f.Schema.Enum) == 0 {
		return ""
	}
	for _, v := range f.Schema.Enum {
		if strings.EqualFold(v, status) {
			return ""
		}
	}
	return "must be one of " + strings.Join(f.Schema.Enum, ", ")
}
