package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// result is what one run prints.
type result struct {
	Addr        string         `json:"addr"`
	TargetRate  float64        `json:"target_rate"`
	Duration    float64        `json:"duration_s"`
	Sent        int64          `json:"sent"`
	Completed   int64          `json:"completed"`
	Missed      int64          `json:"missed"`
	Errors      int64          `json:"errors"`
	Achieved    float64        `json:"achieved_rate"`
	Status      map[int]int64  `json:"status"`
	Percentiles map[string]any `json:"latency_ms"`
	Conns       int            `json:"conns"`
	// CPU is the generator's own CPU time during the run, CPUShare that
	// over the run's wall time: near 1 on a one-core generator means the
	// tail includes the generator's own queueing.
	CPU      float64 `json:"cpu_s"`
	CPUShare float64 `json:"cpu_share"`
}

func main() {
	var (
		addr     = flag.String("addr", "127.0.0.1:8000", "server host:port")
		pathFile = flag.String("paths", "bench/data/zipf.paths", "request stream, one path per line")
		prefix   = flag.String("prefix", "", "prepended to every path (e.g. /api/handles)")
		suffix   = flag.String("suffix", "", "appended to every path (e.g. ?noredirect)")
		rate     = flag.Float64("rate", 1000, "requests per second")
		duration = flag.Duration("duration", 10*time.Second, "how long to send")
		conns    = flag.Int("conns", 64, "keep-alive connections (and workers)")
		grace    = flag.Duration("grace", 5*time.Second, "after -duration, how long to wait for late requests")
		seed     = flag.Uint64("seed", 1, "where in the stream to start")
		once     = flag.Bool("once", false, "warm-up mode: send every path of the stream once, closed loop, as fast as -conns allow; ignores -rate and -duration")
	)
	flag.Parse()
	if *rate <= 0 || *duration <= 0 || *conns < 1 {
		fmt.Fprintln(os.Stderr, "openloop: need -rate > 0, -duration > 0, -conns ≥ 1")
		os.Exit(2)
	}
	paths, err := loadPaths(*pathFile, *prefix, *suffix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openloop:", err)
		os.Exit(1)
	}
	var r any
	if *once {
		r = runOnce(*addr, paths, *conns)
	} else {
		r = run(*addr, paths, *rate, *duration, *grace, *conns, *seed)
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

func loadPaths(name, prefix, suffix string) ([][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var paths [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			paths = append(paths, []byte(prefix+sc.Text()+suffix))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no paths", name)
	}
	return paths, nil
}

type worker struct {
	hist   *hdrhistogram.Histogram
	status [600]int64
	errors int64
}

func run(addr string, paths [][]byte, rate float64, duration, grace time.Duration, conns int, seed uint64) *result {
	total := int64(rate * duration.Seconds())
	reqs := buildRequests(addr, paths)
	offset := int64(rand.New(rand.NewPCG(seed, 3)).IntN(len(reqs)))
	interval := float64(time.Second) / rate
	var (
		start    = time.Now().Add(20 * time.Millisecond)
		deadline = start.Add(duration + grace)
		next     atomic.Int64 // the next request to send
		sent     atomic.Int64
		done     atomic.Int64
	)
	cpu0 := cpuTime()
	workers := make([]*worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{hist: hdrhistogram.New(1, 60_000_000, 3)}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every read and write is bounded by the run's hard limit.
			c := &wire{addr: addr, deadline: deadline}
			defer c.close()
			// Each free connection takes the next request and sends it at
			// its intended time, or at once if that has passed (the server
			// or the generator is behind: the delay is measured, not
			// skipped). Requests are paced one by one rather than released
			// in batches by a ticking dispatcher, whose bursts (a tick is a
			// millisecond once the runtime's poller sleeps) queued in the
			// server and showed up as its latency.
			for {
				k := next.Add(1) - 1
				if k >= total {
					return
				}
				intended := start.Add(time.Duration(float64(k) * interval))
				if !intended.Before(deadline) {
					return
				}
				if d := time.Until(intended); d > 0 {
					time.Sleep(d)
				}
				if time.Now().After(deadline) {
					return // past the hard limit: counted as missed
				}
				sent.Add(1)
				status, err := c.roundTrip(reqs[(k+offset)%int64(len(reqs))])
				lat := time.Since(intended)
				if err != nil {
					w.errors++
				} else {
					w.status[status%600]++
				}
				w.hist.RecordValue(max(lat.Microseconds(), 1))
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	h := hdrhistogram.New(1, 60_000_000, 3)
	res := &result{Addr: addr, TargetRate: rate, Duration: duration.Seconds(), Status: map[int]int64{}, Conns: conns}
	for _, w := range workers {
		h.Merge(w.hist)
		res.Errors += w.errors
		for code, n := range w.status {
			if n > 0 {
				res.Status[code] += n
			}
		}
	}
	res.Sent = sent.Load()
	res.Completed = done.Load()
	res.Missed = total - res.Completed
	res.Achieved = float64(res.Completed) / min(elapsed.Seconds(), duration.Seconds()+grace.Seconds())
	res.CPU = (cpuTime() - cpu0).Seconds()
	res.CPUShare = res.CPU / elapsed.Seconds()
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	res.Percentiles = map[string]any{
		"p50": ms(50), "p90": ms(90), "p99": ms(99), "p99.9": ms(99.9),
		"max": float64(h.Max()) / 1000, "mean": h.Mean() / 1000,
	}
	return res
}

// cpuTime is the CPU time (user + system) this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// onceResult is what a -once pass prints.
type onceResult struct {
	Requests int           `json:"requests"`
	Errors   int64         `json:"errors"`
	Status   map[int]int64 `json:"status"`
	Seconds  float64       `json:"seconds"`
}

// runOnce sends every path once (e.g. to fill a cache with exactly the
// stream's distinct handles before a measured run).
func runOnce(addr string, paths [][]byte, conns int) *onceResult {
	reqs := buildRequests(addr, paths)
	var (
		next atomic.Int64
		mu   sync.Mutex
		wg   sync.WaitGroup
		res  = &onceResult{Requests: len(reqs), Status: map[int]int64{}}
	)
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A warm-up pass is bounded too: nothing outlives ten minutes.
			w := &wire{addr: addr, deadline: start.Add(onceLimit)}
			defer w.close()
			status := map[int]int64{}
			var errs int64
			for {
				k := next.Add(1) - 1
				if k >= int64(len(reqs)) {
					break
				}
				code, err := w.roundTrip(reqs[k])
				if err != nil {
					errs++
					continue
				}
				status[code]++
			}
			mu.Lock()
			defer mu.Unlock()
			res.Errors += errs
			for k, v := range status {
				res.Status[k] += v
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	return res
}

// onceLimit bounds a -once warm-up pass.
const onceLimit = 10 * time.Minute
