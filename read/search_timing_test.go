package read

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/storetest"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// materials are the words the benchmark's labels are made of: each label
// has one of them, so each word is in one identifier of len(materials).
var materials = func() []string {
	base := []string{"alumina", "zeolite", "silica", "ceria", "titania", "zirconia", "perovskite", "spinel", "hydrotalcite", "carbon"}
	var out []string
	for _, b := range base {
		for i := range 10 {
			out = append(out, fmt.Sprintf("%s%c", b, 'a'+i))
		}
	}
	return out // 100 words
}()

// BenchmarkSearch1M: the namespace list's search (Reader.Search, which the
// API's GET …/{ns}/?q= and the console's list call) over one SNAA's
// namespace of 1,000,000 identifiers (PIDNODE_BENCH_SEARCH_N overrides),
// filed through registry.Tx.IndexRecord as the write service files them,
// in transactions of 10,000. Building the namespace takes minutes and is
// not timed.
func BenchmarkSearch1M(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("PIDNODE_BENCH_SEARCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	db, namer := storetest.Open(b)
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index})
	if err != nil {
		b.Fatal(err)
	}
	const prefix, ns = "21.12345", "BENCH"
	t0 := time.Unix(1_700_000_000, 0)
	start := time.Now()
	for from := 0; from < n; from += 10_000 {
		err := reg.Update(func(tx registry.Tx) error {
			for i := from; i < min(from+10_000, n); i++ {
				h := namer.Full(prefix, ns, fmt.Sprintf("B%07d", i))
				k, _, _ := namer.Key(h)
				status := "REGISTERED"
				if i%100 == 0 {
					status = "OBSOLETED"
				}
				res := fmt.Sprintf(`{"label":"Sample %07d %s","description":"A catalyst sample of batch %d, measured at station %d.","resource_category":"SAMPLE"}`,
					i, materials[i%len(materials)], i/1000, i%37)
				st := &store.Stored{Version: 1, Created: t0.Add(time.Duration(i) * time.Second), Updated: t0.Add(time.Duration(n-i) * time.Second),
					Record: handlev.Record{Handle: h, Values: []handlev.Value{
						{Index: 1, Type: "URL", Data: []byte(fmt.Sprintf("https://repository.example.org/samples/%07d", i))},
						{Index: 11, Type: "STATUS", Data: []byte(status)},
						{Index: 14, Type: "RESOURCE", Data: []byte(res)},
					}}}
				if err := tx.PutRecord(k, st); err != nil {
					return err
				}
				if err := tx.IndexRecord(k, nil, st); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d identifiers filed in %v", n, time.Since(start).Round(time.Second))
	r, err := New(Config{DB: db, Registry: reg, Namer: namer, Model: mod, PublicURL: "https://hdl.example.org/"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		q    SearchQuery
	}{
		{"first-page-by-id", SearchQuery{}},
		{"page-1000-by-label", SearchQuery{Sort: "label", Page: 1000}},
		{"last-changed-first", SearchQuery{Sort: "-changed"}},
		{"status-1pct", SearchQuery{Status: "OBSOLETED"}},
		{"word-1pct-by-label", SearchQuery{Q: "zeolitec", Sort: "label"}},
		{"two-words", SearchQuery{Q: "zeolitec 0004"}},
		{"an-id", SearchQuery{Q: "B0012345"}},
		{"a-number", SearchQuery{Q: "0054321"}},
	} {
		q := c.q
		if q.Page == 0 {
			q.Page = 1
		}
		q.PageSize = 50
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Search(prefix, ns, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
