package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

// genMeta is the dataset's meta.json (bench/cmd/gen).
type genMeta struct {
	Seconds      float64 `json:"seconds"`
	ZipfDistinct int     `json:"zipf_distinct"`
	RecordBytes  int64   `json:"record_bytes"`
}

// dataset generates the dataset into the cache unless it is there.
func (s *Suite) dataset() error {
	c := s.cfg
	s.data = filepath.Join(c.Data, fmt.Sprintf("n%d-s%d-r%d", c.N, c.Seed, c.Requests))
	if st, err := os.Stat(filepath.Join(s.data, "records.jsonl")); err == nil && st.Size() > 0 && exists(filepath.Join(s.data, "meta.json")) {
		s.logf("reusing dataset %s", s.data)
	} else {
		s.logf("generating %d records into %s", c.N, s.data)
		if err := os.MkdirAll(s.data, 0o755); err != nil {
			return err
		}
		if _, err := s.output(s.bin("gen"), "-n", strconv.Itoa(c.N), "-prefix", prefix, "-ns", ns, "-seed", strconv.Itoa(c.Seed),
			"-requests", strconv.Itoa(c.Requests), "-out", s.data); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	b, err := os.ReadFile(filepath.Join(s.data, "meta.json"))
	if err == nil {
		err = json.Unmarshal(b, &s.meta)
	}
	if err != nil {
		return fmt.Errorf("dataset meta.json: %w", err)
	}
	rate := 0.0
	if s.meta.Seconds > 0 {
		rate = float64(c.N) / s.meta.Seconds
	}
	s.row(report.Row{ID: "gen", Figure: fmt.Sprintf("dataset generation (%d records, %.0f MB JSON Lines)", c.N, float64(s.meta.RecordBytes)/1e6),
		Unit: "records/s", Value: report.F(rate),
		Command: fmt.Sprintf("go run ./bench/cmd/gen -n %d -prefix %s -ns %s -seed %d -requests %d", c.N, prefix, ns, c.Seed, c.Requests),
		Note:    fmt.Sprintf("wall time %.1f s", s.meta.Seconds)})
	return nil
}

func exists(name string) bool { _, err := os.Stat(name); return err == nil }

// node is a running pidnode serve.
type node struct {
	p                  *Proc
	res, adm, dns, hdl string
	ready              float64 // seconds to the ready file
	anon0              float64 // RssAnon at ready, kB
	data               string
	stopMem            func() (float64, float64)
	peakAnon, peakRSS  float64
}

// startNode starts pidnode serve on free ports with --cache-entries entries
// (and --cache-bytes cacheBytes when set). The per-key admin rate and DNS
// response-rate limiting are on by default; the suite measures capacity from
// one key and one source address, so both are off here.
func (s *Suite) startNode(name, data string, entries int, cacheBytes string, extra ...string) (*node, error) {
	ready := filepath.Join(s.work, name+".ready")
	os.Remove(ready)
	args := []string{s.bin("pidnode"), "serve", "--data", data, "--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--operator-key-file", filepath.Join(s.work, "operator.key"), "--ready-file", ready, "--log-level", "warn", "--admin-rate", "0"}
	if len(extra) == 0 {
		args = append(args, "--dns-addr", "127.0.0.1:0", "--hdl-addr", "127.0.0.1:0", "--dns-zone", "bench.test="+prefix, "--dns-rrl-rate", "0")
	}
	if entries > 0 {
		args = append(args, "--cache-entries", strconv.Itoa(entries))
	}
	if cacheBytes != "" {
		args = append(args, "--cache-bytes", cacheBytes)
	}
	args = append(args, extra...)
	t0 := time.Now()
	p, err := s.start(name, []string{"PIDNODE_LINKCHECK_INTERVAL=0"}, args...)
	if err != nil {
		return nil, err
	}
	want := []string{"resolver", "admin"}
	if len(extra) == 0 {
		want = append(want, "dns", "hdl")
	}
	m, ok := readyFile(ready, 60*time.Second, p, want...)
	if !ok {
		log, _ := os.ReadFile(filepath.Join(s.work, name+".log"))
		s.stop(p)
		return nil, fmt.Errorf("pidnode did not become ready; its log:\n%s", tail(string(log), 20))
	}
	n := &node{p: p, res: m["resolver"], adm: m["admin"], dns: m["dns"], hdl: m["hdl"], ready: time.Since(t0).Seconds(), data: data}
	n.anon0 = statusKB(p.PG, "RssAnon")
	return n, nil
}

func tail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// watch starts sampling n's memory; peak stops it.
func (n *node) watch() { n.stopMem = memWatch(n.p.PG) }
func (n *node) peak() {
	if n.stopMem != nil {
		n.peakAnon, n.peakRSS = n.stopMem()
		n.stopMem = nil
	}
}

// metric is one unlabelled figure of the node's /metrics.
func (n *node) metric(name string) float64 {
	resp, err := http.Get("http://" + n.adm + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	v := 0.0
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) >= 2 && fs[0] == name {
			v = atof(fs[1])
		}
	}
	return v
}

