package registry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/store"
)

// The search index (store.BucketSearch) answers the SNAA list's search
// (words of the id, label, URL and description), its status filter, its
// sort orders (id, label, created, changed) and its totals without reading
// the records (docs/product.md §4). It covers the records the URL index
// covers and is maintained in the same places, by Tx.IndexRecord in the
// write transaction of every record change (the write service, a cluster
// node's ApplyPut) and rebuilt with it (Reindex, EnsureIndexes,
// IndexNamespace); the write transaction leaves the word entries to
// MergeSearch (searchmerge.go), the record pending until then. The label and description are those of the record's
// RESOURCE value, read as the fronts read them (handlev.ReadResource;
// docs/metadata-model.md "What the fronts read"), the status its first
// STATUS value.
//
// Keys, under the namespace key prefix nsp (as the URL index's) and a 0x00,
// where did is the record's docID (appendDocID: created time, 8 bytes
// big-endian, then the id, the storage key after nsp):
//
//	nsp 0 'w' word 0 [did] → dids the records having the word, in blocks
//	                              (searchwords.go): every distinct word of
//	                              a record but those its id starts with
//	                              (idCovers); between merges, a superset
//	                              (searchmerge.go)
//	nsp 0 'p' did → flags words   the record is pending: its words under 'w'
//	                              are those listed, not yet its own; for a
//	                              create, its 'l' entry is not filed either
//	nsp 0 'f' did → doc           what the record filed (encodeDoc), so that
//	                              a change removes exactly the old entries
//	                              and a search checks and sorts its matches
//	                              without reading records; in key order,
//	                              the records by creation (SortCreated)
//	nsp 0 's' 'l' label 0 id 0 created   the label order (lower case, at
//	                              most maxSortLabel bytes)
//	nsp 0 's' 'u' updated id 0 created   the changed order
//	nsp 0 'n' → count             records filed in the namespace, 8 bytes
//	                              big-endian
//	nsp 0 'm' STATUS → count      those of that status
//
// A create's forward, pending and changed-order entries are the last of
// their ranges, so the creates of one commit share those pages.
// searchLayout, the value of the index's marker,
// names this layout.
//
// Costs, for a namespace of N records and a page of S at page P:
//   - a listing without words or status walks one sort order's keys:
//     O(P·S) cursor steps, S records read; the total is one Get;
//   - a status filter without words walks a sort order and reads the
//     forward entries until the page is full: O(P·S / share of that status)
//     (in id order each record read is decoded for its created time); its
//     total is one Get;
//   - a search reads the forward entries of the records having a word that
//     starts with the query's longest word (m of them: the word's entries
//     and the records whose id starts with it), checks the other words
//     against them and sorts the matches: O(m log m), whatever the page;
//     the pending records (a few merge intervals' creates) are checked
//     the same way; more than MaxSearchMatches candidates are refused
//     (ErrSearchTooBroad) rather than scanned.
//
// urlIndexMarker, under no namespace, says the index is complete;
// pendingNSPrefix nsp, that the namespace may have pending records.

// MaxSearchMatches bounds the records a search reads (see above).
const MaxSearchMatches = 100000

// maxWords bounds the distinct words filed per record (the id's, label's
// and URL's come first); maxWordBytes the bytes of a word filed (a longer
// query word is cut the same way, so it still matches by prefix);
// maxSortLabel the label's sort value.
const (
	maxWords     = 1000
	maxWordBytes = 32
	maxSortLabel = 64
)

// ErrSearchTooBroad: a search's words match more than MaxSearchMatches
// records.
var ErrSearchTooBroad = errors.New("registry: search too broad")

// Sort orders of SearchQuery.
const (
	SortID      byte = 'i'
	SortLabel   byte = 'l'
	SortCreated byte = 'c'
	SortChanged byte = 'u'
)

// searchDoc is what one record files in the index.
type searchDoc struct {
	label            []byte // sort value: lower case, no NUL, at most maxSortLabel bytes
	status           string
	created, updated uint64
	words            []string // sorted, distinct
}

