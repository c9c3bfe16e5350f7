package registry

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkReindex rebuilds the record indexes over 100,000 records of one
// SNAA's namespace written without them, as `pidnode import` leaves them;
// it reports the seconds and the database file's growth per record.
//
//	go test ./registry -run '^$' -bench BenchmarkReindex -benchtime 1x
func BenchmarkReindex(b *testing.B) {
	const n = 100_000
	db, namer := openTest(b)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.Update(func(tx Tx) error {
		return tx.PutSNAA(&SNAA{ID: "s1", Namespace: "BIG", Prefixes: []string{"21.T12345"}})
	}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 5000 {
		if err := reg.Update(func(tx Tx) error {
			for j := i; j < i+5000; j++ {
				h := namer.Full("21.T12345", "BIG", fmt.Sprintf("R%07d", j*7919%n))
				k, _, err := namer.Key(h)
				if err != nil {
					return err
				}
				st := searchRec(h, fmt.Sprintf("https://data.example.org/items/%d", j), "REGISTERED",
					fmt.Sprintf("Sample %d of lot %d", j, j%97), "A grey powder from the benchmark", int64(1_700_000_000+j), int64(1_700_000_000+j))
				if err := tx.PutRecord(k, st); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	size := func() int64 {
		fi, err := os.Stat(db.Path())
		if err != nil {
			b.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		if _, err := Reindex(db, namer, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(t0).Seconds()/float64(b.N), "s/op")
	b.ReportMetric(float64(size()-before)/n, "file-bytes/record")
}
