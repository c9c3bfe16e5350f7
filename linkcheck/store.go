package linkcheck

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/internal/route"
	"pidnode/registry"
	"pidnode/store"
)

// The link check results' storage (docs/product.md §4.4): the checker's
// last result of every URL it checks, in store.BucketLinkcheck, a
// replicated bucket (registry.Replicated), so that in cluster mode the
// results one node's checker writes are every node's (docs/product.md §10).
// Keys:
//
//	<record storage key> 0x00 <url>                      → registry.LinkResult JSON
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
// store.Tx.Put, so they replicate with it rather than being derived on
// apply (a cluster node applies the bucket as it applies any replicated
// one). The result type and its states stay in registry, whose audit
// entries and feed name them.

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

// Results returns the results stored for the record key, in URL order.
func Results(tx *store.Tx, key string) ([]registry.LinkResult, error) {
	pre := linkKey(key, "")
	var out []registry.LinkResult
	c := bucket(tx).Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		var r registry.LinkResult
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("linkcheck: result %q: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// result returns the result of url of the record key.
func result(tx *store.Tx, key, url string) (registry.LinkResult, bool, error) {
	var r registry.LinkResult
	v := bucket(tx).Get(linkKey(key, url))
	if v == nil {
		return r, false, nil
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, false, fmt.Errorf("linkcheck: result %q %q: %w", key, url, err)
	}
	return r, true, nil
}

// PutResult stores r as the result of r.URL of the record key, whose
// previous result was old (nil if none), and keeps the namespace index,
// the due index and the broken counts in step.
func PutResult(tx *store.Tx, namer *handlev.Namer, key string, old, r *registry.LinkResult) error {
	nsp := namer.NamespaceOf([]byte(key))
	if err := unindex(tx, nsp, key, old); err != nil {
		return err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := tx.Put(store.BucketLinkcheck, linkKey(key, r.URL), raw); err != nil {
		return err
	}
	if r.Listed() && nsp != nil {
		if err := tx.Put(store.BucketLinkcheck, linkNSKey(nsp, key, r.URL), []byte(r.State)); err != nil {
			return err
		}
	}
	if r.State == registry.LinkBroken && nsp != nil {
		if err := addBroken(tx, nsp, 1); err != nil {
			return err
		}
	}
	if r.Due != nil {
		return tx.Put(store.BucketLinkcheck, linkDueKey(*r.Due, key, r.URL), []byte{})
	}
	return nil
}

// deleteResult removes the result old of the record key with its index
// entries.
func deleteResult(tx *store.Tx, namer *handlev.Namer, key string, old *registry.LinkResult) error {
	if err := unindex(tx, namer.NamespaceOf([]byte(key)), key, old); err != nil {
		return err
	}
	return tx.Delete(store.BucketLinkcheck, linkKey(key, old.URL))
}

// unindex removes the index entries of old (nil: none) of the record key
// of the namespace nsp.
func unindex(tx *store.Tx, nsp []byte, key string, old *registry.LinkResult) error {
	if old == nil {
		return nil
	}
	if old.Listed() && nsp != nil {
		if err := tx.Delete(store.BucketLinkcheck, linkNSKey(nsp, key, old.URL)); err != nil {
			return err
		}
	}
	if old.State == registry.LinkBroken && nsp != nil {
		if err := addBroken(tx, nsp, -1); err != nil {
			return err
		}
	}
	if old.Due != nil {
		return tx.Delete(store.BucketLinkcheck, linkDueKey(*old.Due, key, old.URL))
	}
	return nil
}

func addBroken(tx *store.Tx, nsp []byte, d int64) error {
	k := append([]byte{linkBrokenTag}, nsp...)
	var n uint64
	if v := bucket(tx).Get(k); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	if d < 0 && n == 0 {
		return nil
	}
	n = uint64(int64(n) + d)
	if n == 0 {
		return tx.Delete(store.BucketLinkcheck, k)
	}
	return tx.Put(store.BucketLinkcheck, k, binary.BigEndian.AppendUint64(nil, n))
}

// brokenCounts returns the number of broken URLs per namespace, keyed by
// namespace key prefix ("21.12345/SVC/NS/").
func brokenCounts(tx *store.Tx) map[string]uint64 {
	out := map[string]uint64{}
	c := bucket(tx).Cursor()
	pre := []byte{linkBrokenTag}
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		if len(v) == 8 {
			out[string(k[1:])] = binary.BigEndian.Uint64(v)
		}
	}
	return out
}

// keysBetween returns the record keys that have results and sort
// strictly between from and to ("" for to: the end), at most limit of them.
// The sweep drops the results of records that are gone with them.
func keysBetween(tx *store.Tx, from, to string, limit int) []string {
	var out []string
	c := bucket(tx).Cursor()
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

// dueLink is a URL due for an early recheck.
type dueLink struct {
	Key, URL string
	Due      time.Time
}

// dueLinks returns up to limit URLs whose recheck is due at or before now,
// earliest first.
func dueLinks(tx *store.Tx, now time.Time, limit int) []dueLink {
	var out []dueLink
	c := bucket(tx).Cursor()
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
		out = append(out, dueLink{Key: string(rest[:i]), URL: string(rest[i+1:]), Due: time.Unix(int64(at), 0).UTC()})
	}
	return out
}

// sweepCursor returns the record key the link checker's sweep reached, ""
// at the start of a lap.
func sweepCursor(tx *store.Tx) string {
	return string(bucket(tx).Get(linkCursorKey))
}

// setSweepCursor records the record key the sweep reached.
func setSweepCursor(tx *store.Tx, key string) error {
	if sweepCursor(tx) == key {
		return nil
	}
	return tx.Put(store.BucketLinkcheck, linkCursorKey, []byte(key))
}

// lapRecords returns the number of records the sweep's last complete
// lap passed, 0 if none is recorded.
func lapRecords(tx *store.Tx) int {
	v := bucket(tx).Get(linkLapKey)
	if len(v) != 8 {
		return 0
	}
	return int(min(binary.BigEndian.Uint64(v), 1<<40))
}

// setLapRecords records the number of records a complete lap passed.
func setLapRecords(tx *store.Tx, n int) error {
	if lapRecords(tx) == n {
		return nil
	}
	return tx.Put(store.BucketLinkcheck, linkLapKey, binary.BigEndian.AppendUint64(nil, uint64(max(n, 0))))
}

// StatesMsg is the refusal of a state filter States does not accept.
const StatesMsg = "must be one of broken, recovering, failing, all"

// States reads a listing's state filter: absent (given false), the states
// that need a curator's look (broken and recovering); "all", every state
// that is listed (nil); or one of broken, recovering and failing. ok is
// false for any other value (StatesMsg says which are accepted).
func States(state string, given bool) (states []string, ok bool) {
	if !given {
		return []string{registry.LinkBroken, registry.LinkRecovering}, true
	}
	switch s := strings.ToLower(state); s {
	case registry.LinkBroken, registry.LinkRecovering, registry.LinkFailing:
		return []string{s}, true
	case "all":
		return nil, true
	}
	return nil, false
}

// List returns a page of the results of namespace ns under prefix that are
// not ok, read in tx: at most limit of them in the states (nil: every
// listed state), from the opaque cursor on ("": the start), with the
// cursor of the next page (Page.NextCursor, "" at the end). A cursor no
// page gave is a *route.Error of 400. It is the one listing of the
// results: the API's route and the console's page both read it.
func List(tx *store.Tx, namer *handlev.Namer, prefix, ns string, states []string, cursor string, limit int) (Page, error) {
	from, ok := decodeLinkCursor(cursor)
	if !ok {
		return Page{}, route.Errorf(http.StatusBadRequest, "invalid cursor: use next_cursor of the previous page")
	}
	nsp, err := namer.NamespaceKey(prefix, ns)
	if err != nil {
		return Page{}, err
	}
	var page Page
	var next string
	page.Targets, next, err = namespaceResults(tx, nsp, states, from, limit)
	if err != nil {
		return Page{}, err
	}
	if next != "" {
		page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	return page, nil
}

// decodeLinkCursor reads a cursor of the listing ("" for the start).
func decodeLinkCursor(cur string) (string, bool) {
	if cur == "" {
		return "", true
	}
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}

// namespaceResults returns up to limit results of the namespace whose key
// prefix is nsp (NamespaceKey) that are not ok, in key order (identifier,
// then URL), whose state is one of states (every listed state if empty),
// from the position from on (a value of next; "" for the start). next is
// the position of the first result not returned, "" when there is none.
func namespaceResults(tx *store.Tx, nsp string, states []string, from string, limit int) (out []registry.LinkResult, next string, err error) {
	pre := append([]byte{linkNSTag}, nsp...)
	b := bucket(tx)
	c := b.Cursor()
	k, v := c.Seek(append(append([]byte{}, pre...), from...))
	out = []registry.LinkResult{}
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
		var r registry.LinkResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, "", fmt.Errorf("linkcheck: result %q: %w", rest, err)
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

func bucket(tx *store.Tx) *bbolt.Bucket { return tx.Bolt().Bucket(store.BucketLinkcheck) }
