package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"pidnode/store"
)

// Link check results (docs/product.md §4.4): the link checker's last result
// of every URL it checks, in store.BucketLinkcheck, a replicated bucket, so
// that in cluster mode the results one node's checker writes are every
// node's (docs/product.md §10). Keys:
//
//	<record storage key> 0x00 <url>                      → LinkResult JSON
//	0xFE <namespace key prefix> <storage key> 0x00 <url> → state (failing, broken, recovering)
//	0xFD <due unix seconds, 8 bytes> <storage key> 0x00 <url> → empty
//	0xFC <namespace key prefix>                          → broken count, uint64 big-endian
//	0xFF "cursor"                                        → storage key the sweep reached
//	0xFF "lap"                                           → records the last lap passed, uint64
//
// Storage keys are UTF-8 and never start with a byte above 0xF4, so the
// index keys never mix with results. The namespace index holds only the
// results that are not ok, so a namespace's listing reads its problems and
// not its every URL; the due index schedules the early rechecks of failing
// and recovering URLs; the broken counts serve the metric without a scan.
// All of them are written with the result in one transaction through
// store.Tx.Put, so they replicate with it rather than being derived on apply.

// Link check states.
const (
	LinkOK         = "ok"
	LinkFailing    = "failing"
	LinkBroken     = "broken"
	LinkRecovering = "recovering"
)

// Audit actions and actor of the link checker's state changes, which the
// namespace's change feed shows (docs/product.md §4.3).
const (
	ActLinkBroken    = "linkcheck.broken"
	ActLinkRecovered = "linkcheck.recovered"
	ActorLinkcheck   = "linkcheck"
)

// LinkResult is the last check of one URL of an identifier.
type LinkResult struct {
	Handle string `json:"handle"`
	URL    string `json:"url"`
	// Kind is "target" (the landing page) or "variant" (a representation
	// variant's URL).
	Kind  string `json:"kind"`
	State string `json:"state"`
	// Status is the final HTTP status (after redirects), 0 if none came.
	Status   int    `json:"status,omitempty"`
	FinalURL string `json:"final_url,omitempty"`
	// Error is the failure's class: dns, connect, tls, timeout, denied,
	// redirects, scheme, http (a status other than 2xx) or other.
	Error      string    `json:"error,omitempty"`
	Checked    time.Time `json:"checked"`
	DurationMS int64     `json:"duration_ms"`
	// Since is when the URL entered State.
	Since        time.Time  `json:"since"`
	FirstFailure *time.Time `json:"first_failure,omitempty"`
	Failures     int        `json:"failures"`
	// Due, if set, is when the URL is checked again ahead of the sweep.
	Due *time.Time `json:"due,omitempty"`
}

// LinkCheck is what an audit entry of a link check's state change (and so
// the change feed) shows of the check, before and after: the result
// without its handle, URL and bookkeeping.
type LinkCheck struct {
	State        string     `json:"state"`
	Kind         string     `json:"kind,omitempty"`
	Status       int        `json:"status,omitempty"`
	Error        string     `json:"error,omitempty"`
	FinalURL     string     `json:"final_url,omitempty"`
	Checked      time.Time  `json:"checked"`
	Failures     int        `json:"failures"`
	FirstFailure *time.Time `json:"first_failure,omitempty"`
}

// Check is the result as an audit entry shows it.
func (r *LinkResult) Check() LinkCheck {
	return LinkCheck{State: r.State, Kind: r.Kind, Status: r.Status, Error: r.Error, FinalURL: r.FinalURL,
		Checked: r.Checked, Failures: r.Failures, FirstFailure: r.FirstFailure}
}

// Listed reports whether the result is in its namespace's listing.
func (r *LinkResult) Listed() bool { return r.State != LinkOK && r.State != "" }

const (
	linkNSTag     = 0xFE
	linkDueTag    = 0xFD
	linkBrokenTag = 0xFC
)

var (
	linkCursorKey = []byte("\xffcursor")
	linkLapKey    = []byte("\xfflap")
)

func linkKey(key, url string) []byte {
	k := make([]byte, 0, len(key)+1+len(url))
	k = append(k, key...)
	k = append(k, 0)
	return append(k, url...)
}

