package registry

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// searchRec is a record of the tests' model shape: URL at 1, STATUS at 11,
// RESOURCE at 14.
func searchRec(handle, url, status, label, desc string, created, updated int64) *store.Stored {
	res := fmt.Sprintf(`{"label":%q,"description":%q,"resource_category":"SAMPLE"}`, label, desc)
	return &store.Stored{Version: 1, Created: time.Unix(created, 0), Updated: time.Unix(updated, 0),
		Record: handlev.Record{Handle: handle, Values: []handlev.Value{
			{Index: 1, Type: "URL", Data: []byte(url)},
			{Index: 11, Type: "STATUS", Data: []byte(status)},
			{Index: 14, Type: "RESOURCE", Data: []byte(res)},
		}}}
}

// writeIndexed writes st under k (nil: deletes it) with its indexes, as
// every record writer does (IndexRecord with the record as it was).
func writeIndexed(tx Tx, k string, st *store.Stored) error {
	old, ok, err := tx.Record(k)
	if err != nil {
		return err
	}
	var before *store.Stored
	if ok {
		before = &old
	}
	if st == nil {
		err = tx.DeleteRecord(k)
	} else {
		err = tx.PutRecord(k, st)
	}
	if err != nil {
		return err
	}
	return tx.IndexRecord(k, before, st)
}

