package registry

import (
	"fmt"
	"testing"
)

// BenchmarkMergeSearch: filing the words of records created pending, in
// batches of MergeBatch; ns/record is the time per record merged (ns/op
// divides a whole batch by b.N).
func BenchmarkMergeSearch(b *testing.B) {
	db, namer := openTest(b)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	merged := 0
	for i := 0; i < b.N; i += MergeBatch {
		b.StopTimer()
		if err := reg.Update(func(tx Tx) error {
			for j := i; j < i+MergeBatch; j++ {
				h := namer.Full("21.T12345", "NS", fmt.Sprintf("R-%d", j))
				k, _, err := namer.Key(h)
				if err != nil {
					return err
				}
				st := searchRec(h, fmt.Sprintf("https://example.org/item/%d", j), "REGISTERED",
					fmt.Sprintf("Sample %d of lot %d", j, j%97), "A grey powder from the benchmark", int64(j), int64(j))
				if err := writeIndexed(tx, k, st); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := reg.MergeSearch(MergeBatch)
		if err != nil || n != MergeBatch {
			b.Fatalf("merged %d, %v", n, err)
		}
		merged += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(merged), "ns/record")
}
