package registry

import (
	"bytes"
	"encoding/json"
	"fmt"

	"pidnode/handlev"
	"pidnode/store"
)

// The URL index (store.BucketURLIndex) answers "which identifiers of this
// namespace point at URL u (or at URLs starting with p)" without reading the
// records: the SNAA routes' list and search by URL (docs/product.md §4).
//
// One entry per record that has a URL, key
//
//	<namespace key prefix> 0x00 <url> 0x00 <record storage key>
//
// with an empty value, where the namespace key prefix is the record's storage
// key up to its id ("21.12345/SVC/NS/"). Keys sort by namespace, then URL, so an
// exact URL and a URL prefix are both one cursor range inside one namespace.
// Only full-form keys under the production and test prefixes, in namespaces
// that belong to an SNAA, are indexed: those are the records the SNAA routes
// list. Every create and update maintains the index in its own transaction
// (Tx.IndexRecord); Reindex rebuilds it (after `pidnode import`, and
// EnsureIndexes for a database written before the index existed).
//
// A cluster node (docs/product.md §10) indexes every record it applies
// (ApplyPut), whether its namespace has an SNAA or not. Its index then holds
// entries a single node's lacks only in namespaces without an SNAA, which no
// route searches (an SNAA searches its own namespace), and they are exactly
// the entries IndexNamespace writes when an SNAA for the namespace is
// approved. Applying only the entries of owned namespaces would lose them:
// the other nodes learn of an approval as an SNAA entry alone, and a
// snapshot, in etcd's key order, applies the records before the SNAAs. For
// the same reason Reindex indexes every namespace of a cluster node's
// copy (EnsureIndexes runs it after a new node's first snapshot). So a
// node's URL searches answer as a single node's from the same data.
//
// urlIndexMarker, a key no entry can have (entries start with a prefix digit),
// says the index is complete.
var urlIndexMarker = []byte("\x00built")

// searchLayout is the value of the search index's marker: the layout of
// its entries (search.go). An index marked otherwise was written in an
// older layout, and EnsureIndexes rebuilds it.
var searchLayout = []byte{3}

// markerValue is the value of bucket's urlIndexMarker when its index is
// complete and current.
func markerValue(bucket []byte) []byte {
	if bytes.Equal(bucket, store.BucketSearch) {
		return searchLayout
	}
	return []byte{}
}

// NamespaceKey returns the key prefix of namespace ns under prefix: the
// part every key of its identifiers begins with, which the indexes, the
// audit log and the feed are kept by.
func (r *Registry) NamespaceKey(prefix, ns string) (string, error) {
	return r.namer.NamespaceKey(prefix, ns)
}

// urlIndexKey builds an index key; nil if the entry cannot exist (no
// namespace, empty URL or a NUL byte in it).
func urlIndexKey(nsp []byte, url string, key []byte) []byte {
	if nsp == nil || url == "" || bytes.IndexByte([]byte(url), 0) >= 0 {
		return nil
	}
	k := make([]byte, 0, len(nsp)+len(url)+len(key)+2)
	k = append(k, nsp...)
	k = append(k, 0)
	k = append(k, url...)
	k = append(k, 0)
	return append(k, key...)
}

// indexURL moves key's index entry from oldURL to newURL (either may be ""),
// inside the write transaction of the record change (IndexRecord).
func (t Tx) indexURL(key, oldURL, newURL string) error {
	if oldURL == newURL {
		return nil
	}
	nsp := t.r.namer.NamespaceOf([]byte(key))
	if k := urlIndexKey(nsp, oldURL, []byte(key)); k != nil {
		if err := t.PutDerived(store.BucketURLIndex, k, nil); err != nil {
			return err
		}
	}
	if k := urlIndexKey(nsp, newURL, []byte(key)); k != nil {
		return t.PutDerived(store.BucketURLIndex, k, []byte{})
	}
	return nil
}

// urlSearchPrefix is the index range of a search: exact URL, or URL prefix when
// the query ends in '*'.
func urlSearchPrefix(nsp []byte, q string) []byte {
	k := append(append([]byte{}, nsp...), 0)
	if p, ok := bytes.CutSuffix([]byte(q), []byte("*")); ok {
		return append(k, p...)
	}
	return append(append(k, q...), 0)
}

// recordKeyOfIndex returns the record key at the end of an index key.
func recordKeyOfIndex(k []byte) []byte {
	return k[bytes.LastIndexByte(k, 0)+1:]
}

