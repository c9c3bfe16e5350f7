package store

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestWarm: Warm brings in the file up to its bound, stops at once on a
// cancelled context, and ends quietly once the DB is closed.
func TestWarm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pidnode.db")
	db := openTest(t, path, true)
	err := db.Update(func(tx *Tx) error {
		for i := range 3000 {
			s := benchRecord(i)
			k, _ := sampleKey(s.Record.Handle)
			if err := tx.PutRecord(k, &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	if err := db.View(func(tx *Tx) error { size = tx.Bolt().Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || size > fi.Size() || size < warmChunk/4 {
		t.Fatalf("database of %d B (file %v, %v): want some megabytes for several chunks", size, fi.Size(), err)
	}
	for _, tt := range []struct {
		name string
		max  int64
		want int64
	}{
		{name: "whole file", max: 1 << 40, want: size},
		{name: "bounded", max: 8192, want: 8192},
		{name: "nothing", max: 0, want: 0},
	} {
		got, err := db.Warm(context.Background(), tt.max)
		if err != nil || got != tt.want {
			t.Errorf("%s: Warm(%d) = %d, %v; want %d", tt.name, tt.max, got, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := db.Warm(ctx, 1<<40); err != nil || got != 0 {
		t.Errorf("Warm with a cancelled context = %d, %v; want 0, nil", got, err)
	}
	// Close while a warm-up runs: it ends without an error.
	done := make(chan error, 1)
	go func() {
		_, err := db.Warm(context.Background(), 1<<40)
		done <- err
	}()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Warm across Close = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Warm still running 5 s after Close")
	}
}

// TestWarmRead: the file-reading path (other systems, old kernels) brings in
// the same bytes.
func TestWarmRead(t *testing.T) {
	db := openTest(t, "", true)
	var size int64
	if err := db.View(func(tx *Tx) error { size = tx.Bolt().Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	old := populate
	populate = func(uintptr, int64, int64) error { return os.ErrInvalid }
	defer func() { populate = old }()
	if got, err := db.Warm(context.Background(), 1<<40); err != nil || got != size {
		t.Errorf("Warm by reading = %d, %v; want %d", got, err, size)
	}
}

// TestWarmKeepsAProcessor: a chunk the page cache lacks keeps Warm in the
// kernel until the disk answers; in a process of one processor (P) the
// other goroutines keep one meanwhile, as with a commit's fsync.
func TestWarmKeepsAProcessor(t *testing.T) {
	onOneProcessor(t)
	db := openTest(t, "", true)
	var procs []int
	old := populate
	populate = func(base uintptr, off, n int64) error {
		procs = append(procs, runtime.GOMAXPROCS(0))
		return old(base, off, n)
	}
	defer func() { populate = old }()
	if _, err := db.Warm(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	if len(procs) == 0 {
		t.Fatal("Warm never populated the mapping")
	}
	for i, p := range procs {
		if p < 2 {
			t.Fatalf("chunk %d brought in with GOMAXPROCS %d: the other goroutines had no processor while it waited", i, p)
		}
	}
}

// BenchmarkFirstLoads: the first 2000 loads after the database is opened
// (the page cache holds the file; the new mapping has no page mapped yet),
// without and with Warm run before them. One op is one load.
//
//	go test ./store -run '^$' -bench FirstLoads -benchtime 20x -count 6
func BenchmarkFirstLoads(b *testing.B) {
	db, keys := benchDB(b, 100000)
	path := db.Path()
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warmed"
		}
		b.Run(name, func(b *testing.B) {
			const loads = 2000
			n := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				db.Close()
				var err error
				if db, err = Open(Config{Path: path, NoSync: true}); err != nil {
					b.Fatal(err)
				}
				if warm {
					if _, err := db.Warm(context.Background(), 1<<40); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				for j := range loads {
					if _, ok, err := db.Load(keys[(j*7919+i*104729)%len(keys)]); !ok || err != nil {
						b.Fatal(ok, err)
					}
				}
				n += loads
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/load")
		})
	}
	b.Cleanup(func() { db.Close() })
}
