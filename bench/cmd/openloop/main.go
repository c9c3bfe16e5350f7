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
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/valyala/fasthttp"
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
	client := &fasthttp.HostClient{
		Addr:                     addr,
		MaxConns:                 conns,
		ReadTimeout:              10 * time.Second,
		WriteTimeout:             10 * time.Second,
		MaxIdleConnDuration:      time.Minute,
		NoDefaultUserAgentHeader: true,
	}
	// The queue holds due-but-unsent requests; it is large so that the
	// dispatcher never waits for workers (waiting would hide queueing delay).
	jobs := make(chan int64, min(total, 4_000_000))
	offset := int64(rand.New(rand.NewPCG(seed, 3)).IntN(len(paths)))
	interval := float64(time.Second) / rate
	var (
		start    = time.Now().Add(20 * time.Millisecond)
		deadline = start.Add(duration + grace)
		sent     atomic.Int64
		done     atomic.Int64
		stop     atomic.Bool
	)
	workers := make([]*worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{hist: hdrhistogram.New(1, 60_000_000, 3)}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			req.Header.SetHost(addr)
			for k := range jobs {
				if stop.Load() {
					continue // drain: past the hard limit, count as missed
				}
				intended := start.Add(time.Duration(float64(k) * interval))
				req.SetRequestURIBytes(paths[(k+offset)%int64(len(paths))])
				// Do, not DoDeadline: DoDeadline starts a goroutine and a timer
				// per request, which caps one load core near 20k req/s. The
				// client's read/write timeouts bound every request instead.
				err := client.Do(req, resp)
				lat := time.Since(intended)
				if err != nil {
					w.errors++
				} else {
					w.status[resp.StatusCode()%600]++
				}
				w.hist.RecordValue(max(lat.Microseconds(), 1))
				done.Add(1)
			}
		}()
	}
	// Dispatcher: emit every request whose intended time has come. Sleeping
	// coarsely is fine: latency is measured from the intended time.
	go func() {
		time.Sleep(time.Until(start))
		var k int64
		for k < total {
			if time.Now().After(deadline) {
				break
			}
			due := min(total, int64(float64(time.Since(start))/interval)+1)
			for ; k < due; k++ {
				jobs <- k
			}
			sent.Store(k)
			time.Sleep(200 * time.Microsecond)
		}
		close(jobs)
	}()
	timer := time.AfterFunc(time.Until(deadline), func() { stop.Store(true) })
	wg.Wait()
	timer.Stop()
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
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	res.Percentiles = map[string]any{
		"p50": ms(50), "p90": ms(90), "p99": ms(99), "p99.9": ms(99.9),
		"max": float64(h.Max()) / 1000, "mean": h.Mean() / 1000,
	}
	return res
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
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	var (
		next atomic.Int64
		mu   sync.Mutex
		wg   sync.WaitGroup
		res  = &onceResult{Requests: len(paths), Status: map[int]int64{}}
	)
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			req.Header.SetHost(addr)
			status := map[int]int64{}
			var errs int64
			for {
				k := next.Add(1) - 1
				if k >= int64(len(paths)) {
					break
				}
				req.SetRequestURIBytes(paths[k])
				if err := client.Do(req, resp); err != nil {
					errs++
					continue
				}
				status[resp.StatusCode()]++
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