// metricSum sums a labelled metric over its series, and the part whose
// labels do not contain not.
func (n *node) metricSum(name, not string) (all, other float64) {
	resp, err := http.Get("http://" + n.adm + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) >= 2 && strings.HasPrefix(fs[0], name+"{") {
			all += atof(fs[1])
			if !strings.Contains(fs[0], not) {
				other += atof(fs[1])
			}
		}
	}
	return all, other
}

// cacheMem says what the node's cache holds against its budget, and RssAnon
// against the budget.
func (n *node) cacheMem(anonKB float64) string {
	budget := n.metric("pidnode_cache_budget_bytes")
	if budget == 0 {
		return "cache budget not reported"
	}
	return fmt.Sprintf("cache %.1f MiB charged of a %.1f MiB budget, %.0f entries; RssAnon %.1f MiB, %.0f %% of the budget",
		n.metric("pidnode_cache_bytes")/(1<<20), budget/(1<<20), n.metric("pidnode_cache_entries"), anonKB/1024, 100*anonKB*1024/budget)
}

// memRow is one line of the memory table, after peak.
func (s *Suite) memRow(n *node, scenario string, baseKB float64, note string) {
	s.res.Memory = append(s.res.Memory, report.MemRow{Scenario: scenario, Budget: n.metric("pidnode_cache_budget_bytes"),
		CacheBytes: n.metric("pidnode_cache_bytes"), Entries: n.metric("pidnode_cache_entries"), BaseKB: baseKB,
		PeakAnonKB: n.peakAnon, PeakRSS: n.peakRSS, SoftLimit: n.metric("pidnode_go_memory_limit_bytes"),
		StatsBytes: n.metric("pidnode_stats_table_bytes"), Note: note})
	s.logf("memory, %s: RssAnon %.0f kB at ready, peak %.0f kB; VmRSS peak %.0f kB", scenario, baseKB, n.peakAnon, n.peakRSS)
}

// nodeScenarios runs everything that needs the pidnode binary.
func (s *Suite) nodeScenarios() {
	c := s.cfg
	pd := filepath.Join(s.work, "pidnode")
	s.importScenario(pd)
	// Tombstones: 1,000 OBSOLETED records of their own namespace, imported
	// after the measured import, so the 410 page has a scenario of its own.
	zipfLines := countLines(s.pathsFile(Zipf))
	s.output(s.bin("gen"), "-tombstones", "1000", "-prefix", prefix, "-ns", "TMB", "-seed", strconv.Itoa(c.Seed),
		"-requests", strconv.Itoa(zipfLines), "-out", filepath.Join(s.work, "tomb"))
	s.output(s.bin("pidnode"), "import", "--data", pd, filepath.Join(s.work, "tomb", "tombstones.jsonl"))

	hitCache := max(s.meta.ZipfDistinct*2, 100000)
	// Start-up: the database file was just written, so it is in the page cache.
	n, err := s.startNode("pidnode", pd, hitCache, c.CacheBytes)
	if err != nil {
		s.logf("%v", err)
		s.na("startup", "start-up to ready file", "s", "pidnode serve", "the node did not become ready (see the log)")
		return
	}
	s.row(report.Row{ID: "startup", Figure: fmt.Sprintf("start-up to ready file with %d records", c.N), Unit: "s", Value: report.F(n.ready),
		Target: targetOf("startup"), Command: "pidnode serve --data DIR --ready-file F … (time until F appears)",
		Note: "target is for 10M records; page cache warm"})
	rss0 := statusKB(n.p.PG, "VmRSS")
	s.row(report.Row{ID: "rss", Figure: fmt.Sprintf("RSS at ready with %d records (empty cache)", c.N), Unit: "MB", Value: report.F(rss0 / 1024),
		Command: "/proc/PID/status VmRSS", Note: fmt.Sprintf("RssAnon %.1f MB; %.1f MB VmRSS per million records", n.anon0/1024, rss0/1024/(float64(c.N)/1e6))})
	s.logf("ready in %.3fs: resolver %s admin %s dns %s hdl %s; RSS %.0f kB", n.ready, n.res, n.adm, n.dns, n.hdl, rss0)

	// Warm the cache with every path of the popular stream once (all of its
	// distinct handles fit in the cache), then measure what the cache holds.
	n.watch()
	warm, _ := s.output(s.onLoad([]string{s.bin("openloop"), "-once", "-addr", n.res, "-paths", s.pathsFile(Zipf), "-conns", strconv.Itoa(c.Conns)})...)
	s.logf("warm-up: %s", strings.TrimSpace(string(warm)))
	anon1 := statusKB(n.p.PG, "RssAnon")
	s.row(report.Row{ID: "rss_entry", Figure: fmt.Sprintf("heap per cached entry (RssAnon growth / %d entries)", s.meta.ZipfDistinct), Unit: "bytes",
		Value: report.F((anon1 - n.anon0) * 1024 / float64(max(1, s.meta.ZipfDistinct))), Command: "/proc/PID/status RssAnon after a warm-up pass",
		Note: "includes Go GC headroom (bounded by the soft memory limit) and connection buffers; " + n.cacheMem(anon1)})

	s.hitScenarios(n)
	n.peak()
	s.memRow(n, fmt.Sprintf("Zipf stream, cache hits (warm-up, redirect, /api/handles, ?noredirect; --cache-entries %d)", hitCache), n.anon0,
		fmt.Sprintf("%d distinct handles in the stream", s.meta.ZipfDistinct))
	s.nativeScenarios(n)
	n.watch()
	s.adminScenarios(n)
	n.peak()
	s.memRow(n, "redirects while the admin API takes writes, then admin creates (same node)", n.anon0,
		"every create invalidates its cache entries; audit log and URL index writes")
	s.stop(n.p)

	s.missScenario(pd)
	s.memoryScenario(pd)
	s.hitRatios(pd)
	s.dnsScenario()
	s.linkcheckScenario()
}

