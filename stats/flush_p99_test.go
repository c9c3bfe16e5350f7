package stats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// statsBenchKeys is the number of distinct identifiers counted per flush in
// the benchmark: the N = 1M Zipf stream of make bench has 41,599.
const statsBenchKeys = 41600

// BenchmarkFlushStats measures one statistics flush of statsBenchKeys
// identifiers whose day keys already exist (the steady state: every flush
// after the first of the day adds to existing counts).
func BenchmarkFlushStats(b *testing.B) {
	srv, countAll := newStatsBench(b)
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		countAll()
		c0 := cpuTime()
		b.StartTimer()
		if err := srv.Flush(); err != nil {
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

// newStatsBench returns a statistics service on a fresh store and a function
// that counts one resolution of each of statsBenchKeys identifiers, after one
// flush (the day's keys exist, as they do after the first flush of a day).
func newStatsBench(b *testing.B) (*Service, func()) {
	db, err := store.Open(store.Config{Path: filepath.Join(b.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		b.Fatal(err)
	}
	counter := cache.NewCounter(0)
	srv := New(Config{DB: db, Namer: namer, Counter: counter,
		Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }})
	keys := make([]string, statsBenchKeys)
	for i := range keys {
		if keys[i], _, err = namer.Key(namer.Full("21.12345", "BNC", fmt.Sprintf("%04X-%04X-X", i/7919, i%7919))); err != nil {
			b.Fatal(err)
		}
	}
	countAll := func() {
		for _, k := range keys {
			counter.Count(k)
		}
	}
	countAll()
	if err := srv.Flush(); err != nil {
		b.Fatal(err)
	}
	return srv, countAll
}

// BenchmarkFlushStatsStall measures what a statistics flush costs the
// resolvers' latency when they share one P with it (GOMAXPROCS 1, as in
// make bench, where the server is pinned to one CPU): an echo goroutine
// here answers a pinger process (this test binary, TestFlushStatsPinger) that
// sends a timestamp every 500 µs over loopback TCP, open loop, while the
// benchmark flushes statsBenchKeys identifiers. The reported round-trip times
// are those of the pings sent while a flush ran.
//
//	go test ./stats -run '^$' -bench FlushStatsStall -benchtime 5x
func BenchmarkFlushStatsStall(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	srv, countAll := newStatsBench(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c) // echo
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFlushStatsPinger$")
	cmd.Env = append(os.Environ(), "PIDNODE_PINGER_ADDR="+ln.Addr().String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // connected, steady
	var flushes [][2]int64             // Unix ns
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		countAll()
		time.Sleep(20 * time.Millisecond)
		b.StartTimer()
		t0 := time.Now().UnixNano()
		if err := srv.Flush(); err != nil {
			b.Fatal(err)
		}
		flushes = append(flushes, [2]int64{t0, time.Now().UnixNano()})
	}
	b.StopTimer()
	time.Sleep(100 * time.Millisecond)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("pinger: %v: %s", err, out.Bytes())
	}
	var rtt []float64 // ms, of the pings sent during a flush
	for _, f := range strings.Fields(out.String()) {
		sent, ms, ok := strings.Cut(f, ":")
		at, err1 := strconv.ParseInt(sent, 10, 64)
		v, err2 := strconv.ParseFloat(ms, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		for _, fl := range flushes {
			if at >= fl[0] && at < fl[1] {
				rtt = append(rtt, v)
				break
			}
		}
	}
	if len(rtt) == 0 {
		b.Fatalf("pinger reported nothing: %s", out.Bytes())
	}
	slices.Sort(rtt)
	b.ReportMetric(rtt[len(rtt)*99/100], "p99-rtt-ms")
	b.ReportMetric(rtt[len(rtt)*999/1000], "p99.9-rtt-ms")
	b.ReportMetric(rtt[len(rtt)-1], "max-rtt-ms")
}

// TestFlushStatsPinger is BenchmarkFlushStatsStall's pinger process (skipped
// unless PIDNODE_PINGER_ADDR is set): every 500 µs it sends its clock, reads
// the echoes, and when its stdin closes prints "sent:rtt" for each, the time
// sent in Unix ns and the round trip in ms.
func TestFlushStatsPinger(t *testing.T) {
	addr := os.Getenv("PIDNODE_PINGER_ADDR")
	if addr == "" {
		t.Skip("the pinger of BenchmarkFlushStatsStall")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	go func() {
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		var buf [8]byte
		for {
			select {
			case <-done:
				c.(*net.TCPConn).CloseWrite()
				return
			case <-tick.C:
				binary.BigEndian.PutUint64(buf[:], uint64(time.Now().UnixNano()))
				if _, err := c.Write(buf[:]); err != nil {
					return
				}
			}
		}
	}()
	var buf [8]byte
	var out []byte
	for {
		if _, err := io.ReadFull(c, buf[:]); err != nil {
			break
		}
		sent := int64(binary.BigEndian.Uint64(buf[:]))
		out = strconv.AppendInt(out, sent, 10)
		out = append(out, ':')
		out = strconv.AppendFloat(out, float64(time.Now().UnixNano()-sent)/1e6, 'f', 3, 64)
		out = append(out, ' ')
	}
	os.Stdout.Write(out)
}
