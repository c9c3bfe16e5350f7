package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"pidnode/handlev"
)

// benchRecord is a typical minted identifier: URL, STATUS, a few metadata
// values and HS_ADMIN.
func benchRecord(i int) Stored {
	h := fmt.Sprintf("21.T11148/svc/DS/%04X-%04X-%d", i>>16, i&0xFFFF, i%10)
	return Stored{Version: 1, Record: handlev.Record{Handle: h, Values: []handlev.Value{
		{Index: 1, Type: handlev.TypeURL, Data: []byte("https://repository.example.org/datasets/" + h), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermDefault},
		{Index: 2, Type: handlev.TypeStatus, Data: []byte("REGISTERED"), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermDefault},
		{Index: 3, Type: "RESOURCE_INFO", Data: []byte(`{"title":"A data set","creator":"Someone","license":"CC-BY-4.0"}`), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermDefault},
		{Index: 100, Type: handlev.TypeAdmin, Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/21.T11148", Index: 200}), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermAdminRead | handlev.PermAdminWrite},
	}}}
}

func benchDB(b *testing.B, n int) (*DB, []string) {
	b.Helper()
	db := openTest(b, "", true)
	keys := make([]string, n)
	for start := 0; start < n; start += 10000 {
		err := db.Update(func(tx *Tx) error {
			for i := start; i < min(start+10000, n); i++ {
				s := benchRecord(i)
				keys[i], _ = sampleKey(s.Record.Handle)
				if err := tx.PutRecord(keys[i], &s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return db, keys
}

// BenchmarkLoad is the cache-miss path: one read transaction and a decode into
// owned memory.
func BenchmarkLoad(b *testing.B) {
	db, keys := benchDB(b, 100000)
	b.ReportAllocs()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok, err := db.Load(keys[i%len(keys)]); !ok || err != nil {
				b.Fatal(ok, err)
			}
			i += 7919
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var seed atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(seed.Add(1)) * 104729
			for pb.Next() {
				if _, ok, err := db.Load(keys[i%len(keys)]); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i += 7919
			}
		})
	})
}

// BenchmarkImport imports 50000 JSON lines into a fresh database (with fsync,
// one per chunk) and reports records/s. "sorted" is Export's order; "random"
// the same lines shuffled, as an import from elsewhere arrives: every record
// then lands on its own leaf page.
func BenchmarkImport(b *testing.B) {
	const n = 50000
	src, _ := benchDB(b, n)
	var jsonl bytes.Buffer
	if err := src.Export(&jsonl); err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(jsonl.Bytes(), []byte("\n"))
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	for _, in := range []struct {
		name string
		data []byte
	}{{"sorted", jsonl.Bytes()}, {"random", bytes.Join(lines, nil)}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			dir := b.TempDir()
			it := 0
			for b.Loop() {
				b.StopTimer()
				it++
				db, err := Open(Config{Path: filepath.Join(dir, fmt.Sprintf("imp%d.db", it))})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				got, err := db.Import(bytes.NewReader(in.data), sampleKey)
				if err != nil || got != n {
					b.Fatal(got, err)
				}
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkUpdateParallel: concurrent single-record writes through Update with
// fsync, as the admin API does them; reports how many writes share a commit.
func BenchmarkUpdateParallel(b *testing.B) {
	db := openTest(b, "", false)
	var (
		n       atomic.Int64
		mu      sync.Mutex
		commits = map[int]bool{}
	)
	b.ReportAllocs()
	b.SetParallelism(16) // 16×GOMAXPROCS writers, like many admin clients
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := benchRecord(int(n.Add(1)))
			key, _ := sampleKey(s.Record.Handle)
			var id int
			err := db.Update(func(tx *Tx) error {
				id = tx.Bolt().ID()
				return tx.PutRecord(key, &s)
			})
			if err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			commits[id] = true
			mu.Unlock()
		}
	})
	b.ReportMetric(float64(n.Load())/float64(len(commits)), "writes/commit")
}