// SearchWords splits text into the index's words: maximal runs of letters
// and digits, lower case, each cut to maxWordBytes, distinct, in order of
// first appearance, at most maxWords.
func SearchWords(text ...string) []string {
	// The words are cut from one string holding them all, lower case,
	// one after another: one allocation for all of them.
	var buf []byte
	var ends []int
	var seen map[string]bool // past a few words; until then a scan
	isNew := func(start int) bool {
		w := buf[start:]
		if seen == nil && len(ends) < 32 {
			from := 0
			for _, e := range ends {
				if string(buf[from:e]) == string(w) {
					return false
				}
				from = e
			}
			return true
		}
		if seen == nil {
			seen = make(map[string]bool, 2*len(ends))
			from := 0
			for _, e := range ends {
				seen[string(buf[from:e])] = true
				from = e
			}
		}
		if seen[string(w)] {
			return false
		}
		seen[string(w)] = true
		return true
	}
	for _, s := range text {
		for i := 0; i < len(s) && len(ends) < maxWords; {
			c := s[i]
			if c < utf8.RuneSelf {
				if !isAlnumASCII(c) {
					i++
					continue
				}
			} else if r, n := utf8.DecodeRuneInString(s[i:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				i += n
				continue
			}
			start := len(buf)
			for i < len(s) {
				c := s[i]
				if c < utf8.RuneSelf {
					if !isAlnumASCII(c) {
						break
					}
					if 'A' <= c && c <= 'Z' {
						c += 'a' - 'A'
					}
					buf = append(buf, c)
					i++
					continue
				}
				r, n := utf8.DecodeRuneInString(s[i:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
				i += n
			}
			buf = buf[:start+len(cutWord(string(buf[start:])))]
			if isNew(start) {
				ends = append(ends, len(buf))
			} else {
				buf = buf[:start]
			}
		}
	}
	if len(ends) == 0 {
		return nil
	}
	all := string(buf)
	out := make([]string, len(ends))
	from := 0
	for i, e := range ends {
		out[i], from = all[from:e], e
	}
	return out
}

func isAlnumASCII(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// RecordText returns what the search index files of a record besides its
// id and URL: the label and description of its first RESOURCE value
// (handlev.ReadResource, as the fronts read them) and its status, the
// first STATUS value in upper case. The slices point into st.
func RecordText(st *store.Stored) (label, description []byte, status string) {
	res, stat := false, false
	for i := range st.Record.Values {
		v := &st.Record.Values[i]
		switch {
		case !res && strings.EqualFold(v.Type, "RESOURCE"):
			r, _, _ := handlev.ReadResource(v.Data, nil)
			label, description, res = r.Label, r.Description, true
		case !stat && strings.EqualFold(v.Type, handlev.TypeStatus):
			status, stat = strings.ToUpper(string(v.Data)), true
		}
	}
	return label, description, status
}

// cutWord cuts w to maxWordBytes on a rune boundary.
func cutWord(w string) string {
	if len(w) <= maxWordBytes {
		return w
	}
	n := maxWordBytes
	for n > 0 && !utf8.RuneStart(w[n]) {
		n--
	}
	return w[:n]
}

// docOf is what the record st stored under key (in a namespace of key
// prefix nsp) files.
func (r *Registry) docOf(nsp []byte, key string, st *store.Stored) searchDoc {
	d := searchDoc{created: sortTime(st.Created.UnixNano()), updated: sortTime(st.Updated.UnixNano())}
	label, desc, status := RecordText(st)
	d.status = strings.ReplaceAll(status, "\x00", "")
	lab := bytes.ReplaceAll(bytes.ToLower(label), []byte{0}, nil)
	if len(lab) > maxSortLabel {
		lab = []byte(cutWordBytes(lab, maxSortLabel))
	}
	d.label = lab
	// The id as written (its words) and as stored (one word, as the namer
	// normalises it), so that the id typed either way is found.
	id := key[len(nsp):]
	if _, _, did, form := r.namer.Split([]byte(st.Record.Handle)); form == handlev.FormFull {
		id = string(did) + " " + id
	}
	// The URL's scheme is a word of nearly every record: filing it would
	// cost every write a page and find everything.
	u := r.urlOf(st)
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	}
	d.words = SearchWords(id, string(label), u, string(desc))
	slices.Sort(d.words)
	return d
}

func cutWordBytes(b []byte, n int) string {
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n])
}

// sortTime maps a Unix time in nanoseconds to a value whose big-endian
// bytes sort as the times do.
func sortTime(ns int64) uint64 { return uint64(ns) ^ 1<<63 }

// encodeDoc and decodeDoc are the forward entry's format: the label and the
// status as uvarint-length-prefixed bytes, created and updated as 8 bytes,
// then each word length-prefixed.
func encodeDoc(d *searchDoc) []byte {
	b := binary.AppendUvarint(nil, uint64(len(d.label)))
	b = append(b, d.label...)
	b = binary.AppendUvarint(b, uint64(len(d.status)))
	b = append(b, d.status...)
	b = binary.BigEndian.AppendUint64(b, d.created)
	b = binary.BigEndian.AppendUint64(b, d.updated)
	return encodeWords(b, d.words)
}

// encodeWords appends each word, length-prefixed (the forward entry's tail,
// a pending entry's value).
func encodeWords(b []byte, words []string) []byte {
	for _, w := range words {
		b = binary.AppendUvarint(b, uint64(len(w)))
		b = append(b, w...)
	}
	return b
}

// nextWord splits the first word off b (encodeWords); ok is false if b is
// empty or malformed.
func nextWord(b []byte) (w, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// splitWords appends the words of b (encodeWords) to out, as slices of b;
// ok is false if b is malformed (out then holds the words before).
func splitWords(out [][]byte, b []byte) ([][]byte, bool) {
	for len(b) > 0 {
		w, rest, ok := nextWord(b)
		if !ok {
			return out, false
		}
		out, b = append(out, w), rest
	}
	return out, true
}

// decodeWords is encodeWords' inverse; nil if b is malformed.
func decodeWords(b []byte) []string {
	var out []string
	for len(b) > 0 {
		w, rest, ok := nextWord(b)
		if !ok {
			return nil
		}
		out, b = append(out, string(w)), rest
	}
	return out
}

func decodeDoc(b []byte) (searchDoc, bool) {
	var d searchDoc
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, true
	}
	lab, ok := next()
	if !ok {
		return d, false
	}
	st, ok := next()
	if !ok || len(b) < 16 {
		return d, false
	}
	d.label, d.status = append([]byte(nil), lab...), string(st)
	d.created, d.updated = binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
	if b = b[16:]; len(b) > 0 {
		if d.words = decodeWords(b); d.words == nil {
			return d, false
		}
	}
	return d, true
}

// docID is the record's name in the index: its created time (8 bytes,
// sortTime) then its id (the storage key after the namespace prefix).
// Entries end in it, so that a create's entries of a word, or of the
// forward range, are the last of their range: the creates of one commit
// share those pages instead of each writing pages of its own.
func appendDocID(b []byte, created uint64, id string) []byte {
	b = binary.BigEndian.AppendUint64(b, created)
	return append(b, id...)
}

// appendEntry appends nsp 0 kind value to b.
func appendEntry(b, nsp []byte, kind byte, value ...[]byte) []byte {
	b = append(b, nsp...)
	b = append(b, 0, kind)
	for _, v := range value {
		b = append(b, v...)
	}
	return b
}

// entries are the sort entries d files for the record of id (the key after
// nsp), in one allocation. The word entries and the forward entry are not
// among them.
func (d *searchDoc) entries(nsp []byte, id string) [][]byte {
	n := len(d.label) + 2*len(id) + 2*(len(nsp)+20)
	buf := make([]byte, 0, n)
	out := make([][]byte, 0, 2)
	add := func(b []byte) {
		out = append(out, b[len(buf):len(b):len(b)])
		buf = b
	}
	add(appendLabelKey(buf, nsp, d.label, []byte(id), d.created))
	// nsp 0 's' 'u' updated id 0 created
	b := binary.BigEndian.AppendUint64(appendEntry(buf, nsp, 's', []byte{SortChanged}), d.updated)
	b = append(append(b, id...), 0)
	add(binary.BigEndian.AppendUint64(b, d.created))
	return out
}

// appendLabelKey appends the label order entry of the record id created at
// created (sortTime) with sort label label: nsp 0 's' 'l' label 0 id 0
// created.
func appendLabelKey(b, nsp, label, id []byte, created uint64) []byte {
	b = appendEntry(b, nsp, 's', []byte{SortLabel}, label, []byte{0}, id, []byte{0})
	return binary.BigEndian.AppendUint64(b, created)
}

// filedWords are the words of d the record of id files under 'w': all but
// those its id covers (idCovers), sorted.
func (d *searchDoc) filedWords(id string) []string {
	out := make([]string, 0, len(d.words))
	for _, w := range d.words {
		if !idCovers(id, w) {
			out = append(out, w)
		}
	}
	return out
}

// idCovers reports whether the id (as stored, upper case) starts with w in
// upper case: then the records bucket's keys find the record by w (Search
// seeks them), and w is not filed. The id's first word and its stored
// form, one random page each, are such words.
func idCovers(id, w string) bool {
	if len(w) > len(id) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if upperASCII(w[i]) != id[i] {
			return false
		}
	}
	return true
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// forwardKey is nsp 0 'f' docID: the forward entries in key order are the
// records in order of creation (the SortCreated order).
func forwardKey(nsp []byte, created uint64, id string) []byte {
	return appendDocID(appendEntry(make([]byte, 0, len(nsp)+10+len(id)), nsp, 'f'), created, id)
}

// pendingKey is nsp 0 'p' docID: the record's words are not all filed
// (MergeSearch). Its value (encodePending): flags (pendingLabel), then the
// words that are filed (encodeWords).
func pendingKey(nsp, did []byte) []byte {
	return append(appendEntry(make([]byte, 0, len(nsp)+2+len(did)), nsp, 'p'), did...)
}

// pendingLabel, a pending entry's flag: the record's label order entry is
// not filed either (a create's: MergeSearch files it).
const pendingLabel byte = 1

func encodePending(flags byte, filed []string) []byte { return encodeWords([]byte{flags}, filed) }

// decodePending is encodePending's inverse (an empty value: no flags, no
// words).
func decodePending(v []byte) (flags byte, filed []string) {
	if len(v) == 0 {
		return 0, nil
	}
	return v[0], decodeWords(v[1:])
}

// pendingNSPrefix, then a namespace key prefix: that namespace may have
// pending records. Under no namespace, as urlIndexMarker.
var pendingNSPrefix = []byte("\x00pending\x00")

func pendingNSKey(nsp []byte) []byte { return append(slices.Clip(pendingNSPrefix), nsp...) }

// docIDOf returns the docID at the end of index entry k of namespace nsp
// (an 'f', 'p' or 's' entry), nil if k is none.
func docIDOf(nsp, k []byte) []byte {
	if len(k) < len(nsp)+2 {
		return nil
	}
	rest := k[len(nsp)+2:]
	switch k[len(nsp)+1] {
	case 'f', 'p':
		return rest
	case 's':
		// label 0 id 0 created, or updated id 0 created
		if len(rest) < 1+8+1+8 {
			return nil
		}
		var id []byte
		if rest[0] == SortLabel {
			i := bytes.IndexByte(rest, 0)
			id = rest[i+1 : len(rest)-9]
		} else {
			id = rest[1+8 : len(rest)-9]
		}
		return appendDocID(nil, binary.BigEndian.Uint64(rest[len(rest)-8:]), string(id))
	}
	return nil
}

// countKey is the key of the namespace's total (status "") or of its
// total of one status.
func countKey(nsp []byte, status string) []byte {
	if status == "" {
		return appendEntry(nil, nsp, 'n')
	}
	return appendEntry(nil, nsp, 'm', []byte(status))
}

// countValue is a count's value: 8 bytes big-endian.
func countValue(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func addCount(t Tx, k []byte, delta int64) error {
	var n uint64
	if v := t.Get(store.BucketSearch, k); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n = uint64(int64(n) + delta)
	if n == 0 || int64(n) < 0 {
		return t.PutDerived(store.BucketSearch, k, nil)
	}
	return t.PutDerived(store.BucketSearch, k, countValue(n))
}

// addStatusCount counts a record of status in or out (a record without a
// status is in the total only).
func addStatusCount(t Tx, nsp []byte, status string, delta int64) error {
	if status == "" {
		return nil
	}
	return addCount(t, countKey(nsp, status), delta)
}

// searchNamespace returns the namespace key prefix under which the record
// of key files its search entries, nil if it files none.
func (r *Registry) searchNamespace(key string) []byte {
	nsp := r.namer.NamespaceOf([]byte(key))
	if nsp == nil || strings.IndexByte(key, 0) >= 0 {
		return nil
	}
	return nsp
}

// searchEntries emits every search entry the record st stored under key
// files, as indexSearch files them for a new record, and adds it to the
// counts (key → count) its namespace's totals are to hold.
func (r *Registry) searchEntries(key string, st *store.Stored, counts map[string]uint64, emit func(k, v []byte) error) error {
	nsp := r.searchNamespace(key)
	if nsp == nil {
		return nil
	}
	id := key[len(nsp):]
	d := r.docOf(nsp, key, st)
	for _, e := range d.entries(nsp, id) {
		if err := emit(e, []byte{}); err != nil {
			return err
		}
	}
	// One entry per word, which the rebuild files in blocks (wordGroup).
	did := appendDocID(nil, d.created, id)
	for _, w := range d.filedWords(id) {
		if err := emit(append(wordPrefix(nsp, []byte(w)), did...), appendBlockDoc(nil, did)); err != nil {
			return err
		}
	}
	if err := emit(forwardKey(nsp, d.created, id), encodeDoc(&d)); err != nil {
		return err
	}
	counts[string(countKey(nsp, ""))]++
	if d.status != "" {
		counts[string(countKey(nsp, d.status))]++
	}
	return nil
}

// indexSearch files st (nil: the record is gone) under key, replacing what
// the record filed before, its words included: the forward entry under
// old's created time (old is the record as it was, nil if it was not there;
// a record's created time never changes). The rebuilds call it.
func (t Tx) indexSearch(key string, old, st *store.Stored) error {
	return t.fileSearch(key, old, st, false)
}

// fileSearch is indexSearch leaving the word entries to MergeSearch if
// deferWords (the record pending until then).
func (t Tx) fileSearch(key string, old, st *store.Stored, deferWords bool) error {
	nsp := t.r.searchNamespace(key)
	if nsp == nil {
		return nil
	}
	id := key[len(nsp):]
	// Through Get and PutDerived: a cluster node rehearses a write on a
	// read transaction with its writes in memory (store.DB.Rehearse).
	var oldFK []byte
	var oldDoc *searchDoc
	if old != nil {
		oldFK = forwardKey(nsp, sortTime(old.Created.UnixNano()), id)
		if v := t.Get(store.BucketSearch, oldFK); v != nil {
			if d, ok := decodeDoc(v); ok {
				oldDoc = &d
			}
		}
	}
	var newDoc *searchDoc
	var newFK []byte
	if st != nil {
		d := t.r.docOf(nsp, key, st)
		newDoc = &d
		newFK = forwardKey(nsp, d.created, id)
	}
	var prev, cur [][]byte
	if oldDoc != nil {
		prev = oldDoc.entries(nsp, id)
	}
	// A new record's label order entry lands anywhere in the order, a
	// page of its own: deferred with its words.
	var labelKey []byte
	labelLater := false
	if newDoc != nil {
		cur = newDoc.entries(nsp, id)
		labelKey = cur[0]
		if labelLater = deferWords && (oldDoc == nil || !bytes.Equal(oldFK, newFK)); labelLater {
			cur = cur[1:]
		}
	}
	if err := t.putDiff(prev, cur); err != nil {
		return err
	}
	if err := t.fileWords(nsp, id, old, oldDoc, newDoc, deferWords, labelLater, labelKey); err != nil {
		return err
	}
	var total int64
	var oldStatus, newStatus string
	if oldDoc != nil {
		total--
		oldStatus = oldDoc.status
		if newDoc == nil || !bytes.Equal(oldFK, newFK) {
			if err := t.PutDerived(store.BucketSearch, oldFK, nil); err != nil {
				return err
			}
		}
	}
	if newDoc != nil {
		total++
		newStatus = newDoc.status
	}
	if total != 0 {
		if err := addCount(t, countKey(nsp, ""), total); err != nil {
			return err
		}
	}
	if oldStatus != newStatus || oldDoc == nil || newDoc == nil {
		if oldDoc != nil {
			if err := addStatusCount(t, nsp, oldStatus, -1); err != nil {
				return err
			}
		}
		if newDoc != nil {
			if err := addStatusCount(t, nsp, newStatus, 1); err != nil {
				return err
			}
		}
	}
	if newDoc == nil {
		return nil
	}
	return t.PutDerived(store.BucketSearch, newFK, encodeDoc(newDoc))
}

// putDiff removes the keys of prev that cur lacks and adds those of cur
// that prev lacks (empty values): only the entries that change are
// written, each costs a page. It sorts both.
func (t Tx) putDiff(prev, cur [][]byte) error {
	slices.SortFunc(prev, bytes.Compare)
	slices.SortFunc(cur, bytes.Compare)
	return diffSorted(prev, cur,
		func(k []byte) error { return t.PutDerived(store.BucketSearch, k, nil) },
		func(k []byte) error { return t.PutDerived(store.BucketSearch, k, []byte{}) })
}

// diffSorted walks prev and cur, both sorted, once: gone hears of each key
// only prev has, added of each only cur has; the first error ends the walk.
func diffSorted(prev, cur [][]byte, gone, added func(k []byte) error) error {
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		c := 0
		switch {
		case i == len(prev):
			c = 1
		case j == len(cur):
			c = -1
		default:
			c = bytes.Compare(prev[i], cur[j])
		}
		var err error
		switch {
		case c < 0:
			err = gone(prev[i])
			i++
		case c > 0:
			err = added(cur[j])
			j++
		default:
			i, j = i+1, j+1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fileWords keeps the word entries of the record of id in step with its
// change from old (oldDoc what it filed) to newDoc: at once, or (deferWords)
// by leaving the record pending, with its label order entry labelKey too if
// labelLater.
func (t Tx) fileWords(nsp []byte, id string, old *store.Stored, oldDoc, newDoc *searchDoc, deferWords, labelLater bool, labelKey []byte) error {
	var oldDID, newDID []byte
	if old != nil {
		oldDID = appendDocID(nil, sortTime(old.Created.UnixNano()), id)
	}
	if newDoc != nil {
		newDID = appendDocID(nil, newDoc.created, id)
	}
	// filed: the words under 'w' for oldDID.
	var filed []string
	var flags byte
	pending := false
	if oldDID != nil {
		if v := t.Get(store.BucketSearch, pendingKey(nsp, oldDID)); v != nil {
			flags, filed = decodePending(v)
			pending = true
		} else if oldDoc != nil {
			filed = oldDoc.filedWords(id)
		}
	}
	var want []string
	if newDoc != nil {
		want = newDoc.filedWords(id)
	}
	if oldDID != nil && !bytes.Equal(oldDID, newDID) {
		// Gone, or under another created time: oldDID's words go.
		if err := t.settleWords(nsp, oldDID, pendingOf{flags, filed, pending}, nil, deferWords, 0, nil); err != nil {
			return err
		}
		filed, flags, pending = nil, 0, false
		if newDID != nil {
			if v := t.Get(store.BucketSearch, pendingKey(nsp, newDID)); v != nil {
				flags, filed = decodePending(v)
				pending = true
			}
		}
	}
	if newDID == nil {
		return nil
	}
	var add byte
	if labelLater {
		add = pendingLabel
	}
	return t.settleWords(nsp, newDID, pendingOf{flags, filed, pending}, want, deferWords, add, labelKey)
}

// pendingOf is what a docID has filed: its pending entry's flags and words
// if it is pending, else the words of its forward entry.
type pendingOf struct {
	flags   byte
	filed   []string
	pending bool
}

// settleWords brings the word entries of did from what p has filed to
// want: at once (then labelKey, the record's label order entry, is filed
// if p's was pending), or (deferWords) by leaving did pending, its pending
// entry holding what is filed and p's flags with add.
func (t Tx) settleWords(nsp, did []byte, p pendingOf, want []string, deferWords bool, add byte, labelKey []byte) error {
	pk := pendingKey(nsp, did)
	if deferWords {
		flags := p.flags | add
		if p.pending && flags == p.flags || !p.pending && flags == 0 && slices.Equal(p.filed, want) {
			return nil
		}
		if mk := pendingNSKey(nsp); t.Get(store.BucketSearch, mk) == nil {
			if err := t.PutDerived(store.BucketSearch, mk, []byte{}); err != nil {
				return err
			}
		}
		return t.PutDerived(store.BucketSearch, pk, encodePending(flags, p.filed))
	}
	ch := map[string]*wordChange{}
	diffSorted(stringBytes(p.filed), stringBytes(want),
		func(w []byte) error { ch[string(wordPrefix(nsp, w))] = &wordChange{del: [][]byte{did}}; return nil },
		func(w []byte) error { ch[string(wordPrefix(nsp, w))] = &wordChange{add: [][]byte{did}}; return nil })
	if err := t.changeWords(ch); err != nil {
		return err
	}
	if !p.pending {
		return nil
	}
	if p.flags&pendingLabel != 0 && labelKey != nil {
		if err := t.PutDerived(store.BucketSearch, labelKey, []byte{}); err != nil {
			return err
		}
	}
	return t.PutDerived(store.BucketSearch, pk, nil)
}

// stringBytes is words as byte slices.
func stringBytes(words []string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

// IndexRecord keeps the record indexes (the URL index and the search
// index) of key in step with a change of its record from old to st (either
// nil: created, deleted), inside the write transaction of the change. Every
// path that writes a record calls it. In a cluster node's rehearsal
// (store.Tx.Rehearsal) it does nothing: no index entry is sent to etcd, and
// every node, this one included, indexes the record when it applies it.
func (t Tx) IndexRecord(key string, old, st *store.Stored) error {
	if t.Rehearsal() {
		return nil
	}
	var oldURL, newURL string
	if old != nil {
		oldURL = t.r.urlOf(old)
	}
	if st != nil {
		newURL = t.r.urlOf(st)
	}
	if err := t.indexURL(key, oldURL, newURL); err != nil {
		return err
	}
	return t.fileSearch(key, old, st, true)
}

// SearchQuery selects a page of a namespace through the search index.
type SearchQuery struct {
	// Words: every one must start a word of the record (SearchWords of
	// the client's text). Status, if set, is the exact status (upper
	// case).
	Words  []string
	Status string
	// Sort is one of SortID, SortLabel, SortCreated, SortChanged (zero:
	// SortID); Desc reverses it.
	Sort byte
	Desc bool
	// Offset and Limit: the page.
	Offset, Limit int
}

// Search returns the storage keys of the page q selects in the namespace of
// key prefix nsp (NamespaceKey) and how many records match in all. Its
// costs are at the top of this file.
func (t Tx) Search(nsp string, q SearchQuery) (keys []string, total int, err error) {
	limit := max(q.Limit, 0)
	total, err = t.SearchEach(nsp, q, func(key string) bool {
		if len(keys) == limit {
			return false
		}
		keys = append(keys, key)
		return true
	})
	return keys, total, err
}

// SearchEach is Search calling fn with each matching key from q.Offset on,
// in order, until fn returns false (q.Limit is not used).
func (t Tx) SearchEach(nsp string, q SearchQuery, fn func(key string) bool) (total int, err error) {
	b := t.bucket(store.BucketSearch)
	ns := []byte(nsp)
	if q.Sort == 0 {
		q.Sort = SortID
	}
	if len(q.Words) == 0 {
		if v := b.Get(countKey(ns, q.Status)); len(v) == 8 {
			total = int(binary.BigEndian.Uint64(v))
		}
		skip := q.Offset
		err := walkOrder(t, ns, q.Sort, q.Desc, q.Status != "", func(id, doc []byte) bool {
			if q.Status != "" {
				d, ok := decodeDoc(doc)
				if !ok || d.status != q.Status {
					return true
				}
			}
			if skip > 0 {
				skip--
				return true
			}
			return fn(nsp + string(id))
		})
		return total, err
	}
	// The longest word is the likeliest to be the rarest.
	words := make([]string, len(q.Words))
	for i, w := range q.Words {
		words[i] = cutWord(w)
	}
	lead := slices.MaxFunc(words, func(a, b string) int { return len(a) - len(b) })
	type match struct {
		sort []byte
		key  string
	}
	var matches []match
	seen := map[string]bool{}
	consider := func(did []byte) error {
		if did == nil || seen[string(did)] {
			return nil
		}
		if seen[string(did)] = true; len(seen) > MaxSearchMatches {
			return ErrSearchTooBroad
		}
		fwd := b.Get(append(appendEntry(nil, ns, 'f'), did...))
		if !docHasAll(fwd, words) {
			return nil
		}
		d, ok := decodeDoc(fwd)
		if ok && (q.Status == "" || d.status == q.Status) {
			matches = append(matches, match{d.sortValue(q.Sort), nsp + string(did[8:])})
		}
		return nil
	}
	pre := append(appendEntry(nil, ns, 'w'), lead...)
	c := b.Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		var err error
		eachBlockDoc(v, func(did []byte) bool {
			err = consider(did)
			return err == nil
		})
		if err != nil {
			return 0, err
		}
	}
	// The words the id covers (idCovers) are found by the records' keys.
	pre = append([]byte(nsp), lead...)
	for i := len(nsp); i < len(pre); i++ {
		pre[i] = upperASCII(pre[i])
	}
	c = t.bucket(store.BucketRecords).Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		st, err := store.DecodeStored(v)
		if err != nil {
			continue
		}
		if err := consider(appendDocID(nil, sortTime(st.Created.UnixNano()), string(k[len(nsp):]))); err != nil {
			return 0, err
		}
	}
	// The pending records' words may not be filed yet: each is checked.
	pre = appendEntry(nil, ns, 'p')
	c = b.Cursor()
	for k, _ := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, _ = c.Next() {
		if err := consider(docIDOf(ns, k)); err != nil {
			return 0, err
		}
	}
	slices.SortFunc(matches, func(a, b match) int {
		c := bytes.Compare(a.sort, b.sort)
		if c == 0 {
			c = strings.Compare(a.key, b.key)
		}
		if q.Desc {
			return -c
		}
		return c
	})
	for i := max(q.Offset, 0); i < len(matches); i++ {
		if !fn(matches[i].key) {
			break
		}
	}
	return len(matches), nil
}

// sortValue is d's value in sort order o (ties go by key).
func (d *searchDoc) sortValue(o byte) []byte {
	switch o {
	case SortLabel:
		return d.label
	case SortCreated:
		return binary.BigEndian.AppendUint64(nil, d.created)
	case SortChanged:
		return binary.BigEndian.AppendUint64(nil, d.updated)
	}
	return nil
}

// docHasAll reports whether every word starts one of the words of forward
// entry fwd (encodeDoc), read as it is stored, without decoding it: false
// if fwd is none or malformed.
func docHasAll(fwd []byte, words []string) bool {
	tail, ok := docWordsTail(fwd)
	if !ok {
		return false
	}
	for _, w := range words {
		found := false
		// The words are sorted: the first not below w is the one to check.
		for b := tail; len(b) > 0; {
			dw, rest, ok := nextWord(b)
			if !ok {
				return false
			}
			if b = rest; string(dw) >= w {
				found = strings.HasPrefix(string(dw), w)
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// walkOrder calls fn with the id (the key after nsp) and the forward entry
// of each record of namespace nsp in sort order o (reversed if desc), until
// fn returns false: the keys of the records bucket for SortID, the forward
// entries for SortCreated, else the entries of the order. doc is nil unless
// docs. id and doc are valid only during fn.
func walkOrder(t Tx, nsp []byte, o byte, desc, docs bool, fn func(id, doc []byte) bool) error {
	b := t.bucket(store.BucketSearch)
	pre := appendEntry(nil, nsp, 's', []byte{o})
	if o == SortCreated {
		pre = appendEntry(nil, nsp, 'f')
	}
	c := b.Cursor()
	if o == SortID {
		pre = nsp
		c = t.bucket(store.BucketRecords).Cursor()
	}
	end := append(append([]byte(nil), pre[:len(pre)-1]...), pre[len(pre)-1]+1)
	var k, v []byte
	switch {
	case !desc:
		k, v = c.Seek(pre)
	default:
		if k, _ = c.Seek(end); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	// The label order lacks the pending creates' entries: they are read
	// from the pending entries and walked beside it.
	var extra [][]byte
	if o == SortLabel {
		extra = pendingLabelKeys(b, nsp)
		if desc {
			slices.Reverse(extra)
		}
	}
	for {
		fromOrder := k != nil && bytes.HasPrefix(k, pre)
		if len(extra) > 0 && (!fromOrder || (bytes.Compare(extra[0], k) < 0) != desc) {
			did := docIDOf(nsp, extra[0])
			var doc []byte
			if docs {
				doc = b.Get(append(appendEntry(nil, nsp, 'f'), did...))
			}
			if extra = extra[1:]; !fn(did[8:], doc) {
				return nil
			}
			continue
		}
		if !fromOrder {
			return nil
		}
		var id, doc []byte
		switch o {
		case SortID:
			id = k[len(nsp):]
			// The forward entry is under the record's created time.
			if docs {
				if st, err := store.DecodeStored(v); err == nil {
					doc = b.Get(forwardKey(nsp, sortTime(st.Created.UnixNano()), string(id)))
				}
			}
		case SortCreated:
			id, doc = k[len(pre)+8:], v
		default:
			did := docIDOf(nsp, k)
			if did == nil {
				k, v = step(c, desc)
				continue
			}
			if id = did[8:]; docs {
				doc = b.Get(append(appendEntry(nil, nsp, 'f'), did...))
			}
		}
		if !fn(id, doc) {
			return nil
		}
		k, v = step(c, desc)
	}
}

// pendingLabelKeys returns, sorted, the label order entries of namespace
// nsp's pending records whose entry is not filed (pendingLabel).
func pendingLabelKeys(b *bbolt.Bucket, nsp []byte) [][]byte {
	var out [][]byte
	pre := appendEntry(nil, nsp, 'p')
	c := b.Cursor()
	for k, v := c.Seek(pre); bytes.HasPrefix(k, pre); k, v = c.Next() {
		if len(v) == 0 || v[0]&pendingLabel == 0 {
			continue
		}
		did := k[len(pre):]
		if lk := labelKeyOf(nsp, did, b.Get(append(appendEntry(nil, nsp, 'f'), did...))); lk != nil && b.Get(lk) == nil {
			out = append(out, lk)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// labelKeyOf is the label order entry of the record did whose forward
// entry is fwd (encodeDoc, its label first); nil if fwd is none or
// malformed.
func labelKeyOf(nsp, did, fwd []byte) []byte {
	label, _, ok := nextWord(fwd)
	if !ok || len(did) < 8 {
		return nil
	}
	return appendLabelKey(nil, nsp, label, did[8:], binary.BigEndian.Uint64(did))
}

func step(c *bbolt.Cursor, desc bool) ([]byte, []byte) {
	if desc {
		return c.Prev()
	}
	return c.Next()
}
