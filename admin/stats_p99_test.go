package admin

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// statsBenchKeys is the number of distinct identifiers counted per flush in
// the benchmark: the N = 1M Zipf stream of bench/run.sh has 41,599.
const statsBenchKeys = 41600

// BenchmarkFlushStats measures one statistics flush of statsBenchKeys
// identifiers whose day keys already exist (the steady state: every flush
// after the first of the day adds to existing counts).
func BenchmarkFlushStats(b *testing.B) {
	db, err := store.Open(store.Config{Path: filepath.Join(b.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: testPrefix, TestPrefix: testTestPrefix})
	if err != nil {
		b.Fatal(err)
	}
	counter := cache.NewCounter(0)
	srv, err := New(Config{DB: db, Namer: namer, OperatorKey: testOpKey, Counter: counter,
		Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	keys := make([]string, statsBenchKeys)
	for i := range keys {
		if keys[i], _, err = namer.Key(namer.Full(testPrefix, "BNC", fmt.Sprintf("%04X-%04X-X", i/7919, i%7919))); err != nil {
			b.Fatal(err)
		}
	}
	countAll := func() {
		for _, k := range keys {
			counter.Count(k)
		}
	}
	countAll()
	if err := srv.FlushStats(); err != nil { // the day's keys now exist
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		countAll()
		c0 := cpuTime()
		b.StartTimer()
		if err := srv.FlushStats(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - c0
		b.StartTimer()
	}
	// Wall time includes the batch delay and fsync waits, when the resolvers
	// have the processor; CPU time is what the flush takes from them.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
