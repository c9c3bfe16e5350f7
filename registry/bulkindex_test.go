package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pidnode/store"
)

// A rebuild (Reindex: the entries sorted and appended) leaves both record
// indexes byte for byte as the writes of a few thousand varied records
// left them (creates, label, URL and status changes, deletes, records
// without status or URL, in the production and the test prefix), and a
// consistent file.
func TestReindexEqualsMaintainedIndexes(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Update(func(tx Tx) error {
		return tx.PutSNAA(&SNAA{ID: "s1", Namespace: "NS", Prefixes: []string{"21.12345", "21.T12345"}})
	}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"zinc", "oxide", "copper", "wire", "sample", "Ünïcode", "alumina", "powder", "x", "grey"}
	statuses := []string{"", "REGISTERED", "SUBMITTED", "OBSOLETED"}
	text := func(n int) string {
		var b []string
		for range n {
			b = append(b, words[rng.IntN(len(words))])
		}
		return strings.Join(b, " ")
	}
	const n = 3000
	rec := func(i int, at int64) (string, *store.Stored) {
		prefix := "21.12345"
		if i%5 == 0 {
			prefix = "21.T12345"
		}
		h := namer.Full(prefix, "NS", fmt.Sprintf("ID-%d-%c", i, 'A'+i%26))
		k, _, err := namer.Key(h)
		if err != nil {
			t.Fatal(err)
		}
		url := fmt.Sprintf("https://example.org/%d/%s", rng.IntN(50), words[rng.IntN(len(words))])
		if rng.IntN(10) == 0 {
			url = ""
		}
		// Many records share a created time: ties order by id.
		return k, searchRec(h, url, statuses[rng.IntN(len(statuses))], text(rng.IntN(4)), text(rng.IntN(6)), int64(1_700_000_000+i/7), at)
	}
	write := func(from, to int, at int64, del bool) {
		t.Helper()
		err := reg.Update(func(tx Tx) error {
			for i := from; i < to; i++ {
				k, st := rec(i, at)
				if del {
					st = nil
				}
				if err := writeIndexed(tx, k, st); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 500 {
		write(i, i+500, 1000, false)
	}
	write(0, n/3, 2000, false)       // updates: new labels, URLs, statuses
	write(n/2, n/2+n/5, 0, true)     // deletes
	write(n-100, n+200, 3000, false) // updates and creates
	// The words the writes left pending, filed as a node's merge does.
	for {
		merged, err := reg.MergeSearch(MergeBatch)
		if err != nil {
			t.Fatal(err)
		}
		if merged == 0 {
			break
		}
	}
	urls := dumpBucket(t, db, store.BucketURLIndex)
	search := dumpBucket(t, db, store.BucketSearch)
	// A record files a forward, a label order and a changed order entry;
	// its words go in blocks shared with others.
	if len(urls) < n/2 || len(search) < 3*n {
		t.Fatalf("only %d URL and %d search entries written", len(urls), len(search))
	}

	built, err := Reindex(db, namer, 1)
	if err != nil {
		t.Fatal(err)
	}
	if built != len(urls) {
		t.Errorf("Reindex reports %d URL entries, the writes left %d", built, len(urls))
	}
	notMarker := func(s string) bool { return strings.HasPrefix(s, `"\x00built"`) }
	for _, c := range []struct {
		bucket     []byte
		maintained []string
	}{{store.BucketURLIndex, urls}, {store.BucketSearch, search}} {
		rebuilt := slices.DeleteFunc(dumpBucket(t, db, c.bucket), notMarker)
		if !slices.Equal(rebuilt, c.maintained) {
			i := 0
			for i < min(len(rebuilt), len(c.maintained)) && rebuilt[i] == c.maintained[i] {
				i++
			}
			t.Errorf("%s: rebuilt %d entries, maintained %d; first difference at %d", c.bucket, len(rebuilt), len(c.maintained), i)
			for j := i; j < i+3 && j < len(rebuilt) && j < len(c.maintained); j++ {
				t.Logf("rebuilt %s\nmaintained %s", rebuilt[j], c.maintained[j])
			}
		}
	}
	for _, b := range [][]byte{store.BucketURLIndex, store.BucketSearch} {
		if ok, err := indexBuilt(db, b); err != nil || !ok {
			t.Errorf("%s not marked complete after Reindex: %v, %v", b, ok, err)
		}
	}
	err = db.View(func(tx *store.Tx) error {
		for err := range tx.Bolt().Check() {
			t.Errorf("bbolt check: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
