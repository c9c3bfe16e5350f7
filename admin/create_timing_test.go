package admin

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/registry"
	"pidnode/store"
)

// BenchmarkCreate measures identifier creates per second through the admin
// handler over HTTP with fsync on (store without NoSync), for 1, 16 and 64
// concurrent clients. commits/op below 1 shows concurrent creates sharing a
// commit (bbolt Batch): every commit bumps the meta txid once.
//
//	go test ./admin -run '^$' -bench BenchmarkCreate -benchtime 2000x
func BenchmarkCreate(b *testing.B) {
	for _, clients := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			srv, secret := benchServer(b, false)
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			body := mustJSONf(validPayload())
			txid := func() int {
				var id int
				srv.db.View(func(tx *store.Tx) error { id = tx.Bolt().ID(); return nil })
				return id
			}
			var next atomic.Int64
			var failed atomic.Int64
			start := txid()
			b.ResetTimer()
			t0 := time.Now()
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						req, _ := http.NewRequest("POST", ts.URL+"/pid/v2/handles/21.12345/BEN/", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer "+secret)
						res, err := cl.Do(req)
						if err != nil || res.StatusCode != 201 {
							failed.Add(1)
						}
						if res != nil {
							res.Body.Close()
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(t0)
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d creates failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "creates/s")
			b.ReportMetric(float64(txid()-start)/float64(b.N), "commits/op")
		})
	}
}

// benchSetup onboards an SNAA for benchmarks and returns its key secret.
func benchSetup(b *testing.B, s *Server, ns string) string {
	b.Helper()
	app, err := s.SubmitApplication(ApplicationRequest{Organisation: "Bench Org",
		TechnicalContact: Contact{Name: "T", Email: "t@example.org"}, AdministrativeContact: Contact{Name: "A", Email: "a@example.org"},
		PolicyVersion: "v1", MaintenanceStatement: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Approve(app.ID, ApproveRequest{Namespace: ns})
	if err != nil {
		b.Fatal(err)
	}
	return res.Key.Secret
}

// BenchmarkCreateCPU measures the server's CPU and allocations per create
// through the admin handler in process (no sockets, store without fsync), 16
// writers at once so that creates share commits as they do under load.
// cpu-us/op is the process's user+system CPU time per create.
//
//	go test ./admin -run '^$' -bench BenchmarkCreateCPU -benchmem -benchtime 20000x
func BenchmarkCreateCPU(b *testing.B) {
	srv, secret := benchServer(b, true)
	h := srv.Handler()
	var next, failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				body := fmt.Appendf(nil, `{"url":"https://landing.example.org/bench/%d","metadata":{"status":"REGISTERED",`+
					`"schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"bench@lab.example.org",`+
					`"resource_info":{"label":"Bench sample %d","description":"Created by the benchmark to measure durable creates per second.",`+
					`"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://data.example.org/bench/%d","media_type":"text/turtle","encoding_format":"UTF-8","size":%d}]}}}`,
					i, i, i, 1000+i)
				req := httptest.NewRequest("PUT", "/pid/v2/handles/21.12345/BEN/", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+secret)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	// The words the creates left pending are part of their cost.
	for {
		n, err := srv.reg.MergeSearch(registry.MergeBatch)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	cpu := processCPU() - cpu0
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d creates failed", failed.Load())
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchServer is an admin server over a store in b's temp dir (noSync: no
// fsync per commit) with namespace BEN enrolled; it returns the SNAA's key.
// Both are closed when b ends.
func benchServer(b *testing.B, noSync bool) (*Server, string) {
	b.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(b.TempDir(), "bench.db"), NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	namer, _ := handlev.NewNamer(handlev.NamerConfig{Prefix: testPrefix, TestPrefix: testTestPrefix})
	srv, err := New(Config{DB: db, Namer: namer, OperatorKey: testOpKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	// As a node does (cmd/pidnode): the search index's words are merged
	// beside the writes.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.reg.RunSearchMerge(ctx, 250*time.Millisecond, func(err error) { b.Error(err) })
	}()
	b.Cleanup(func() { cancel(); <-done })
	return srv, benchSetup(b, srv, "BEN")
}
