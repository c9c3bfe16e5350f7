package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// BenchmarkImport imports 50000 JSON lines into a fresh database (synced
// once, at the end) and reports records/s. "sorted" is Export's order; "random"
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

// pid4catLine is import line i shaped like bench/cmd/gen's records (and
// pid4cat's): eight values, two of them JSON texts full of escaped quotes,
// about 1.9 KB.
func pid4catLine(i int) []byte {
	const ts = 1741687153
	v := func(idx int32, typ, data string) handlev.Value {
		return handlev.Value{Index: idx, Type: typ, Data: []byte(data), TTL: 86400, Timestamp: ts, Perm: handlev.PermDefault}
	}
	resource := fmt.Sprintf(`{"label":"Sample %d XRD platinum","description":"Measured pattern of XRD ammonia on platinum activity; pattern catalyst batch %d.","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://data.example.org/objects/%d/0","media_type":"text/turtle","encoding_format":"UTF-8","size":%d},{"variant_url":"https://data.example.org/objects/%d/1","media_type":"application/ld+json","encoding_format":"UTF-8","size":%d}]}`, i, i, i, 9000000+i, i, 9100000+i)
	changes := fmt.Sprintf(`[{"datetime_log":"2025-03-11T09:59:13Z","has_agent":{"name":"Bench SNAA","email_address":"snaa@lab.example.org","role":"OWNER"},"changed_field":"STATUS","description":"created, record %d"}]`, i)
	vs := []handlev.Value{
		v(1, handlev.TypeURL, fmt.Sprintf("https://landing.example.org/BNC/item/%d", i)),
		v(10, handlev.TypeEmail, fmt.Sprintf("curation-%d@lab.example.org", i%997)),
		v(11, handlev.TypeStatus, "REGISTERED"),
		v(12, "SCHEMA_VER", "v1.0.1"),
		v(13, "METADATA_LICENSE", "CC0-1.0"),
		v(14, "RESOURCE", resource),
		v(16, "CHANGES", changes),
		v(100, handlev.TypeAdmin, string(handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/21.T12345", Index: 200}))),
	}
	h := fmt.Sprintf("21.T12345/svc/BNC/%04X-%04X-%c", uint32(i*2654435761)>>16, uint32(i*40503)&0xFFFF, 'A'+i%26)
	return append(handlev.AppendRecordJSON(nil, h, vs), '\n')
}

// BenchmarkImportPid4cat imports 50000 pid4cat-shaped lines, in random key
// order, into a fresh database, whole ("import") and by phase: "decode" is
// what a parse worker does (JSON to stored encoding, checks included), "write"
// the writing alone (sorted, encoded records merged into a fresh bbolt file,
// checked, synced once and renamed over the database).
// Reports records/s; run it with -cpu 1 on a pinned core to compare with
// `pidnode import` under taskset.
func BenchmarkImportPid4cat(b *testing.B) {
	const n = 50000
	var in []byte
	for i := range n {
		in = append(in, pid4catLine(i)...)
	}
	b.Run("import", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
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
			if got, err := db.Import(bytes.NewReader(in), sampleKey); err != nil || got != n {
				b.Fatal(got, err)
			}
			b.StopTimer()
			db.Close()
			os.Remove(db.Path())
			b.StartTimer()
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	lines := bytes.SplitAfter(in, []byte("\n"))
	lines = lines[:len(lines)-1]
	var batches []*parseBatch
	for i := 0; i < n; i += parseBatchLines {
		pb := &parseBatch{}
		for j := i; j < min(i+parseBatchLines, n); j++ {
			pb.buf = append(pb.buf, bytes.TrimSpace(lines[j])...)
			pb.ends = append(pb.ends, len(pb.buf))
			pb.lineNos = append(pb.lineNos, j+1)
		}
		batches = append(batches, pb)
	}
	decodeAll := func(b *testing.B) []importRec {
		var recs []importRec
		for _, pb := range batches {
			ends, nos := pb.ends, pb.lineNos
			pb.decode()
			if pb.err != nil {
				b.Fatal(pb.err)
			}
			recs = append(recs, pb.recs...)
			pb.ends, pb.lineNos = ends, nos
		}
		return recs
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			decodeAll(b)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("write", func(b *testing.B) {
		recs := decodeAll(b)
		sorted := make([]sortedRec, len(recs))
		for i, r := range recs {
			k, _ := sampleKey(r.handle)
			sorted[i] = sortedRec{key: []byte(k), val: r.val, line: r.line}
		}
		slices.SortFunc(sorted, cmpSortedRec)
		dir := b.TempDir()
		it := 0
		for b.Loop() {
			b.StopTimer()
			it++
			db, err := Open(Config{Path: filepath.Join(dir, fmt.Sprintf("w%d.db", it))})
			if err != nil {
				b.Fatal(err)
			}
			src := &memRun{recs: slices.Clone(sorted)}
			b.StartTimer()
			if got, err := db.writeImport(src, 0, func() {}); err != nil || got != n {
				b.Fatal(got, err)
			}
			b.StopTimer()
			db.Close()
			os.Remove(db.Path())
			b.StartTimer()
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
