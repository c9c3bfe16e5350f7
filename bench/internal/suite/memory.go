package suite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"pidnode/bench/internal/report"
)

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
