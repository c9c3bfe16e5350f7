package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"pidnode/resolver/hdl"
)

func main() {
	var (
		addr     = flag.String("addr", "127.0.0.1:2641", "hdl listener host:port")
		pathFile = flag.String("paths", "bench/data/zipf.paths", "request stream, one /handle per line")
		clients  = flag.Int("clients", 32, "concurrent clients")
		duration = flag.Duration("duration", 10*time.Second, "run time per protocol")
		protos   = flag.String("protos", "udp,tcp", "protocols to run, in order")
	)
	flag.Parse()
	handles, err := load(*pathFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hdlload:", err)
		os.Exit(1)
	}
	for _, p := range strings.Split(*protos, ",") {
		r := run(*addr, p == "udp", handles, *clients, *duration)
		r.Proto = p
		out, _ := json.Marshal(r)
		fmt.Println(string(out))
	}
}

func load(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h := strings.TrimPrefix(sc.Text(), "/"); h != "" {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("%s: no handles", name)
	}
	return hs, sc.Err()
}

type result struct {
	Proto   string         `json:"proto"`
	Clients int            `json:"clients"`
	Queries int            `json:"queries"`
	QPS     float64        `json:"qps"`
	Codes   map[uint32]int `json:"response_codes"`
	Errors  int            `json:"errors"`
	Latency map[string]any `json:"latency_ms"`
}

func run(addr string, udp bool, handles []string, clients int, d time.Duration) *result {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		lats []float64
		res  = &result{Clients: clients, Codes: map[uint32]int{}}
	)
	start := time.Now()
	end := start.Add(d)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			cl := &hdl.Client{Addr: addr, UDP: udp, Timeout: 2 * time.Second}
			codes := map[uint32]int{}
			var my []float64
			errs := 0
			for i := c * 7919; time.Now().Before(end); i++ {
				t0 := time.Now()
				r, err := cl.Resolve(context.Background(), handles[i%len(handles)], nil, nil, 0)
				if err != nil {
					errs++
					continue
				}
				codes[r.Header.ResponseCode]++
				my = append(my, float64(time.Since(t0).Microseconds())/1000)
			}
			mu.Lock()
			defer mu.Unlock()
			lats = append(lats, my...)
			res.Errors += errs
			for k, v := range codes {
				res.Codes[k] += v
			}
		}(c)
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	res.Queries = len(lats)
	res.QPS = float64(res.Codes[1]) / el
	sort.Float64s(lats)
	q := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return lats[min(len(lats)-1, int(p*float64(len(lats))))]
	}
	res.Latency = map[string]any{"p50": q(0.5), "p99": q(0.99), "max": q(1)}
	return res
}
