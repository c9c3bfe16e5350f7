package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"pidnode/bench/internal/enrol"
)

func main() {
	var (
		addr     = flag.String("addr", "127.0.0.1:8001", "admin listener host:port")
		keyFile  = flag.String("operator-key-file", "", "file holding the operator key")
		prefix   = flag.String("prefix", "21.T12345", "prefix to write under")
		base     = flag.String("base", "/testpid/v2", "API base for -prefix (/pid/v2 or /testpid/v2)")
		clients  = flag.String("clients", "1,16,64", "comma-separated client counts")
		duration = flag.Duration("duration", 10*time.Second, "run time per client count")
	)
	flag.Parse()
	opKey, err := os.ReadFile(*keyFile)
	if err != nil {
		fail(err)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	root := "http://" + *addr
	ns, key, err := enrol.SNAA(hc, root, strings.TrimSpace(string(opKey)), *prefix, "pidnode bench")
	if err != nil {
		fail(err)
	}
	url := root + *base + "/handles/" + *prefix + "/" + ns + "/"
	for _, f := range strings.Split(*clients, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			fail(fmt.Errorf("bad -clients entry %q", f))
		}
		out, _ := json.Marshal(load(hc, url, key, c, *duration))
		fmt.Println(string(out))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "admincreate:", err)
	os.Exit(1)
}

type result struct {
	Clients  int            `json:"clients"`
	Created  int            `json:"created"`
	Rate     float64        `json:"creates_per_s"`
	Status   map[int]int    `json:"status"`
	Errors   int            `json:"errors"`
	Latency  map[string]any `json:"latency_ms"`
	Duration float64        `json:"duration_s"`
}

func load(hc *http.Client, url, key string, clients int, d time.Duration) *result {
	var (
		mu   sync.Mutex
		res  = &result{Clients: clients, Status: map[int]int{}}
		lats []float64
		wg   sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(d)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var my []float64
			status := map[int]int{}
			errs := 0
			for i := 0; time.Now().Before(end); i++ {
				body := payload(c, i)
				t0 := time.Now()
				req, _ := http.NewRequest("PUT", url, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					errs++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status[resp.StatusCode]++
				my = append(my, float64(time.Since(t0).Microseconds())/1000)
				if resp.StatusCode == http.StatusTooManyRequests {
					time.Sleep(10 * time.Millisecond)
				}
			}
			mu.Lock()
			lats = append(lats, my...)
			for k, v := range status {
				res.Status[k] += v
			}
			res.Errors += errs
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	res.Duration = el
	res.Created = res.Status[http.StatusCreated]
	res.Rate = float64(res.Created) / el
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

// payload is a valid create under the default (pid4cat) metadata model.
func payload(c, i int) []byte {
	return []byte(fmt.Sprintf(`{"url":"https://landing.example.org/bench/%d/%d","metadata":{"status":"REGISTERED",`+
		`"schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"bench@lab.example.org",`+
		`"resource_info":{"label":"Bench sample %d/%d","description":"Created by bench/cmd/admincreate to measure durable creates per second.",`+
		`"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://data.example.org/bench/%d/%d","media_type":"text/turtle","encoding_format":"UTF-8","size":%d}]}}}`,
		c, i, c, i, c, i, 1000+i))
}