func countLines(name string) int {
	b, _ := os.ReadFile(name)
	return strings.Count(string(b), "\n")
}

// importFigure is the import row's figure: the whole command, one sync at
// the end, decoding beside the writer.
const importFigure = "import rate (pidnode import, 2 cores: decode beside the writer)"

// importScenario imports the dataset into pd, profiled while measured (perf
// samples at 997 Hz, well under 1 % of the CPU). When pinning it runs on both
// CPUs (the server's and the load generator's, idle meanwhile): the import
// decodes on every core and writes the file on one, as the target states.
func (s *Suite) importScenario(pd string) {
	s.logf("import")
	os.RemoveAll(pd)
	var args []string
	cores := "unpinned"
	if s.pinned {
		cpus := fmt.Sprintf("%d,%d", s.cfg.ServerCPU, s.cfg.LoadCPU)
		args = []string{"taskset", "-c", cpus}
		cores = "CPUs " + cpus
	}
	args = append(args, s.bin("pidnode"), "import", "--data", pd, filepath.Join(s.data, "records.jsonl"))
	if s.profiling() {
		args = append([]string{"perf", "record", "-F", "997", "-g", "-o", s.perfData(ImportProfile), "--"}, args...)
	}
	t0 := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = s.logFile, s.logFile
	err := cmd.Run()
	secs := time.Since(t0).Seconds()
	if err != nil {
		s.logf("import failed: %v", err)
		s.na("import", importFigure, "records/s", "pidnode import", "the import failed (see the log)")
		return
	}
	if s.profiling() {
		s.profileSection(ImportProfile)
	}
	if st, err := os.Stat(filepath.Join(pd, "pidnode.db")); err == nil {
		s.dbBytes = st.Size()
	}
	c := s.cfg
	// The process's CPU (every thread: decoding, writing, the kernel's page
	// cache work, perf's own when profiling), from its rusage.
	user, sys := cmd.ProcessState.UserTime().Seconds(), cmd.ProcessState.SystemTime().Seconds()
	cpu := fmt.Sprintf("CPU %.1f µs/record (user %.1f s, system %.1f s)", (user+sys)*1e6/float64(c.N), user, sys)
	s.row(report.Row{ID: "import", Figure: importFigure, Unit: "records/s", Value: report.F(float64(c.N) / secs),
		Target: targetOf("import"), Command: "taskset -c 0,1 pidnode import --data DIR records.jsonl",
		Note: fmt.Sprintf("%.1f s for %d records on %s; %s; database %.0f MB (%.0f B/record)", secs, c.N, cores, cpu, float64(s.dbBytes)/1e6, float64(s.dbBytes)/float64(c.N))})
	s.logf("import: %d records in %.1fs", c.N, secs)
	s.addWhy("import", fmt.Sprintf("%.1f s on %s for %.0f MB of JSON Lines in and %.0f MB of database out; %s.", secs, cores, float64(s.meta.RecordBytes)/1e6, float64(s.dbBytes)/1e6, cpu))
}
