package resolver

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// The cache-miss path (bench/results: the uniform run over N records with a
// cache of 1 % of N): a real bbolt store with missRecords records shaped like
// bench/cmd/gen's, a cache of missCache entries and uniformly drawn keys, so
// nearly every request loads, decodes and renders a record.
const (
	missRecords = 100_000
	missCache   = 1_000
)

// missRecord is record i in the layout bench/cmd/gen writes: URL, EMAIL,
// STATUS, SCHEMA_VER, METADATA_LICENSE, a few hundred bytes of RESOURCE JSON,
// a CHANGES log and HS_ADMIN.
func missRecord(i int, handle string) handlev.Record {
	ts := int64(1741683600 + i%86400*7)
	val := func(idx int32, typ, data string) handlev.Value {
		return handlev.Value{Index: idx, Type: typ, Data: []byte(data), TTLType: handlev.TTLRelative, TTL: 86400,
			Timestamp: ts, Perm: handlev.PermDefault}
	}
	n := strconv.Itoa(i)
	resource := `{"label":"Sample ` + n + ` catalyst zeolite","description":"Measured operando of spectroscopy reactor on kinetics oxide; ammonia synthesis batch ` +
		strconv.Itoa(i%1000) + `.","resource_category":"SAMPLE","representation_variants":[` +
		`{"variant_url":"https://data.example.org/objects/` + n + `/0","media_type":"text/turtle","encoding_format":"UTF-8","size":1234567},` +
		`{"variant_url":"https://data.example.org/objects/` + n + `/1","media_type":"application/ld+json","encoding_format":"UTF-8","size":7654321}]}`
	changes := `[{"datetime_log":"` + time.Unix(ts, 0).UTC().Format(time.RFC3339) +
		`","has_agent":{"name":"Bench SNAA","email_address":"snaa@lab.example.org","role":"OWNER"},"changed_field":"STATUS","description":"created, record ` + n + `"}]`
	admin := val(100, handlev.TypeAdmin, "")
	admin.Data = handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/" + tTestPrefix, Index: 200})
	return handlev.Record{Handle: handle, Values: []handlev.Value{
		val(1, handlev.TypeURL, "https://landing.example.org/BNC/item/"+n),
		val(10, handlev.TypeEmail, "curation-"+strconv.Itoa(i%997)+"@lab.example.org"),
		val(11, handlev.TypeStatus, "REGISTERED"),
		val(12, "SCHEMA_VER", "v1.0.1"),
		val(13, "METADATA_LICENSE", "CC0-1.0"),
		val(14, "RESOURCE", resource),
		val(16, "CHANGES", changes),
		admin,
	}}
}

// missStore fills a store in tb's temp dir with missRecords records and
// returns it with the request paths.
func missStore(tb testing.TB, namer *handlev.Namer) (*store.DB, []string) {
	tb.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(tb.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	paths := make([]string, missRecords)
	const batch = 10_000
	for lo := 0; lo < missRecords; lo += batch {
		err := db.Update(func(tx *store.Tx) error {
			for i := lo; i < min(lo+batch, missRecords); i++ {
				id := strconv.Itoa(i)
				handle := tTestPrefix + "/svc/BNC/M" + id
				paths[i] = "/" + handle
				key, _, err := namer.Key(handle)
				if err != nil {
					return err
				}
				if err := tx.PutRecord(key, &store.Stored{Record: missRecord(i, handle), Version: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return db, paths
}

// BenchmarkRedirectMiss: GET /{handle} for uniformly drawn handles out of
// 100k records with a cache of 1k entries (so 99 % miss). Besides ns/op it
// reports the handler thread's CPU time per request (cpu-ns/op), which a
// loaded machine disturbs less than wall time.
//
//	go test ./resolver -run '^$' -bench RedirectMiss -benchtime 50000x -cpuprofile miss.prof
func BenchmarkRedirectMiss(b *testing.B) { benchRedirectMiss(b, nil, 0) }

// BenchmarkRedirectMissCounted is BenchmarkRedirectMiss with resolution
// statistics on, as pidnode serve runs: every miss is also counted (nearly
// every key is new to the Counter in a uniform stream), and the Counter is
// drained every missDrainEvery requests, as the statistics flusher does
// (its writes are not part of this benchmark).
func BenchmarkRedirectMissCounted(b *testing.B) { benchRedirectMiss(b, cache.NewCounter(0), 0) }

// BenchmarkRedirectMissHit is BenchmarkRedirectMiss's server and store
// answering from its cache: uniform over missCache/2 records requested
// before, so that one run gives the miss/hit ratio.
//
//	go test ./resolver -run '^$' -bench 'RedirectMiss' -benchtime 300000x
func BenchmarkRedirectMissHit(b *testing.B) { benchRedirectMiss(b, nil, missCache/2) }

// missDrainEvery is how often BenchmarkRedirectMissCounted drains: the
// server's flusher drains every --stats-interval, and sooner once the table
// is at half its bound, which under uniform misses comes first.
const missDrainEvery = 10_000

// benchRedirectMiss draws from every record, or from the first hot ones
// (each requested before the timer starts, so they are in the cache).
func benchRedirectMiss(b *testing.B, counter *cache.Counter, hot int) {
	namer := newNamer(b)
	db, paths := missStore(b, namer)
	c, err := cache.New(cache.Config{Source: db, Alt: namer.AppendAltKey, Render: Render, Entries: missCache})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Cache: c, Namer: namer, PublicURL: tPublicURL, Counter: counter})
	if err != nil {
		b.Fatal(err)
	}
	var req fasthttp.Request
	req.Header.SetHost("resolver.test")
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, memAddr, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = rng.IntN(len(paths))
		if hot > 0 {
			order[i] = rng.IntN(hot)
		}
	}
	for i := range hot * 3 { // the doorkeeper admits a key seen before
		ctx.Request.SetRequestURI(paths[i%hot])
		srv.Handler(&ctx)
	}
	runtime.GC()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := threadCPU()
	n := 0
	for b.Loop() {
		ctx.Request.SetRequestURI(paths[order[n&(len(order)-1)]])
		ctx.Response.Reset()
		srv.Handler(&ctx)
		if counter != nil && n%missDrainEvery == missDrainEvery-1 {
			counter.Drain(func(string, uint64) {})
		}
		if ctx.Response.StatusCode() != fasthttp.StatusFound {
			b.Fatalf("GET %s: status %d", paths[order[n&(len(order)-1)]], ctx.Response.StatusCode())
		}
		n++
	}
	b.ReportMetric(float64((threadCPU()-start).Nanoseconds())/float64(n), "cpu-ns/op")
	st := c.Stats()
	b.ReportMetric(100*float64(st.Misses)/float64(st.Hits+st.Misses), "%miss")
}