// dumpBucket returns every key and value of bucket, for comparing indexes.
func dumpBucket(t *testing.T, db *store.DB, bucket []byte) []string {
	t.Helper()
	var out []string
	err := db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(bucket).ForEach(func(k, v []byte) error {
			out = append(out, fmt.Sprintf("%q=%x", k, v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The search index follows every change of a record in the write's own
// transaction (IndexRecord): a create is found by its words, an update that
// changes the label no longer by the old label's words, a delete by
// nothing; with every record's words pending (never merged), filed (merged
// after every write) or filed but for the last write (merged before every
// write); and what writes leave behind, merged, is byte for byte what
// Reindex builds from the same records.
func TestSearchIndexFollowsWrites(t *testing.T) {
	for _, merge := range []string{"never", "after", "before"} {
		t.Run("merge="+merge, func(t *testing.T) { testSearchIndexFollowsWrites(t, merge) })
	}
}

func testSearchIndexFollowsWrites(t *testing.T, merge string) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	nsp, err := reg.NamespaceKey("21.T12345", "NS")
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[string]string{} // storage key → id
	key := func(id string) (string, string) {
		h := namer.Full("21.T12345", "NS", id)
		k, _, err := namer.Key(h)
		if err != nil {
			t.Fatal(err)
		}
		idOf[k] = id
		return k, h
	}
	mergeAll := func() {
		t.Helper()
		if _, err := reg.MergeSearch(MergeBatch); err != nil {
			t.Fatal(err)
		}
	}
	put := func(id string, st *store.Stored) {
		t.Helper()
		k, _ := key(id)
		if merge == "before" {
			mergeAll()
		}
		err := reg.Update(func(tx Tx) error { return writeIndexed(tx, k, st) })
		if err != nil {
			t.Fatal(err)
		}
		if merge == "after" {
			mergeAll()
		}
	}
	search := func(q SearchQuery) ([]string, int) {
		t.Helper()
		var keys []string
		var total int
		if q.Limit == 0 {
			q.Limit = 100
		}
		err := reg.View(func(tx Tx) error {
			var err error
			keys, total, err = tx.Search(nsp, q)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			keys[i] = idOf[k]
		}
		return keys, total
	}
	_, hA := key("AAA-1")
	_, hB := key("BBB-2")
	_, hC := key("CCC-3")
	put("AAA-1", searchRec(hA, "https://example.org/zinc", "REGISTERED", "Zinc oxide powder", "A white powder", 30, 300))
	put("BBB-2", searchRec(hB, "https://example.org/copper", "SUBMITTED", "copper wire", "Thin wire of copper", 10, 100))
	put("CCC-3", searchRec(hC, "https://data.example.net/x", "REGISTERED", "Alumina", "zinc-free powder sample", 20, 200))

	cases := []struct {
		name  string
		q     SearchQuery
		want  []string
		total int
	}{
		{"all by id", SearchQuery{}, []string{"AAA-1", "BBB-2", "CCC-3"}, 3},
		{"all by id, reversed", SearchQuery{Desc: true}, []string{"CCC-3", "BBB-2", "AAA-1"}, 3},
		{"status by id, reversed", SearchQuery{Status: "REGISTERED", Desc: true, Limit: 1}, []string{"CCC-3"}, 2},
		{"all by label", SearchQuery{Sort: SortLabel}, []string{"CCC-3", "BBB-2", "AAA-1"}, 3},
		{"all by created", SearchQuery{Sort: SortCreated}, []string{"BBB-2", "CCC-3", "AAA-1"}, 3},
		{"all by changed, newest first", SearchQuery{Sort: SortChanged, Desc: true}, []string{"AAA-1", "CCC-3", "BBB-2"}, 3},
		{"second page", SearchQuery{Offset: 2, Limit: 2}, []string{"CCC-3"}, 3},
		{"word prefix", SearchQuery{Words: []string{"pow"}}, []string{"AAA-1", "CCC-3"}, 2},
		{"words are ANDed", SearchQuery{Words: []string{"zinc", "oxide"}}, []string{"AAA-1"}, 1},
		{"id word", SearchQuery{Words: []string{"bbb"}}, []string{"BBB-2"}, 1},
		{"id as stored", SearchQuery{Words: []string{"bbb2"}}, []string{"BBB-2"}, 1},
		{"url word", SearchQuery{Words: []string{"net"}}, []string{"CCC-3"}, 1},
		{"status", SearchQuery{Status: "REGISTERED"}, []string{"AAA-1", "CCC-3"}, 2},
		{"status and word", SearchQuery{Status: "REGISTERED", Words: []string{"zinc"}, Sort: SortLabel}, []string{"CCC-3", "AAA-1"}, 2},
		{"no match", SearchQuery{Words: []string{"gold"}}, nil, 0},
	}
	for _, c := range cases {
		got, total := search(c.q)
		if !slices.Equal(got, c.want) || total != c.total {
			t.Errorf("%s: Search(%+v) = %q, %d; want %q, %d", c.name, c.q, got, total, c.want, c.total)
		}
	}

	// The label changes: its old words are gone, its new ones found.
	put("AAA-1", searchRec(hA, "https://example.org/zinc", "OBSOLETED", "Iron filings", "A grey powder", 30, 400))
	if got, _ := search(SearchQuery{Words: []string{"oxide"}}); len(got) != 0 {
		t.Errorf("after the label change, oxide finds %q; want nothing", got)
	}
	if got, _ := search(SearchQuery{Words: []string{"iron"}}); !slices.Equal(got, []string{"AAA-1"}) {
		t.Errorf("after the label change, iron finds %q; want AAA-1", got)
	}
	if got, _ := search(SearchQuery{Sort: SortLabel}); !slices.Equal(got, []string{"CCC-3", "BBB-2", "AAA-1"}) {
		t.Errorf("after the label change, by label %q; want CCC-3 BBB-2 AAA-1", got)
	}
	if got, _ := search(SearchQuery{Sort: SortLabel, Desc: true, Limit: 2}); !slices.Equal(got, []string{"AAA-1", "BBB-2"}) {
		t.Errorf("after the label change, by label reversed %q; want AAA-1 BBB-2", got)
	}
	if got, total := search(SearchQuery{Status: "REGISTERED"}); !slices.Equal(got, []string{"CCC-3"}) || total != 1 {
		t.Errorf("after the status change, REGISTERED = %q, %d; want CCC-3, 1", got, total)
	}
	put("BBB-2", nil)
	if got, total := search(SearchQuery{}); !slices.Equal(got, []string{"AAA-1", "CCC-3"}) || total != 2 {
		t.Errorf("after a delete, all = %q, %d; want AAA-1 CCC-3, 2", got, total)
	}
	if got, _ := search(SearchQuery{Words: []string{"copper"}}); len(got) != 0 {
		t.Errorf("after a delete, copper finds %q", got)
	}
	// A record without a status counts in the total only.
	_, hD := key("DDD-4")
	put("DDD-4", searchRec(hD, "https://example.org/d", "", "Dolomite", "", 40, 500))
	if _, total := search(SearchQuery{}); total != 3 {
		t.Errorf("with a record without status, total = %d, want 3", total)
	}
	if got, _ := search(SearchQuery{Sort: SortLabel, Desc: true}); !slices.Equal(got, []string{"AAA-1", "DDD-4", "CCC-3"}) {
		t.Errorf("after a delete and a create, by label reversed %q; want AAA-1 DDD-4 CCC-3", got)
	}
	if got, _ := search(SearchQuery{Sort: SortLabel, Offset: 1, Limit: 1}); !slices.Equal(got, []string{"DDD-4"}) {
		t.Errorf("after a delete and a create, second by label %q; want DDD-4", got)
	}
	if got, total := search(SearchQuery{Status: "REGISTERED"}); !slices.Equal(got, []string{"CCC-3"}) || total != 1 {
		t.Errorf("with a record without status, REGISTERED = %q, %d; want CCC-3, 1", got, total)
	}

	// What the writes left is what a rebuild makes (the namespace needs an
	// SNAA to be rebuilt on a single node).
	if err := reg.Update(func(tx Tx) error {
		return tx.PutSNAA(&SNAA{ID: "s1", Namespace: "NS", Prefixes: []string{"21.T12345"}})
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := reg.MergeSearch(MergeBatch); err != nil || (merge == "after" && n != 0) {
		t.Fatalf("last merge: %d records, %v", n, err)
	}
	before := dumpBucket(t, db, store.BucketSearch)
	if _, err := Reindex(db, namer, 1); err != nil {
		t.Fatal(err)
	}
	after := dumpBucket(t, db, store.BucketSearch)
	after = slices.DeleteFunc(after, func(s string) bool { return strings.HasPrefix(s, `"\x00built"`) })
	if !slices.Equal(before, after) {
		t.Errorf("rebuilt search index differs from the maintained one:\nmaintained %q\nrebuilt    %q", before, after)
	}
}

func TestSearchWords(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{"KBKA-BEM9"}, []string{"kbka", "bem9"}},
		{[]string{"https://Example.org/a?b=c", "a b"}, []string{"https", "example", "org", "a", "b", "c"}},
		{[]string{"Größe Überall"}, []string{"größe", "überall"}},
		{[]string{strings.Repeat("x", 40)}, []string{strings.Repeat("x", 32)}},
		{[]string{"", "--"}, nil},
	}
	for _, c := range cases {
		if got := SearchWords(c.in...); !slices.Equal(got, c.want) {
			t.Errorf("SearchWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A forward entry survives its codec, and no bytes make decodeDoc panic.
func FuzzSearchDoc(f *testing.F) {
	f.Add(encodeDoc(&searchDoc{label: []byte("zinc"), status: "REGISTERED", created: 1, updated: 2, words: []string{"a", "zinc"}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok := decodeDoc(b)
		if !ok {
			return
		}
		if again := encodeDoc(&d); !bytes.Equal(again, b) {
			d2, ok := decodeDoc(again)
			if !ok || !bytes.Equal(encodeDoc(&d2), again) {
				t.Fatalf("decodeDoc(%x) does not round-trip", b)
			}
		}
	})
}

// A database whose URL index is complete but which has no search index
// (written before it existed) gets one from EnsureIndexes, and its URL
// index is left as it is.
func TestEnsureIndexesBuildsSearch(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := namer.Full("21.T12345", "OLD", "R1")
	k, _, _ := namer.Key(h)
	err = reg.Update(func(tx Tx) error {
		if err := tx.PutSNAA(&SNAA{ID: "s1", Namespace: "OLD", Prefixes: []string{"21.T12345"}}); err != nil {
			return err
		}
		if err := tx.PutRecord(k, searchRec(h, "https://old.example.org/r1", "REGISTERED", "Legacy record", "", 1, 2)); err != nil {
			return err
		}
		if err := tx.indexURL(k, "", "https://old.example.org/r1"); err != nil {
			return err
		}
		return tx.Bolt().Bucket(store.BucketURLIndex).Put(urlIndexMarker, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if built, err := reg.EnsureIndexes(); err != nil || built != -1 {
		t.Fatalf("EnsureIndexes = %d, %v; want -1 (the URL index was complete)", built, err)
	}
	nsp, _ := reg.NamespaceKey("21.T12345", "OLD")
	var keys []string
	err = reg.View(func(tx Tx) error {
		keys, _, err = tx.Search(nsp, SearchQuery{Words: []string{"legacy"}, Limit: 10})
		return err
	})
	if err != nil || !slices.Equal(keys, []string{k}) {
		t.Errorf("search legacy after EnsureIndexes = %q, %v; want %q", keys, err, k)
	}
}

// A search index marked complete in an older layout (its marker holds no
// layout, its entries end in the record's key) is rebuilt by EnsureIndexes:
// the old entries go, the search finds the record, the marker holds the
// current layout.
func TestEnsureIndexesRebuildsOldSearchLayout(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := namer.Full("21.T12345", "OLD", "R1")
	k, _, _ := namer.Key(h)
	nsp, _ := reg.NamespaceKey("21.T12345", "OLD")
	old := []string{nsp + "\x00wlegacy\x00" + k, nsp + "\x00f" + k, nsp + "\x00n"}
	err = reg.Update(func(tx Tx) error {
		if err := tx.PutSNAA(&SNAA{ID: "s1", Namespace: "OLD", Prefixes: []string{"21.T12345"}}); err != nil {
			return err
		}
		if err := tx.PutRecord(k, searchRec(h, "https://old.example.org/r1", "REGISTERED", "Legacy record", "", 1, 2)); err != nil {
			return err
		}
		if err := tx.indexURL(k, "", "https://old.example.org/r1"); err != nil {
			return err
		}
		if err := tx.Bolt().Bucket(store.BucketURLIndex).Put(urlIndexMarker, nil); err != nil {
			return err
		}
		for _, e := range old {
			if err := tx.Bolt().Bucket(store.BucketSearch).Put([]byte(e), []byte{}); err != nil {
				return err
			}
		}
		return tx.Bolt().Bucket(store.BucketSearch).Put(urlIndexMarker, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if built, err := reg.EnsureIndexes(); err != nil || built != -1 {
		t.Fatalf("EnsureIndexes = %d, %v; want -1 (the URL index was complete)", built, err)
	}
	dump := dumpBucket(t, db, store.BucketSearch)
	for _, e := range old[:2] {
		if slices.ContainsFunc(dump, func(s string) bool { return strings.HasPrefix(s, fmt.Sprintf("%q=", e)) }) {
			t.Errorf("old-layout entry %q survived EnsureIndexes", e)
		}
	}
	if !slices.Contains(dump, fmt.Sprintf("%q=%x", urlIndexMarker, searchLayout)) {
		t.Errorf("search marker after EnsureIndexes: %q; want the layout %x", dump, searchLayout)
	}
	for _, q := range []SearchQuery{{Words: []string{"legacy"}}, {Words: []string{"r1"}}, {Sort: SortCreated}} {
		var keys []string
		var total int
		q.Limit = 10
		err = reg.View(func(tx Tx) error {
			keys, total, err = tx.Search(nsp, q)
			return err
		})
		if err != nil || !slices.Equal(keys, []string{k}) || total != 1 {
			t.Errorf("Search(%+v) after EnsureIndexes = %q, %d, %v; want %q, 1", q, keys, total, err, k)
		}
	}
	// Marked in the current layout, it is left alone.
	if built, err := reg.EnsureIndexes(); err != nil || built != -1 {
		t.Fatalf("EnsureIndexes again = %d, %v", built, err)
	}
	if again := dumpBucket(t, db, store.BucketSearch); !slices.Equal(again, dump) {
		t.Errorf("EnsureIndexes rewrote a current index:\n%q\n%q", dump, again)
	}
}