func linkNSKey(nsp []byte, key, url string) []byte {
	return append(append([]byte{linkNSTag}, nsp...), linkKey(key, url)...)
}

func linkDueKey(due time.Time, key, url string) []byte {
	k := binary.BigEndian.AppendUint64([]byte{linkDueTag}, uint64(max(due.Unix(), 0)))
	return append(k, linkKey(key, url)...)
}

// LinkResults returns the results stored for the record key, in URL order.
func (t Tx) LinkResults(key string) ([]LinkResult, error) {
	pre := linkKey(key, "")
	var out []LinkResult
	c := t.bucket(store.BucketLinkcheck).Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		var r LinkResult
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("registry: link result %q: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// LinkResult returns the result of url of the record key.
func (t Tx) LinkResult(key, url string) (LinkResult, bool, error) {
	var r LinkResult
	v := t.bucket(store.BucketLinkcheck).Get(linkKey(key, url))
	if v == nil {
		return r, false, nil
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, false, fmt.Errorf("registry: link result %q %q: %w", key, url, err)
	}
	return r, true, nil
}

// PutLinkResult stores r as the result of r.URL of the record key, whose
// previous result was old (nil if none), and keeps the namespace index,
// the due index and the broken counts in step.
func (t Tx) PutLinkResult(key string, old, r *LinkResult) error {
	if err := t.unindexLink(key, old); err != nil {
		return err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := t.Put(store.BucketLinkcheck, linkKey(key, r.URL), raw); err != nil {
		return err
	}
	nsp := t.r.namer.NamespaceOf([]byte(key))
	if r.Listed() && nsp != nil {
		if err := t.Put(store.BucketLinkcheck, linkNSKey(nsp, key, r.URL), []byte(r.State)); err != nil {
			return err
		}
	}
	if r.State == LinkBroken && nsp != nil {
		if err := t.addBroken(nsp, 1); err != nil {
			return err
		}
	}
	if r.Due != nil {
		return t.Put(store.BucketLinkcheck, linkDueKey(*r.Due, key, r.URL), []byte{})
	}
	return nil
}

// DeleteLinkResult removes the result old of the record key with its index
// entries.
func (t Tx) DeleteLinkResult(key string, old *LinkResult) error {
	if err := t.unindexLink(key, old); err != nil {
		return err
	}
	return t.Delete(store.BucketLinkcheck, linkKey(key, old.URL))
}

// unindexLink removes the index entries of old (nil: none).
func (t Tx) unindexLink(key string, old *LinkResult) error {
	if old == nil {
		return nil
	}
	nsp := t.r.namer.NamespaceOf([]byte(key))
	if old.Listed() && nsp != nil {
		if err := t.Delete(store.BucketLinkcheck, linkNSKey(nsp, key, old.URL)); err != nil {
			return err
		}
	}
	if old.State == LinkBroken && nsp != nil {
		if err := t.addBroken(nsp, -1); err != nil {
			return err
		}
	}
	if old.Due != nil {
		return t.Delete(store.BucketLinkcheck, linkDueKey(*old.Due, key, old.URL))
	}
	return nil
}

func (t Tx) addBroken(nsp []byte, d int64) error {
	k := append([]byte{linkBrokenTag}, nsp...)
	var n uint64
	if v := t.bucket(store.BucketLinkcheck).Get(k); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	if d < 0 && n == 0 {
		return nil
	}
	n = uint64(int64(n) + d)
	if n == 0 {
		return t.Delete(store.BucketLinkcheck, k)
	}
	return t.Put(store.BucketLinkcheck, k, binary.BigEndian.AppendUint64(nil, n))
}

// BrokenLinks returns the number of broken URLs per namespace, keyed by
// namespace key prefix ("21.12345/SVC/NS/").
func (t Tx) BrokenLinks() map[string]uint64 {
	out := map[string]uint64{}
	c := t.bucket(store.BucketLinkcheck).Cursor()
	pre := []byte{linkBrokenTag}
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		if len(v) == 8 {
			out[string(k[1:])] = binary.BigEndian.Uint64(v)
		}
	}
	return out
}

// LinkKeysBetween returns the record keys that have results and sort
// strictly between from and to ("" for to: the end), at most limit of them.
// The sweep drops the results of records that are gone with them.
func (t Tx) LinkKeysBetween(from, to string, limit int) []string {
	var out []string
	c := t.bucket(store.BucketLinkcheck).Cursor()
	// Past every result of from: from 0x01 sorts after from 0x00 <url>.
	start := append([]byte(from), 1)
	if from == "" {
		start = nil
	}
	k, _ := c.Seek(start)
	for k != nil && k[0] < 0xF5 && len(out) < limit {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = c.Next()
			continue
		}
		rk := string(k[:i])
		if to != "" && rk >= to {
			break
		}
		if rk > from {
			out = append(out, rk)
		}
		k, _ = c.Seek(append([]byte(rk), 1)) // past rk's other URLs
	}
	return out
}

// DueLink is a URL due for an early recheck.
type DueLink struct {
	Key, URL string
	Due      time.Time
}

// DueLinks returns up to limit URLs whose recheck is due at or before now,
// earliest first.
func (t Tx) DueLinks(now time.Time, limit int) []DueLink {
	var out []DueLink
	c := t.bucket(store.BucketLinkcheck).Cursor()
	end := uint64(max(now.Unix(), 0))
	for k, _ := c.Seek([]byte{linkDueTag}); k != nil && k[0] == linkDueTag && len(out) < limit; k, _ = c.Next() {
		if len(k) < 9 {
			continue
		}
		at := binary.BigEndian.Uint64(k[1:9])
		if at > end {
			break
		}
		rest := k[9:]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			continue
		}
		out = append(out, DueLink{Key: string(rest[:i]), URL: string(rest[i+1:]), Due: time.Unix(int64(at), 0).UTC()})
	}
	return out
}

