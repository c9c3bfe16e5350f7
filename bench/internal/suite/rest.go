package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

// adminResult is one line of bench/cmd/admincreate's output.
type adminResult struct {
	Clients int                `json:"clients"`
	Rate    float64            `json:"creates_per_s"`
	Status  map[string]int     `json:"status"`
	Latency map[string]float64 `json:"latency_ms"`
}

// statuses is admincreate's status counts as JSON: {"201":5361}.
func statuses(m map[string]int) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func parseAdmin(out []byte) []adminResult {
	var rs []adminResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r adminResult
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Clients > 0 {
			rs = append(rs, r)
		}
	}
	return rs
}

// adminScenarios: redirects while 16 clients create, then creates per
// second at 1, 16 and 64 clients.
func (s *Suite) adminScenarios(n *node) {
	c := s.cfg
	key := filepath.Join(s.work, "operator.key")
	creators := func(clients string, d time.Duration) *exec.Cmd {
		return s.loadCmd(s.bin("admincreate"), "-addr", n.adm, "-operator-key-file", key, "-clients", clients, "-duration", secs(d))
	}
	hit, _ := s.rounds["redirect"].Best()
	redirect, _ := ScenarioByID("redirect")
	t := target{n.res, n.p}

	var mixedOut bytes.Buffer
	ac := creators("16", c.Dur+2*time.Second)
	ac.Stdout, ac.Stderr = &mixedOut, s.logFile
	if err := ac.Start(); err != nil {
		s.na("mixed", "redirects while the admin API takes writes (16 writers)", "req/server-CPU-s", "admincreate", err.Error())
		return
	}
	time.Sleep(time.Second)
	r := s.capacity("mixed", redirect, t, c.Dur)
	ac.Wait()
	w := 0.0
	if rs := parseAdmin(mixedOut.Bytes()); len(rs) > 0 {
		w = rs[0].Rate
	}
	// The reads at the read-only CPU per request, and what that leaves.
	reads := r.Requests
	rd := 0.0
	if hit.PerCPU > 0 {
		rd = reads / hit.PerCPU
	}
	rest := r.ServerSecs - rd
	creates := w * c.Dur.Seconds()
	why := fmt.Sprintf("in the %s run the server used %.1f s of CPU. Its %.0f reads at the read-only CPU per request (%.1f µs) account for %.1f s; the other %.1f s (%.0f %%) went to the ~%.0f creates alongside (%.0f µs each) or to reads costing more while writes run.",
		secs(c.Dur), r.ServerSecs, reads, hit.US(), rd, rest, 100*rest/max(r.ServerSecs, 1e-9), creates, rest*1e6/max(creates, 1e-9))
	row := report.Row{ID: "mixed", Figure: "redirects while the admin API takes writes (16 writers)", Unit: "req/server-CPU-s", Value: report.F(r.PerCPU),
		BaselineLabel: "pidnode redirect, no writes", Target: &report.Target{Kind: report.RatioMin, Value: 0.8}, Command: r.Command + " + admincreate -clients 16",
		Note: fmt.Sprintf("%.0f req/s during %.0f creates/s; p99 %.3f ms (closed loop)", r.Rate, w, r.P99)}
	if hit.PerCPU > 0 {
		row.Baseline = report.F(hit.PerCPU)
	}
	s.row(row)
	s.addWhy("mixed", why)
	if s.profiling() {
		pc := creators("16", s.cfg.ProfDur+2*time.Second)
		pc.Stdout, pc.Stderr = io.Discard, s.logFile
		if pc.Start() == nil {
			time.Sleep(time.Second)
			mixed := redirect
			mixed.Profile = MixedProfile
			s.profile(mixed, t, "")
			pc.Wait()
		}
	}
	out, _ := s.output(creators("1,16,64", c.Dur).Args...)
	for _, a := range parseAdmin(out) {
		ar := report.Row{ID: fmt.Sprintf("admin_%d", a.Clients), Figure: fmt.Sprintf("admin creates, %d client(s), fsync on", a.Clients), Unit: "creates/s",
			Value: report.F(a.Rate), Command: fmt.Sprintf("admincreate -clients %d -duration %s", a.Clients, secs(c.Dur)),
			Note: fmt.Sprintf("p99 %.3f ms; statuses %s", a.Latency["p99"], statuses(a.Status))}
		if a.Clients == 64 {
			ar.Target = &report.Target{Kind: report.Min, Value: 5000}
		}
		s.row(ar)
		s.bar(fmt.Sprintf("admin create ×%d", a.Clients), "pidnode", 0, a.Rate, a.Latency["p99"])
	}
	s.logf("admin: %s", strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", " "))
	s.profileLoad(AdminProfile, n.p, s.bin("admincreate"), "-addr", n.adm, "-operator-key-file", key, "-clients", "64", "-duration", secs(s.cfg.ProfDur))
}

// missScenario: uniform misses over N with a cache of 1 % of N, on a node
// started for them. The database file is read into the page cache first: the
// target is the cache miss of a server whose memory holds its database, and
// by now most of the records have not been read since the import (a host
// that pages out file pages untouched for a minute would otherwise have the
// misses read from disk). The rounds count major faults per request, so a
// database that does not stay in memory shows.
func (s *Suite) missScenario(pd string) {
	t0 := time.Now()
	if f, err := os.Open(filepath.Join(pd, "pidnode.db")); err == nil {
		io.Copy(io.Discard, f)
		f.Close()
	}
	warm := time.Since(t0).Seconds()
	s.logf("miss: database file read into the page cache in %.1f s", warm)
	s.missNote = fmt.Sprintf("database file read into the page cache before (%.1f s)", warm)
	missCache := max(s.cfg.N/100, 100)
	n, err := s.startNode("pidnode-miss", pd, missCache, s.cfg.CacheBytes)
	if err != nil {
		s.logf("%v", err)
		s.na("miss", "cache-miss redirect", "req/server-CPU-s", "pidnode serve", "the node did not become ready")
		return
	}
	n.watch()
	targets := map[Server]target{Pidnode: {n.res, n.p}}
	s.runGroup(MissRounds, targets)
	s.profileGroup(MissRounds, targets)
	s.chartGroup(MissRounds)
	for _, c := range Comparisons {
		if c.Row == "miss" {
			sc, _ := ScenarioByID(c.Scenario)
			r := s.comparisonRow(c, sc)
			r.Command += fmt.Sprintf(" --cache-entries %d", missCache)
			s.row(r)
		}
	}
	n.peak()
	s.memRow(n, fmt.Sprintf("uniform misses, redirect (--cache-entries %d)", missCache), n.anon0, "capacity rounds, open loop and profile run")
	anon := statusKB(n.p.PG, "RssAnon")
	s.row(report.Row{ID: "rss_miss", Figure: fmt.Sprintf("RssAnon after the miss run (cache of %d entries)", missCache), Unit: "MB",
		Value: report.F(anon / 1024), Command: "/proc/PID/status RssAnon",
		Note: fmt.Sprintf("compare with the hit server: RSS follows the cache size, not N; VmRSS %.1f MB; %s", statusKB(n.p.PG, "VmRSS")/1024, n.cacheMem(anon))})
	s.stop(n.p)
}

// memoryScenario: uniform misses over all three HTTP routes at once, the
// cache bounded by bytes alone, so that every entry builds its views and the
// cache, the statistics table (every identifier new) and the collector's
// headroom are all at their largest.
func (s *Suite) memoryScenario(pd string) {
	c := s.cfg
	n, err := s.startNode("pidnode-mem", pd, 0, c.MemBytes)
	if err != nil {
		s.logf("%v", err)
		return
	}
	n.watch()
	conns := (c.Conns + 2) / 3
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, v := range [][2]string{{"", ""}, {"/api/handles", ""}, {"", "?noredirect"}} {
		cmd := s.loadCmd("wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+secs(c.MemDur), "--timeout", "5s",
			"-s", filepath.Join(c.Root, "bench/wrk/stream.lua"), "http://"+n.res, "--", v[0], v[1])
		cmd.Env = append(os.Environ(), "BENCH_PATHS="+s.pathsFile(Uniform))
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if cmd.Start() == nil {
			cmds = append(cmds, cmd)
			outs = append(outs, &b)
		}
	}
	reqs := 0.0
	for i, cmd := range cmds {
		cmd.Wait()
		reqs += parseWrk(outs[i].String()).Requests
	}
	n.peak()
	budget := n.metric("pidnode_cache_budget_bytes")
	s.row(report.Row{ID: "mem_budget", Figure: fmt.Sprintf("RssAnon growth over the base, uniform misses over redirect, /api/handles and ?noredirect (--cache-bytes %s)", c.MemBytes),
		Unit: "MiB", Value: report.F((n.peakAnon - n.anon0) / 1024), Target: &report.Target{Kind: report.Max, Value: budget / (1 << 20)},
		Command: fmt.Sprintf("3× wrk -c%d -d%s on uniform.paths (one per route); /proc/PID/status RssAnon every 0.1 s", conns, secs(c.MemDur)),
		Note: fmt.Sprintf("base (RssAnon at ready) %.1f MiB, peak %.1f MiB; soft memory limit %.1f MiB; target: within the budget (the rest is the collector's headroom, the statistics table and buffers)",
			n.anon0/1024, n.peakAnon/1024, n.metric("pidnode_go_memory_limit_bytes")/(1<<20))})
	s.memRow(n, fmt.Sprintf("uniform misses over redirect, /api/handles and ?noredirect at once (--cache-bytes %s, no entry cap)", c.MemBytes), n.anon0,
		fmt.Sprintf("%.0f requests in %s; statistics table bound %.1f MiB, %.0f early flushes, %.0f counts dropped", reqs, secs(c.MemDur),
			n.metric("pidnode_stats_table_limit_bytes")/(1<<20), n.metric("pidnode_stats_early_flushes_total"), n.metric("pidnode_stats_dropped_total")))
	s.stop(n.p)
}

// hitRatios: the Zipf stream against caches of HIT_BUDGETS % of the
// database file, bounded by bytes alone. One pass of the stream warms the
// cache; the ratio is of the lookups of the closed-loop run after it.
func (s *Suite) hitRatios(pd string) {
	redirect, _ := ScenarioByID("redirect")
	for _, pct := range s.cfg.HitBudgets {
		hb := max(int64(float64(s.dbBytes)*pct/100), 1<<20)
		n, err := s.startNode("pidnode-hit", pd, 0, strconv.FormatInt(hb, 10))
		if err != nil {
			s.logf("%v", err)
			continue
		}
		n.watch()
		s.output(s.onLoad([]string{s.bin("openloop"), "-once", "-addr", n.res, "-paths", s.pathsFile(Zipf), "-conns", strconv.Itoa(s.cfg.Conns)})...)
		h0, m0 := n.metric("pidnode_cache_hits_total"), n.metric("pidnode_cache_misses_total")
		r := s.capacity(fmt.Sprintf("hit-ratio-%g", pct), redirect, target{n.res, n.p}, s.cfg.Dur)
		h1, m1 := n.metric("pidnode_cache_hits_total"), n.metric("pidnode_cache_misses_total")
		n.peak()
		s.res.HitRatio = append(s.res.HitRatio, report.HitRow{Budget: float64(hb), Pct: pct, Entries: n.metric("pidnode_cache_entries"),
			CacheBytes: n.metric("pidnode_cache_bytes"), Hits: h1 - h0, Misses: m1 - m0, BaseKB: n.anon0, PeakAnonKB: n.peakAnon, PeakRSS: n.peakRSS, RPS: r.Rate})
		s.logf("hit ratio at %g %% of the database (%d bytes): %.0f hits, %.0f misses", pct, hb, h1-h0, m1-m0)
		s.stop(n.p)
	}
	s.res.DataBytes = s.dbBytes
}

var (
	dnsQPS = regexp.MustCompile(`(?m)^(pidnode|baseline) .*: ([0-9.]+) qps`)
	dnsCPU = regexp.MustCompile(`(?m)^(pidnode|baseline) .*server CPU ([0-9.]+) us/query`)
)

// dnsScenario runs the DNS helper's suite (bench/dns/run.sh: dnsperf against
// pidnode and a bare miekg/dns map server, its own names), with no pidnode
// of ours up, and turns its lines into a row.
func (s *Suite) dnsScenario() {
	script := filepath.Join(s.cfg.Root, "bench/dns/run.sh")
	const fig = "DNS TXT queries vs bare miekg/dns map"
	if !exists(script) {
		s.na("dns", fig, "queries/s", "bench/dns/run.sh", "bench/dns/run.sh not present")
		return
	}
	dn := min(s.cfg.N, s.cfg.DNSMaxN)
	s.logf("DNS: bench/dns/run.sh with N=%d SECS=%.0f ROUNDS=%d", dn, s.cfg.Dur.Seconds(), s.cfg.Rounds)
	cmd := exec.Command(script)
	cmd.Dir = s.cfg.Root
	cmd.Env = append(os.Environ(), "N="+strconv.Itoa(dn), "SECS="+strconv.Itoa(int(s.cfg.Dur.Seconds())), "ROUNDS="+strconv.Itoa(s.cfg.Rounds), "WARM=pass")
	cmd.Stderr = s.logFile
	out, err := cmd.Output()
	s.logFile.Write(out)
	if err != nil {
		s.na("dns", fig, "queries/s", "bench/dns/run.sh", "bench/dns/run.sh failed (see the log)")
		return
	}
	q, u := map[string]float64{}, map[string]float64{}
	for _, m := range dnsQPS.FindAllStringSubmatch(string(out), -1) {
		q[m[1]] = atof(m[2])
	}
	for _, m := range dnsCPU.FindAllStringSubmatch(string(out), -1) {
		u[m[1]] = atof(m[2])
	}
	head := strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "DNS benchmark: ")
	r := report.Row{ID: "dns", Figure: fig, BaselineLabel: "miekg/dns map", Target: &report.Target{Kind: report.RatioMin, Value: 0.9},
		Command: "bench/dns/run.sh (" + head + ")"}
	if u["pidnode"] > 0 && u["baseline"] > 0 {
		pc, bc := 1e6/u["pidnode"], 1e6/u["baseline"]
		r.Unit, r.Value, r.Baseline = "queries/server-CPU-s", report.F(pc), report.F(bc)
		r.Note = fmt.Sprintf("%.0f vs %.0f queries/s; its own %d names, its own pinning and CPU accounting", q["pidnode"], q["baseline"], dn)
		s.bar("DNS TXT", "pidnode", pc, q["pidnode"], 0)
		s.bar("DNS TXT", "miekg/dns map", bc, q["baseline"], 0)
	} else {
		r.Unit, r.Value, r.Baseline = "queries/s", report.F(q["pidnode"]), report.F(q["baseline"])
		r.Note = fmt.Sprintf("no CPU accounting in its output; its own %d names", dn)
		s.bar("DNS TXT", "pidnode", 0, q["pidnode"], 0)
		s.bar("DNS TXT", "miekg/dns map", 0, q["baseline"], 0)
	}
	s.row(r)
}

