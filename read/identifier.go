package read

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"pidnode/internal/stdjson"
	"pidnode/model"
	"pidnode/store"
)

// Identifier is what an SNAA sees of one of its identifiers: the reply body
// of the API's SNAA routes (docs/product.md §4) and what the console shows.
type Identifier struct {
	Handle    string         `json:"handle"`
	Prefix    string         `json:"prefix"`
	Namespace string         `json:"namespace"`
	ID        string         `json:"id"`
	URL       string         `json:"url"`
	Metadata  map[string]any `json:"metadata"`
	Version   uint64         `json:"version"`
	Created   time.Time      `json:"created"`
	Updated   time.Time      `json:"updated"`
	Links     Links          `json:"links"`

	// MetaJSON, if not nil, is Metadata's JSON as AppendJSON writes it,
	// encoded before (a create encodes it for its audit entry too).
	MetaJSON []byte `json:"-"`

	key string // storage key, for list cursors
}

// Links are the resolver URLs of an identifier.
type Links struct {
	Resolve    string `json:"resolve"`
	API        string `json:"api"`
	NoRedirect string `json:"noredirect"`
}

// Identifier builds the view of a stored record.
func (r *Reader) Identifier(st *store.Stored) *Identifier {
	return r.IdentifierOf(st, r.model.Extract(st.Record.Values))
}

// IdentifierOf is Identifier with the record's content already extracted.
func (r *Reader) IdentifierOf(st *store.Stored, c model.Content) *Identifier {
	prefix, ns, id := SplitDisplay(st.Record.Handle)
	// The resolve link is the no-redirect one without its query.
	noRedirect := r.public + "/" + prefix + "/" + ns + "/" + id + "?noredirect"
	ident := &Identifier{
		Handle: st.Record.Handle, Prefix: prefix, Namespace: ns, ID: id, Metadata: c.Metadata,
		Version: st.Version, Created: st.Created.UTC().Truncate(time.Second), Updated: st.Updated.UTC().Truncate(time.Second),
		Links: Links{
			Resolve:    noRedirect[:len(noRedirect)-len("?noredirect")],
			API:        r.public + "/api/handles/" + st.Record.Handle,
			NoRedirect: noRedirect,
		},
	}
	if c.URL != nil {
		ident.URL = *c.URL
	}
	return ident
}

// AppendJSON appends ident's JSON as encoding/json writes it without HTML
// escaping (the members in Identifier's order, a newline after), without
// reflection, the costly part of encoding/json: every create and read
// reply is encoded here. ok is false for an Identifier stdjson cannot encode as encoding/json
// would (metadata of other Go types, a time outside RFC 3339): the caller
// then uses encoding/json.
func (ident *Identifier) AppendJSON(dst []byte) (_ []byte, ok bool) {
	dst = append(dst, `{"handle":`...)
	dst = stdjson.AppendString(dst, ident.Handle, false)
	dst = append(dst, `,"prefix":`...)
	dst = stdjson.AppendString(dst, ident.Prefix, false)
	dst = append(dst, `,"namespace":`...)
	dst = stdjson.AppendString(dst, ident.Namespace, false)
	dst = append(dst, `,"id":`...)
	dst = stdjson.AppendString(dst, ident.ID, false)
	dst = append(dst, `,"url":`...)
	dst = stdjson.AppendString(dst, ident.URL, false)
	dst = append(dst, `,"metadata":`...)
	if ident.MetaJSON != nil {
		dst = append(dst, ident.MetaJSON...)
	} else if dst, ok = stdjson.AppendObject(dst, ident.Metadata, false); !ok {
		return dst, false
	}
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendUint(dst, ident.Version, 10)
	dst = append(dst, `,"created":`...)
	if dst, ok = stdjson.AppendTime(dst, ident.Created); !ok {
		return dst, false
	}
	dst = append(dst, `,"updated":`...)
	if dst, ok = stdjson.AppendTime(dst, ident.Updated); !ok {
		return dst, false
	}
	dst = append(dst, `,"links":{"resolve":`...)
	dst = stdjson.AppendString(dst, ident.Links.Resolve, false)
	dst = append(dst, `,"api":`...)
	dst = stdjson.AppendString(dst, ident.Links.API, false)
	dst = append(dst, `,"noredirect":`...)
	dst = stdjson.AppendString(dst, ident.Links.NoRedirect, false)
	return append(dst, "}}\n"...), true
}

// SplitDisplay cuts "<PREFIX>/<svc>/<NS>/<ID>" into its parts (the ID may
// hold '/'); "<PREFIX>/<NS>/<ID>" too.
func SplitDisplay(h string) (prefix, ns, id string) {
	i := strings.IndexByte(h, '/')
	if i < 0 {
		return h, "", ""
	}
	rest := h[i+1:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return h, "", ""
	}
	last := rest[j+1:]
	if k := strings.IndexByte(last, '/'); k >= 0 {
		return h[:i], last[:k], last[k+1:]
	}
	return h[:i], rest[:j], last
}

// Plain returns a copy of ident with its metadata passed through Plain (and
// no MetaJSON).
func (ident *Identifier) Plain() *Identifier {
	out := *ident
	out.MetaJSON = nil
	out.Metadata, _ = Plain(ident.Metadata).(map[string]any)
	return &out
}

// Plain returns v with every json.Number (as model.Extract gives numbers)
// replaced by its float64, in maps and slices at any depth: the values a
// JSON round trip of the API's reply gives, so that a page rendering them
// shows what it showed of the reply. Maps and slices holding a number are
// copied; v itself is not changed.
func Plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return string(x)
		}
		return f
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Plain(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	}
	return v
}
