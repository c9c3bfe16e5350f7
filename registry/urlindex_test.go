package registry

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// The URL index of a cluster node, built by ApplyPut from etcd's entries in
// a snapshot's key order (records before SNAAs, docs/product.md §10),
// answers every search an SNAA can make exactly as a single node's index
// built from the same data: records imported before their namespace had an
// SNAA (`pidnode import`, then Reindex; a new node loads them as a
// snapshot, then EnsureIndexes), the namespace approved later
// (IndexNamespace on the single node; the other nodes apply the SNAA entry
// alone), then updated and deleted by the admin API (IndexRecord).
func TestAppliedURLIndexSearchesAsSingleNode(t *testing.T) {
	sdb, namer := openTest(t)
	cdb, _ := openTest(t)
	single, err := New(Config{DB: sdb, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	node, err := New(Config{DB: cdb, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	key := func(prefix, ns, id string) string {
		k, _, err := namer.Key(namer.Full(prefix, ns, id))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rec := func(k, url string) *store.Stored {
		return &store.Stored{Version: 1, Created: time.Unix(1, 0), Updated: time.Unix(1, 0),
			Record: handlev.Record{Handle: k, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte(url)}}}}
	}
	snaa := func(id, ns string) *SNAA {
		return &SNAA{ID: id, Namespace: ns, Prefixes: []string{"21.12345", "21.T12345"}}
	}
	// apply puts records (url "": deleted) and SNAAs on the cluster node as
	// one applied transaction of the next revision, in etcd's key order.
	rev := int64(0)
	apply := func(recs map[string]string, snaas ...*SNAA) {
		t.Helper()
		keys := make([]string, 0, len(recs))
		for k := range recs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		err := node.Update(func(tx Tx) error {
			for _, k := range keys {
				var raw []byte
				if recs[k] != "" {
					var err error
					if raw, err = store.EncodeStored(k, rec(k, recs[k])); err != nil {
						return err
					}
				}
				if err := tx.ApplyPut(string(store.BucketRecords), []byte(k), raw); err != nil {
					return err
				}
			}
			for _, sn := range snaas {
				v, _ := json.Marshal(sn)
				if err := tx.ApplyPut(string(store.BucketSNAAs), []byte(sn.ID), v); err != nil {
					return err
				}
			}
			rev++
			return tx.SetAppliedRevision(rev)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// search lists what a URL search of the SNAA's namespace finds.
	search := func(r *Registry, prefix, ns, url string) []string {
		t.Helper()
		rng, err := r.NamespaceRange(prefix, ns, url)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		err = r.View(func(tx Tx) error {
			return tx.ScanNamespace(true, rng, rng, func(k []byte, st *store.Stored) (bool, error) {
				if st != nil {
					found = append(found, st.Record.Handle+" "+string(st.Record.Values[0].Data))
				}
				return true, nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	same := func(step string, namespaces ...string) {
		t.Helper()
		for _, ns := range namespaces {
			for _, p := range []string{"21.12345", "21.T12345"} {
				for _, url := range []string{"*", "https://example.org/*", "https://example.org/a", "https://example.org/b"} {
					want, got := search(single, p, ns, url), search(node, p, ns, url)
					if !slices.Equal(want, got) {
						t.Errorf("%s: search %s/%s %q: single node finds %q, the applied index %q", step, p, ns, url, want, got)
					}
				}
			}
		}
	}

	// Imported: AAA has an SNAA, BBB not yet.
	recs := map[string]string{
		key("21.12345", "AAA", "1"):  "https://example.org/a",
		key("21.12345", "AAA", "2"):  "https://example.org/b",
		key("21.T12345", "AAA", "3"): "https://example.org/a",
		key("21.12345", "BBB", "1"):  "https://example.org/a",
		key("21.T12345", "BBB", "2"): "https://example.org/b",
	}
	err = single.Update(func(tx Tx) error {
		if err := tx.PutSNAA(snaa("s-a", "AAA")); err != nil {
			return err
		}
		for k, url := range recs {
			if err := tx.PutRecord(k, rec(k, url)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Reindex(sdb, namer, 1); err != nil {
		t.Fatal(err)
	}
	// The cluster node loads them as a snapshot, then builds its indexes
	// as a new node's admin API does at start-up.
	apply(recs, snaa("s-a", "AAA"))
	if _, err := node.EnsureIndexes(); err != nil {
		t.Fatal(err)
	}
	same("imported", "AAA")
	if got := search(single, "21.12345", "AAA", "*"); len(got) != 2 {
		t.Fatalf("the single node's search of AAA finds %q", got)
	}

	// BBB approved: its imported records become searchable.
	if err := single.Update(func(tx Tx) error { return tx.PutSNAA(snaa("s-b", "BBB")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := single.IndexNamespace("BBB"); err != nil {
		t.Fatal(err)
	}
	apply(nil, snaa("s-b", "BBB"))
	same("BBB approved", "AAA", "BBB")
	if got := search(single, "21.T12345", "BBB", "*"); len(got) != 1 {
		t.Fatalf("the single node's search of BBB finds %q", got)
	}

	// Updated (a URL moved) and deleted through the admin API.
	moved, gone := key("21.12345", "BBB", "1"), key("21.12345", "AAA", "2")
	err = single.Update(func(tx Tx) error {
		if err := tx.PutRecord(moved, rec(moved, "https://example.org/b")); err != nil {
			return err
		}
		if err := tx.indexURL(moved, "https://example.org/a", "https://example.org/b"); err != nil {
			return err
		}
		if err := tx.DeleteRecord(gone); err != nil {
			return err
		}
		return tx.indexURL(gone, "https://example.org/b", "")
	})
	if err != nil {
		t.Fatal(err)
	}
	apply(map[string]string{moved: "https://example.org/b", gone: ""})
	same("updated and deleted", "AAA", "BBB")
}