// linkcheckScenario: the link checker at N identifiers (docs/product.md
// §4.4): the dataset with its URLs (a target and two variants per record)
// rewritten to linktarget's loopback hosts and imported into a database of
// its own; RssAnon of the node LC_SETTLE after ready without the checker,
// then with the checker at about LC_RATE URLs/s for LC_DUR after a 3 s
// start: CPU per check and the RssAnon peak over the base.
func (s *Suite) linkcheckScenario() {
	c := s.cfg
	const fig = "link checker: CPU per check"
	portFile := filepath.Join(s.work, "linktarget.port")
	tp, err := s.startOn(s.onLoad(nil), "linktarget", nil, s.bin("linktarget"), "-hosts", strconv.Itoa(c.LCHosts), "-ready-file", portFile)
	if err != nil {
		s.na("linkcheck_cpu", fig, "µs/check", "bench/cmd/linktarget", err.Error())
		return
	}
	defer s.stop(tp)
	var port string
	for i := 0; i < 500 && port == ""; i++ {
		b, _ := os.ReadFile(portFile)
		port = strings.TrimSpace(string(b))
		if port == "" {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if port == "" {
		s.na("linkcheck_cpu", fig, "µs/check", "bench/cmd/linktarget", "linktarget did not start (see its log)")
		return
	}
	s.logf("link checker: import with URLs on %d loopback hosts (port %s)", c.LCHosts, port)
	lpd := filepath.Join(s.work, "pidnode-lc")
	os.RemoveAll(lpd)
	defer os.RemoveAll(lpd)
	if err := s.importRewritten(lpd, port); err != nil {
		s.na("linkcheck_cpu", fig, "µs/check", "pidnode import", err.Error())
		return
	}
	lc := func(interval string) (*node, error) {
		return s.startNode("pidnode-lc", lpd, 0, "", "--dns-addr", "", "--hdl-addr", "", "--linkcheck-interval", interval,
			"--outbound-allow", "127.0.0.0/8", "--linkcheck-host-delay", "0", "--linkcheck-concurrency", "8")
	}
	n, err := lc("0")
	if err != nil {
		s.na("linkcheck_cpu", fig, "µs/check", "pidnode serve", err.Error())
		return
	}
	time.Sleep(c.LCSettle)
	base := statusKB(n.p.PG, "RssAnon")
	s.stop(n.p)
	interval := max(3*c.N/c.LCRate, 1)
	n, err = lc(strconv.Itoa(interval) + "s")
	if err != nil {
		s.na("linkcheck_cpu", fig, "µs/check", "pidnode serve", err.Error())
		return
	}
	time.Sleep(3 * time.Second)
	n.watch()
	c0 := groupCPU(n.p.PG)
	n0, _ := n.metricSum("pidnode_linkcheck_checks_total", `"ok"`)
	time.Sleep(c.LCDur)
	cpu := groupCPU(n.p.PG).Sub(c0)
	n1, bad := n.metricSum("pidnode_linkcheck_checks_total", `"ok"`)
	n.peak()
	s.stop(n.p)
	checks := n1 - n0
	cmd := fmt.Sprintf("pidnode serve --linkcheck-interval %ds --outbound-allow 127.0.0.0/8 --linkcheck-host-delay 0 (bench/cmd/linktarget, %d hosts)", interval, c.LCHosts)
	if checks <= 0 {
		s.na("linkcheck_cpu", fig, "µs/check", cmd, "no checks were counted (see the log)")
		return
	}
	sec := cpu.Total() / clkTck
	d := c.LCDur.Seconds()
	s.logf("link checker: %.0f checks in %s, server CPU %.2fs, %.0f not ok; RssAnon base %.0f kB, peak %.0f kB", checks, secs(c.LCDur), sec, bad, base, n.peakAnon)
	s.row(report.Row{ID: "linkcheck_cpu", Figure: fmt.Sprintf("link checker: CPU per check at %d identifiers (HEAD to loopback, result written)", c.N), Unit: "µs/check",
		Value: report.F(sec * 1e6 / checks), Command: cmd,
		Note: fmt.Sprintf("%.0f checks in %.0f s (%.0f/s), %.1f %% of a CPU; %.0f not ok; at 7 days per URL (3 URLs per record: %.1f checks/s) that is %.3f %% of a CPU",
			checks, d, checks/d, 100*sec/d, bad, 3*float64(c.N)/604800, 100*sec/checks*3*float64(c.N)/604800)})
	s.row(report.Row{ID: "linkcheck_mem", Figure: "link checker: RssAnon with the checker running over the same node without it", Unit: "MiB",
		Value: report.F((n.peakAnon - base) / 1024), Command: fmt.Sprintf("/proc/PID/status RssAnon: peak during the run minus %s after ready with --linkcheck-interval 0", secs(c.LCSettle)),
		Note: fmt.Sprintf("base %.1f MiB, peak %.1f MiB", base/1024, n.peakAnon/1024)})
}

// importRewritten imports the dataset into dir with its URLs pointing at
// linktarget's loopback hosts 127.0.1.1 … 127.0.1.LC_HOSTS.
func (s *Suite) importRewritten(dir, port string) error {
	in, err := os.Open(filepath.Join(s.data, "records.jsonl"))
	if err != nil {
		return err
	}
	defer in.Close()
	args := append(append([]string{}, s.onServer...), s.bin("pidnode"), "import", "--data", dir, "-")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = s.logFile, s.logFile
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for i := 1; sc.Scan(); i++ {
		h := fmt.Sprintf("http://127.0.1.%d:%s/", i%s.cfg.LCHosts+1, port)
		l := strings.ReplaceAll(sc.Text(), "https://landing.example.org/", h)
		l = strings.ReplaceAll(l, "https://data.example.org/", h)
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	bw.Flush()
	w.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pidnode import: %w", err)
	}
	return sc.Err()
}

// write finishes the rows (their reasons), writes the results JSON, the
// report and its chart, and the log.
func (s *Suite) write(load0 string) (string, error) {
	c := s.cfg
	for _, b := range Breakdowns {
		if t := s.breakdown(b); t != "" {
			for _, id := range b.Rows {
				s.addWhy(id, t)
			}
		}
	}
	for i := range s.res.Rows {
		s.res.Rows[i].Why = strings.Join(s.why[s.res.Rows[i].ID], " ")
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	stamp := time.Now().UTC().Format("2006-01-02")
	s.res.Title = fmt.Sprintf("pidnode benchmarks, N = %d, %s, %s", c.N, stamp, host)
	other := 0.0
	if s.runTicks > 0 {
		other = 100 * s.otherTicks / s.runTicks
	}
	spread := func(id string) string { return fmt.Sprintf("%.0f %%", s.rounds[id].Spread()) }
	s.res.Setup = fmt.Sprintf("CPU time on the server CPU not charged to the server (other processes, interrupts): %.0f %% of the capacity runs' wall time (0 on a quiet machine; wall-clock rates and tails suffer from it, per-CPU-second figures much less). "+
		"The cache-hit comparison ran %d interleaved rounds (more than %d when the rounds of one server lay more than %g %% apart); its rounds per server CPU-second lay %s apart for pidnode's redirect, %s for nginx like-for-like and %s for the fasthttp map like-for-like (each row takes its best round); "+
		"the native rounds ran %d and lay %s apart for pidnode's TCP and %s for the native map; the cache-miss rounds, extended alike, ran %d and lay %s apart. "+
		"%d CPUs (%s), %s; %s; %s per capacity run, %s per open-loop run; the whole suite took %.1f min; wrk %d connections, open loop %d, request streams of %d paths (Zipf s=1.1: %d distinct); "+
		"load average at start %s, at the end %s; %s, %s, nginx %s; pidnode commit %s",
		other, s.ran[HitRounds], c.Rounds, c.SpreadMax, spread("redirect"), spread("nginx-lfl"), spread("map-lfl"),
		s.ran[NativeRounds], spread("hdl-tcp"), spread("native-map-tcp"), s.ran[MissRounds], spread("miss"),
		runtime.NumCPU(), cpuModel(), memTotal(), s.pinning, secs(c.Dur), secs(c.OLDur), time.Since(s.started).Minutes(),
		c.Conns, c.OLConns, c.Requests, s.meta.ZipfDistinct, load0, loadavg(), goVersion(), firstLine("wrk", "-v"), nginxVersion(s.nginx()), s.commit)
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return "", err
	}
	// make bench (N = 1M) writes <date>-<host>.md; any other N adds -n<N>,
	// so that make bench-full on the same day does not overwrite it.
	base := filepath.Join(c.Out, stamp+"-"+host)
	if c.N != 1000000 {
		base += fmt.Sprintf("-n%d", c.N)
	}
	// The report is rendered from the JSON as written: what bench/cmd/report
	// renders from it later is the same report.
	if err := report.Write(base+".json", &s.res); err != nil {
		return "", err
	}
	res, err := report.Read(base + ".json")
	if err != nil {
		return "", err
	}
	if err := report.WriteFiles(res, base+".md"); err != nil {
		return "", err
	}
	s.logf("wrote %s", base+".md")
	s.logFile.Sync()
	if b, err := os.ReadFile(s.logFile.Name()); err == nil {
		os.WriteFile(base+".log", b, 0o644)
	}
	return base + ".md", nil
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == "MemTotal" {
			return fmt.Sprintf("%.0f GiB", atof(strings.TrimSuffix(strings.TrimSpace(v), " kB"))/(1<<20))
		}
	}
	return "?"
}

func goVersion() string {
	out, _ := exec.Command("go", "env", "GOVERSION").Output()
	return "go " + strings.TrimSpace(string(out))
}

// firstLine is the first two words of a command's first output line.
func firstLine(args ...string) string {
	out, _ := exec.Command(args[0], args[1:]...).CombinedOutput()
	fs := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	if len(fs) > 2 {
		fs = fs[:2]
	}
	return strings.Join(fs, " ")
}

func nginxVersion(bin string) string {
	if bin == "" {
		return "not installed"
	}
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	_, v, _ := strings.Cut(strings.TrimSpace(string(out)), "nginx/")
	return v
}