// NamespaceRange returns the key range of a walk of namespace ns under
// prefix (ScanNamespace): the records' range, or with url the URL index's
// range of that exact URL, or of the URLs starting with it when url ends in
// '*'.
func (r *Registry) NamespaceRange(prefix, ns, url string) ([]byte, error) {
	k, err := r.NamespaceKey(prefix, ns)
	if err != nil {
		return nil, err
	}
	if url != "" {
		return urlSearchPrefix([]byte(k), url), nil
	}
	return []byte(k), nil
}

// ScanNamespace walks, in key order from start, the keys with prefix rng
// (from NamespaceRange) of the records bucket, or of the URL index when
// byURL, and calls fn with each key and the record it names (nil for an
// index entry whose record is gone), until fn returns false. k is valid only
// during fn.
func (t Tx) ScanNamespace(byURL bool, rng, start []byte, fn func(k []byte, st *store.Stored) (bool, error)) error {
	bucket := store.BucketRecords
	if byURL {
		bucket = store.BucketURLIndex
	}
	c := t.bucket(bucket).Cursor()
	for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, rng); k, _ = c.Next() {
		rk := k
		if byURL {
			rk = recordKeyOfIndex(k)
		}
		st, ok, err := t.Record(string(rk))
		if err != nil {
			return err
		}
		sp := &st
		if !ok {
			sp = nil
		}
		if more, err := fn(k, sp); err != nil || !more {
			return err
		}
	}
	return nil
}

// reindexChunk is how many records one IndexNamespace transaction reads.
// bbolt splits a leaf only at commit, so every entry a transaction inserts
// into a leaf shifts the ones after it: the cost of a transaction grows with
// the square of the index entries it adds to one leaf (a record adds a
// dozen search entries, in key order of the records, not of the entries).
// Smaller chunks bound that; each one costs a commit and its fsync.
const reindexChunk = 2000

// Reindex rebuilds the record indexes (the URL index and the search index,
// search.go) from the records: it clears them, indexes every full-form
// record under namer's production and test prefixes in a namespace that
// belongs to an SNAA (on a cluster node's copy, in any namespace), with the
// landing page URL at value index urlIndex, and marks them complete. Records
// of namespaces no SNAA owns are skipped without being read (a bulk import
// of foreign records costs a key scan); approving an SNAA indexes its
// namespace's records then (IndexNamespace). The entries are collected,
// sorted and appended in key order (store.DB.RebuildDerived), in several
// transactions; the indexes are marked complete in the last, so an
// interrupted rebuild is redone by EnsureIndexes at the next start. It must
// not race with writers: call it offline (`pidnode import` does) or before
// serving (EnsureIndexes does when an index is not marked complete). It
// returns the number of URL index entries written.
func Reindex(db *store.DB, namer *handlev.Namer, urlIndex int32) (int, error) {
	return reindex(db, namer, urlIndex, true, true)
}