// LinkCursor returns the record key the link checker's sweep reached, ""
// at the start of a lap.
func (t Tx) LinkCursor() string {
	return string(t.bucket(store.BucketLinkcheck).Get(linkCursorKey))
}

// SetLinkCursor records the record key the sweep reached.
func (t Tx) SetLinkCursor(key string) error {
	if t.LinkCursor() == key {
		return nil
	}
	return t.Put(store.BucketLinkcheck, linkCursorKey, []byte(key))
}

// LinkLapRecords returns the number of records the sweep's last complete
// lap passed, 0 if none is recorded.
func (t Tx) LinkLapRecords() int {
	v := t.bucket(store.BucketLinkcheck).Get(linkLapKey)
	if len(v) != 8 {
		return 0
	}
	return int(min(binary.BigEndian.Uint64(v), 1<<40))
}

// SetLinkLapRecords records the number of records a complete lap passed.
func (t Tx) SetLinkLapRecords(n int) error {
	if t.LinkLapRecords() == n {
		return nil
	}
	return t.Put(store.BucketLinkcheck, linkLapKey, binary.BigEndian.AppendUint64(nil, uint64(max(n, 0))))
}

// NamespaceLinks returns up to limit results of the namespace whose key
// prefix is nsp (NamespaceKey) that are not ok, in key order (identifier,
// then URL), whose state is one of states (every listed state if empty),
// from the position from on (a value of next; "" for the start). next is
// the position of the first result not returned, "" when there is none.
func (t Tx) NamespaceLinks(nsp string, states []string, from string, limit int) (out []LinkResult, next string, err error) {
	pre := append([]byte{linkNSTag}, nsp...)
	b := t.bucket(store.BucketLinkcheck)
	c := b.Cursor()
	k, v := c.Seek(append(append([]byte{}, pre...), from...))
	out = []LinkResult{}
	for ; k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		if len(states) > 0 && !hasState(states, string(v)) {
			continue
		}
		if len(out) == limit {
			return out, string(k[len(pre):]), nil
		}
		rest := k[len(pre):]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			continue
		}
		raw := b.Get(rest)
		if raw == nil {
			continue
		}
		var r LinkResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, "", fmt.Errorf("registry: link result %q: %w", rest, err)
		}
		out = append(out, r)
	}
	return out, "", nil
}

func hasState(states []string, s string) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}

// NamespaceOf returns the namespace key prefix of the storage key
// ("21.12345/SVC/NS/"), "" if the key is not of a namespace (not full form
// under the production or test prefix).
func (r *Registry) NamespaceOf(key string) string {
	return string(r.namer.NamespaceOf([]byte(key)))
}
