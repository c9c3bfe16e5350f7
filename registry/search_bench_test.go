package registry

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"pidnode/store"
)

// BenchmarkSearch1M answers searches over one namespace of 1,000,000
// identifiers (100,000 with -short), written through the registry with
// their index in transactions of 2,000, each merged (MergeSearch) but the
// last, whose 2,000 records stay pending as a node's latest creates do
// (the setup takes a minute or two).
// Labels draw on 200 words, descriptions on 2,000; one record in ten is
// SUBMITTED, the others REGISTERED. ms/op is one Search of a 20-record
// page.
//
//	go test ./registry -run '^$' -bench BenchmarkSearch1M -benchtime 20x
func BenchmarkSearch1M(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	db, namer := openTest(b)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		b.Fatal(err)
	}
	nsp, err := reg.NamespaceKey("21.T12345", "BIG")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	const alpha = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	word := func(prefix string, i int) string {
		s := prefix
		for ; i > 0 || len(s) < len(prefix)+3; i /= 26 {
			s += string(rune('a' + i%26))
		}
		return s
	}
	var firstID string
	t0 := time.Now()
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i += 2000 {
		err := reg.Update(func(tx Tx) error {
			for j := i; j < i+2000 && j < n; j++ {
				id := make([]byte, 11)
				for x := range id {
					id[x] = alpha[rng.Intn(32)]
				}
				id[4], id[9] = '-', '-'
				if firstID == "" {
					firstID = string(id[:4])
				}
				h := namer.Full("21.T12345", "BIG", string(id))
				k, _, err := namer.Key(h)
				if err != nil {
					return err
				}
				status := "REGISTERED"
				if rng.Intn(10) == 0 {
					status = "SUBMITTED"
				}
				desc := ""
				for w := 0; w < 8; w++ {
					desc += word("d", rng.Intn(2000)) + " "
				}
				created = created.Add(time.Second)
				st := searchRec(h, fmt.Sprintf("https://data.example.org/items/%d", j), status,
					fmt.Sprintf("%s sample %d", word("l", rng.Intn(200)), j), desc, 0, 0)
				st.Created, st.Updated = created, created
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
		// As a node's merge does (cmd/pidnode), but for the last
		// transaction's records: the searches check them one by one.
		if i+2000 < n {
			if _, err := reg.MergeSearch(MergeBatch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("%d records written and indexed in %v", n, time.Since(t0).Round(time.Second))
	for _, c := range []struct {
		name string
		q    SearchQuery
	}{
		{"list-by-id", SearchQuery{}},
		{"list-by-label", SearchQuery{Sort: SortLabel}},
		{"list-by-changed-desc", SearchQuery{Sort: SortChanged, Desc: true}},
		{"status-by-id", SearchQuery{Status: "SUBMITTED"}},
		{"status-by-created", SearchQuery{Status: "SUBMITTED", Sort: SortCreated}},
		{"page-500-by-id", SearchQuery{Offset: 10000}},
		{"id-prefix", SearchQuery{Words: SearchWords(firstID)}},
		{"label-word", SearchQuery{Words: []string{word("l", 7)}, Sort: SortLabel}},
		{"description-word", SearchQuery{Words: []string{word("d", 42)}, Sort: SortChanged, Desc: true}},
		{"two-words", SearchQuery{Words: []string{word("d", 42), word("l", 7)}}},
		{"word-and-status", SearchQuery{Words: []string{word("d", 42)}, Status: "SUBMITTED"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			q.Limit = 20
			var total int
			t0 := time.Now()
			for range b.N {
				err := db.View(func(stx *store.Tx) error {
					var err error
					_, total, err = Tx{stx, reg}.Search(nsp, q)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1000/float64(b.N), "ms/op")
			b.ReportMetric(float64(total), "matches")
		})
	}
}
