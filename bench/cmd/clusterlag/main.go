// Command clusterlag measures a cluster's replication lag: it creates
// identifiers through one node's admin API at a fixed rate (open loop) and,
// for each, polls another node's resolver until the identifier resolves
// there. The lag of a create is the time from its 201 on the writing node to
// its first 200 on the reading node. It prints one JSON object.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"pidnode/bench/internal/enrol"
)

func main() {
	var (
		write    = flag.String("write", "127.0.0.1:8011", "admin listener of the writing node")
		read     = flag.String("read", "127.0.0.1:8020", "resolver listener of the reading node")
		keyFile  = flag.String("operator-key-file", "", "operator key of the writing node")
		prefix   = flag.String("prefix", "21.T12345", "prefix to write under")
		base     = flag.String("base", "/testpid/v2", "API base for -prefix")
		rate     = flag.Int("rate", 1000, "creates per second")
		duration = flag.Duration("duration", 10*time.Second, "run time")
		inFlight = flag.Int("max-in-flight", 256, "creates in flight at most; beyond, a tick is skipped")
	)
	flag.Parse()
	opKey, err := os.ReadFile(*keyFile)
	if err != nil {
		fail(err)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512}}
	root := "http://" + *write
	ns, key, err := enrol.SNAA(hc, root, strings.TrimSpace(string(opKey)), *prefix, "pidnode lag bench")
	if err != nil {
		fail(err)
	}
	url := root + *base + "/handles/" + *prefix + "/" + ns + "/"
	body, _ := json.Marshal(map[string]any{"url": "https://example.org/lag", "metadata": map[string]any{
		"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0", "curation_contact": "pids@example.org",
		"resource_info": map[string]any{"label": "lag", "description": "lag", "resource_category": "SAMPLE",
			"representation_variants": []any{map[string]any{"variant_url": "https://example.org/x.ttl", "media_type": "text/turtle"}}}}})

	var (
		mu      sync.Mutex
		lags    []time.Duration
		errs    int
		skipped int
		wg      sync.WaitGroup
	)
	sem := make(chan struct{}, *inFlight)
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	end := time.Now().Add(*duration)
	for time.Now().Before(end) {
		<-tick.C
		select {
		case sem <- struct{}{}:
		default:
			skipped++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var id struct{ Handle string }
			if err := enrol.Call(hc, "POST", url, key, json.RawMessage(body), http.StatusCreated, &id); err != nil {
				mu.Lock()
				errs++
				mu.Unlock()
				return
			}
			acked := time.Now()
			for time.Since(acked) < 30*time.Second {
				resp, err := hc.Get("http://" + *read + "/api/handles/" + id.Handle)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						mu.Lock()
						lags = append(lags, time.Since(acked))
						mu.Unlock()
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			errs++
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	pct := func(p float64) float64 {
		if len(lags) == 0 {
			return 0
		}
		return float64(lags[int(p*float64(len(lags)-1))].Microseconds()) / 1000
	}
	out, _ := json.Marshal(map[string]any{"target_rate": *rate, "created": len(lags), "errors": errs, "skipped_ticks": skipped,
		"achieved_rate": float64(len(lags)) / duration.Seconds(), "lag_ms": map[string]float64{"p50": pct(0.5), "p99": pct(0.99), "max": pct(1)}})
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clusterlag:", err)
	os.Exit(1)
}
