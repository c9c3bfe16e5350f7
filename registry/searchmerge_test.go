package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pidnode/store"
)

// pendingEntries are the search index's pending entries and namespace
// markers (searchmerge.go).
func pendingEntries(t *testing.T, dump []string) []string {
	t.Helper()
	return slices.DeleteFunc(slices.Clone(dump), func(s string) bool {
		return !strings.Contains(s, `/\x00p`) && !strings.HasPrefix(s, `"\x00pending`)
	})
}

// MergeSearch files at most its batch per call, in two namespaces, every
// search and label order page answering the same before, between and after
// the merges; when
// nothing is pending the namespaces' markers are gone.
func TestMergeSearchBatches(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	spaces := []string{"NA", "NB"}
	nsps := map[string]string{}
	for _, ns := range spaces {
		if nsps[ns], err = reg.NamespaceKey("21.T12345", ns); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		for _, ns := range spaces {
			h := namer.Full("21.T12345", ns, fmt.Sprintf("R-%d", i))
			k, _, err := namer.Key(h)
			if err != nil {
				t.Fatal(err)
			}
			st := searchRec(h, "https://example.org/"+ns, "REGISTERED", fmt.Sprintf("Sample %d %s", i, []string{"quartz", "mica"}[i%2]), "", int64(10+i), int64(10+i))
			if err := reg.Update(func(tx Tx) error { return writeIndexed(tx, k, st) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	answers := func() string {
		var b strings.Builder
		for _, ns := range spaces {
			for _, q := range [][]string{{"quartz"}, {"mica"}, {"sample", "3"}, {"example"}} {
				err := reg.View(func(tx Tx) error {
					keys, total, err := tx.Search(nsps[ns], SearchQuery{Words: q, Limit: 10})
					fmt.Fprintf(&b, "%s %q: %d %q\n", ns, q, total, keys)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, desc := range []bool{false, true} {
				err := reg.View(func(tx Tx) error {
					keys, total, err := tx.Search(nsps[ns], SearchQuery{Sort: SortLabel, Desc: desc, Offset: 1, Limit: 3})
					fmt.Fprintf(&b, "%s by label desc=%v: %d %q\n", ns, desc, total, keys)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		return b.String()
	}
	want := answers()
	if !strings.Contains(want, `NA ["quartz"]: 3`) || !strings.Contains(want, `NB ["sample" "3"]: 1`) || !strings.Contains(want, `NA by label desc=true: 5 ["21.T12345/SVC/NA/R3" "21.T12345/SVC/NA/R2" "21.T12345/SVC/NA/R1"]`) {
		t.Fatalf("before any merge:\n%s", want)
	}
	if p := pendingEntries(t, dumpBucket(t, db, store.BucketSearch)); len(p) != 12 {
		t.Fatalf("pending before the merges: %d entries %q; want 10 records and 2 markers", len(p), p)
	}
	var merged []int
	for {
		n, err := reg.MergeSearch(4)
		if err != nil {
			t.Fatal(err)
		}
		merged = append(merged, n)
		if got := answers(); got != want {
			t.Fatalf("after merging %v:\n%s\nwant\n%s", merged, got, want)
		}
		if n == 0 {
			break
		}
	}
	if !slices.Equal(merged, []int{4, 4, 2, 0}) {
		t.Errorf("merged per call %v; want [4 4 2 0]", merged)
	}
	if p := pendingEntries(t, dumpBucket(t, db, store.BucketSearch)); len(p) != 0 {
		t.Errorf("pending after the merges: %q", p)
	}
}

// RunSearchMerge files what writes leave pending without being asked, and
// returns when its context ends.
func TestRunSearchMerge(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		reg.RunSearchMerge(ctx, 5*time.Millisecond, func(err error) { t.Errorf("merge: %v", err) })
	}()
	h := namer.Full("21.T12345", "NS", "R-1")
	k, _, _ := namer.Key(h)
	st := searchRec(h, "https://example.org/r", "REGISTERED", "Basalt", "", 10, 10)
	if err := reg.Update(func(tx Tx) error { return writeIndexed(tx, k, st) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		dump := dumpBucket(t, db, store.BucketSearch)
		if len(pendingEntries(t, dump)) == 0 && slices.ContainsFunc(dump, func(s string) bool { return strings.Contains(s, `\x00wbasalt\x00`) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still pending after 5 s: %q", dump)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunSearchMerge did not return after its context ended")
	}
}