// reindex rebuilds the URL index (urls) and the search index (search).
func reindex(db *store.DB, namer *handlev.Namer, urlIndex int32, urls, search bool) (int, error) {
	var buckets [][]byte
	if urls {
		buckets = append(buckets, store.BucketURLIndex)
	}
	if search {
		buckets = append(buckets, store.BucketSearch)
	}
	if len(buckets) == 0 {
		return 0, nil
	}
	owned, err := ownedNamespaces(db, namer)
	if err != nil {
		return 0, err
	}
	want := func(nsp []byte) bool { return owned[string(nsp)] }
	// A cluster node's copy indexes every namespace, as ApplyPut does (see
	// the top of this file).
	rev, err := db.AppliedRevision()
	if err != nil {
		return 0, err
	}
	if rev > 0 {
		want = func([]byte) bool { return true }
	}
	r := &Registry{db: db, namer: namer, urlIndex: urlIndex}
	total := 0
	var group func(i int, k []byte) ([]byte, bool)
	if search {
		group = wordGroup(len(buckets) - 1)
	}
	err = db.RebuildDerived(buckets, group, func(stx *store.Tx, emit func(i int, k, v []byte) error) error {
		if len(owned) == 0 && rev == 0 {
			return nil
		}
		n, err := r.indexEntries(Tx{stx, r}, want, urls, search, emit)
		total = n
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("registry: building the record indexes: %w", err)
	}
	err = db.UpdateAlone(func(tx *store.Tx) error {
		for _, bucket := range buckets {
			if err := tx.Bolt().Bucket(bucket).Put(urlIndexMarker, markerValue(bucket)); err != nil {
				return err
			}
		}
		return nil
	})
	return total, err
}

// indexEntries emits every entry the record indexes hold for the records
// whose namespace want accepts: the URL index's (as bucket 0, when urls)
// and the search index's (as the next bucket, when search), computed as
// IndexRecord computes them for one record, and the search index's counts.
// It returns the number of URL index entries.
func (r *Registry) indexEntries(tx Tx, want func(nsp []byte) bool, urls, search bool, emit func(i int, k, v []byte) error) (int, error) {
	urlBucket, searchBucket := 0, 0
	if urls {
		searchBucket = 1
	}
	n := 0
	counts := map[string]uint64{}
	c := tx.bucket(store.BucketRecords).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		nsp := r.namer.NamespaceOf(k)
		if nsp == nil || !want(nsp) {
			continue
		}
		st, ok, err := tx.Record(string(k))
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		if urls {
			if uk := urlIndexKey(nsp, r.urlOf(&st), k); uk != nil {
				if err := emit(urlBucket, uk, []byte{}); err != nil {
					return n, err
				}
				n++
			}
		}
		if search {
			if err := r.searchEntries(string(k), &st, counts, func(k, v []byte) error { return emit(searchBucket, k, v) }); err != nil {
				return n, err
			}
		}
	}
	for k, v := range counts {
		if err := emit(searchBucket, []byte(k), countValue(v)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// namespacePrefixes returns the key prefixes of namespace ns under the
// production and the test prefix.
func namespacePrefixes(namer *handlev.Namer, ns string) []string {
	var out []string
	for _, p := range []string{namer.Prefix(), namer.TestPrefix()} {
		if p == "" {
			continue
		}
		if k, _, err := namer.Key(namer.Full(p, ns, "X")); err == nil {
			out = append(out, k[:len(k)-1])
		}
	}
	return out
}

// ownedNamespaces returns the key prefixes of every SNAA's namespace.
func ownedNamespaces(db *store.DB, namer *handlev.Namer) (map[string]bool, error) {
	owned := map[string]bool{}
	err := db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketSNAAs).ForEach(func(_, v []byte) error {
			var sn SNAA
			if err := json.Unmarshal(v, &sn); err != nil {
				return fmt.Errorf("registry: SNAA record: %w", err)
			}
			for _, p := range namespacePrefixes(namer, sn.Namespace) {
				owned[p] = true
			}
			return nil
		})
	})
	return owned, err
}

// indexRange indexes the records whose key starts with prefix (nil: all) and
// whose namespace want accepts, in the URL index (urls) and the search
// index (search), in transactions of reindexChunk records. It returns the
// number of URL index entries written. Writers may run meanwhile: each
// record is read and indexed in one write transaction, a Put of an entry a
// write already made is a no-op, and the search index replaces what its
// forward entry says the record filed.
func (r *Registry) indexRange(prefix []byte, want func(nsp []byte) bool, urls, search bool) (int, error) {
	after := prefix
	first := true
	total := 0
	for {
		var n int
		var last []byte
		err := r.db.Update(func(stx *store.Tx) error {
			tx := Tx{stx, r}
			n, last = 0, nil
			c := tx.bucket(store.BucketRecords).Cursor()
			var k []byte
			if k, _ = c.Seek(after); !first && bytes.Equal(k, after) {
				k, _ = c.Next()
			}
			for read := 0; k != nil && bytes.HasPrefix(k, prefix) && read < reindexChunk; k, _ = c.Next() {
				read++
				last = k
				nsp := r.namer.NamespaceOf(k)
				if nsp == nil || !want(nsp) {
					continue
				}
				st, ok, err := tx.Record(string(k))
				if err != nil || !ok {
					return err
				}
				if u := r.urlOf(&st); urls && urlIndexKey(nsp, u, k) != nil {
					if err := tx.indexURL(string(k), "", u); err != nil {
						return err
					}
					n++
				}
				if search {
					if err := tx.indexSearch(string(k), &st, &st); err != nil {
						return err
					}
				}
			}
			last = append([]byte(nil), last...)
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("registry: building the record indexes: %w", err)
		}
		total += n
		if len(last) == 0 {
			return total, nil
		}
		after, first = last, false
	}
}

// IndexNamespace indexes the records already in namespace ns (imported before
// its SNAA existed); the approval of an SNAA calls it after its commit.
func (r *Registry) IndexNamespace(ns string) (int, error) {
	total := 0
	for _, p := range namespacePrefixes(r.namer, ns) {
		n, err := r.indexRange([]byte(p), func([]byte) bool { return true }, true, true)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// indexBuilt reports whether the index in bucket (BucketURLIndex,
// BucketSearch) is marked complete, in the current layout.
func indexBuilt(db *store.DB, bucket []byte) (bool, error) {
	built := false
	err := db.View(func(tx *store.Tx) error {
		v := tx.Bolt().Bucket(bucket).Get(urlIndexMarker)
		built = v != nil && bytes.Equal(v, markerValue(bucket))
		return nil
	})
	return built, err
}
