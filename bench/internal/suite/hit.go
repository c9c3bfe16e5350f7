package suite

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

// freePort returns a loopback port nothing listens on right now.
func freePort() int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits up to d for a GET of url to answer at all.
func waitHTTP(url string, d time.Duration, p *Proc) bool {
	c := &http.Client{Timeout: time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			return true
		}
		if p != nil && !p.Alive() {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// hitScenarios: the like-for-like answers rendered from the warm node,
// nginx and the fasthttp map started, one response per scenario compared,
// then the cache-hit rounds, their open-loop runs and profiles, and their
// rows.
func (s *Suite) hitScenarios(n *node) {
	targets := map[Server]target{Pidnode: {n.res, n.p}}
	lflPort := freePort()
	lfl := false
	nginxConf, mapFile := filepath.Join(s.work, "lfl-nginx.conf"), filepath.Join(s.work, "lfl-baseline.jsonl")
	if out, err := s.output(s.onLoad([]string{s.bin("likeforlike"), "render", "-pidnode", n.res, "-paths", s.pathsFile(Zipf),
		"-nginx-listen", "127.0.0.1:" + strconv.Itoa(lflPort), "-nginx-out", nginxConf, "-baseline-out", mapFile})...); err != nil {
		s.logf("likeforlike render failed: no like-for-like baselines (%v)", err)
	} else {
		lfl = true
		s.logf("like-for-like answers rendered %s", strings.TrimSpace(string(out)))
	}
	ng := s.nginxUp(lfl, nginxConf, lflPort)
	if ng != nil {
		targets[NginxMin] = target{ng.min, ng.p}
		if lfl {
			targets[NginxLFL] = target{"127.0.0.1:" + strconv.Itoa(lflPort), ng.p}
		}
	}
	if mp := s.mapUp(lfl, mapFile); mp != nil {
		targets[MapMin] = target{mp.min, mp.p}
		if mp.lfl != "" {
			targets[MapLFL] = target{mp.lfl, mp.p}
		}
	}
	s.lflCheck(targets)
	s.runGroup(HitRounds, targets)
	s.profileGroup(HitRounds, targets)
	for _, sv := range []Server{NginxMin, MapMin} {
		if t, ok := targets[sv]; ok {
			s.stop(t.Proc)
		}
	}
	s.chartGroup(HitRounds)
	s.comparisonRows(HitRounds)
	s.p99Rows()
}

type baselineProc struct {
	p        *Proc
	min, lfl string
}

// nginxUp starts nginx (one worker, access log off, the generated map) on a
// free port, and with lfl the like-for-like server block on lflPort; nil
// when it does not come up within NGINX_WAIT (a row says so).
func (s *Suite) nginxUp(lfl bool, lflConf string, lflPort int) *baselineProc {
	bin := s.nginx()
	if bin == "" {
		s.na("nginx_start", "nginx start-up", "s", "nginx", "nginx is not installed")
		return nil
	}
	dir := filepath.Join(s.work, "nginx")
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	port := freePort()
	include := ""
	if lfl {
		include = "include " + lflConf + ";"
	}
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    map_hash_max_size %[2]d;
    map_hash_bucket_size 128;
    map $uri $target {
        default "";
        include %[3]s/nginx-map.conf;
    }
    server {
        listen 127.0.0.1:%[4]d;
        location / {
            if ($target = "") { return 404; }
            return 302 $target;
        }
    }
    %[5]s
}
`, dir, s.cfg.N*2+1024, s.data, port, include)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644)
	t0 := time.Now()
	p, err := s.start("nginx", nil, bin, "-p", dir, "-e", filepath.Join(dir, "logs/error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	figure := fmt.Sprintf("nginx start-up with a %d-entry map", s.cfg.N)
	if err != nil || !waitHTTP(fmt.Sprintf("http://127.0.0.1:%d/", port), s.cfg.NginxWait, p) {
		errLog, _ := os.ReadFile(filepath.Join(dir, "logs/error.log"))
		s.logf("nginx did not start within %s: %s", secs(s.cfg.NginxWait), tail(string(errLog), 3))
		// Building a map is superlinear in nginx (its duplicate check scans
		// a fixed 10,007-slot table of keys): 1M entries load in ~6 s, 10M
		// did not load in 300 s. That is a start-up figure too.
		s.row(report.Row{ID: "nginx_start", Figure: figure, Unit: "s", Command: "nginx -c nginx.conf",
			Note: fmt.Sprintf("not serving after NGINX_WAIT=%.0f s; no nginx rows in this run", s.cfg.NginxWait.Seconds())})
		if p != nil {
			s.stop(p)
		}
		return nil
	}
	d := time.Since(t0).Seconds()
	s.logf("nginx ready in %.2f s", d)
	s.row(report.Row{ID: "nginx_start", Figure: figure, Unit: "s", Value: report.F(d), Command: "nginx -c nginx.conf",
		Note: "for comparison with pidnode's start-up"})
	return &baselineProc{p: p, min: fmt.Sprintf("127.0.0.1:%d", port)}
}

// mapUp starts the bare fasthttp map server (with lfl its like-for-like
// listener too); nil when it does not come up.
func (s *Suite) mapUp(lfl bool, lflFile string) *baselineProc {
	ready := filepath.Join(s.work, "baseline.ready")
	os.Remove(ready)
	args := []string{s.bin("baseline-http"), "-map", filepath.Join(s.data, "baseline-map.tsv"), "-addr", "127.0.0.1:0", "-ready-file", ready}
	if lfl {
		args = append(args, "-lfl", lflFile, "-lfl-addr", "127.0.0.1:0")
	}
	p, err := s.start("baseline", nil, args...)
	if err != nil {
		s.logf("baseline-http: %v", err)
		return nil
	}
	m, ok := readyFile(ready, 60*time.Second, p, "baseline")
	if !ok {
		log, _ := os.ReadFile(filepath.Join(s.work, "baseline.log"))
		s.logf("baseline-http did not start: %s", tail(string(log), 3))
		s.stop(p)
		return nil
	}
	return &baselineProc{p: p, min: m["baseline"], lfl: m["lfl"]}
}

// lflCheck runs bench/cmd/likeforlike check: one response per scenario from
// every server (pidnode first), the first 20 distinct paths of the Zipf
// stream compared; a like-for-like ratio is reported only for a server that
// sends pidnode's header set and values within 5 % of its size.
func (s *Suite) lflCheck(targets map[Server]target) {
	md := filepath.Join(s.work, "responses.md")
	args := []string{s.bin("likeforlike"), "check", "-scenario", "redirect (cache hit)", "-paths", s.pathsFile(Zipf), "-n", "20", "-md", md}
	for _, m := range []struct {
		srv  Server
		name string
	}{{NginxMin, "nginx minimal"}, {MapMin, "fasthttp map minimal"}} {
		if t, ok := targets[m.srv]; ok {
			args = append(args, "-minimal", m.name+"="+t.Addr)
		}
	}
	args = append(args, "pidnode="+targets[Pidnode].Addr)
	for _, m := range []struct {
		srv  Server
		name string
	}{{NginxLFL, "nginx"}, {MapLFL, "fasthttp map"}} {
		if t, ok := targets[m.srv]; ok {
			args = append(args, m.name+"="+t.Addr)
		}
	}
	out, err := s.output(args...)
	if err != nil {
		s.logf("likeforlike check failed: %v", err)
	}
	for srv, v := range parseCheck(out) {
		s.lfl[srv] = v
		s.logf("like-for-like check: %s: ok=%v %s%s%s", srv, v.OK, v.Note, v.NA, v.Bytes)
	}
	// pidnode's other scenarios, for their byte counts (no baseline serves them).
	res := "pidnode=" + targets[Pidnode].Addr
	for _, c := range [][]string{
		{"-scenario", "tombstone", "-paths", s.pathsFile(Tombstones)},
		{"-scenario", "/api/handles (cache hit)", "-paths", s.pathsFile(Zipf), "-prefix", "/api/handles"},
		{"-scenario", "?noredirect (cache hit)", "-paths", s.pathsFile(Zipf), "-suffix", "?noredirect"},
		{"-scenario", "negotiated redirect", "-paths", s.pathsFile(Zipf), "-accept", NegAccept},
		{"-scenario", "linkset", "-paths", s.pathsFile(Zipf), "-prefix", "/api/linksets"},
	} {
		s.output(append(append([]string{s.bin("likeforlike"), "check", "-md", md}, c...), res)...)
	}
	if b, err := os.ReadFile(md); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		s.res.Responses = append(s.res.Responses, string(b))
	}
}

// p99Rows: the redirect's open-loop p99 against its 2 ms target, and against
// nginx's at 50 % of its own like-for-like capacity.
func (s *Suite) p99Rows() {
	ol := s.ol["redirect"]
	o25, o50, o75 := ol[25], ol[50], ol[75]
	if o50 == nil {
		return
	}
	ngl := s.ol["nginx-lfl"][50]
	fml := s.ol["map-lfl"][50]
	// The 2 ms target is for 50 % load. A run that did not reach its rate
	// measures a backlog, so it is not judged: the 25 % run stands in for it
	// when that one did.
	fig, val, cmd := "redirect p99 at 50 % of capacity (open loop)", o50.P99, o50.Command
	tgt := targetOf("hit_p99")
	if !o50.Reached() {
		if o25.Reached() {
			fig, val, cmd = "redirect p99 at 25 % of capacity (open loop; the 50 % run did not reach its rate)", o25.P99, o25.Command
		} else {
			tgt = nil
		}
	}
	gen := func(o *OpenLoop) string {
		if o == nil {
			return "?"
		}
		return fmt.Sprintf("%.0f", o.GenCPU)
	}
	s.row(report.Row{ID: "hit_p99", Figure: fig, Unit: "ms", Value: report.F(val), Target: tgt, Command: cmd,
		Note: fmt.Sprintf("p99 25 %%: %s, 50 %%: %s, 75 %%: %s (target: ≤ 2 ms at 50 %%); generator's own CPU: %s / %s / %s %% of its core; %s",
			o25.P99Text(), o50.P99Text(), o75.P99Text(), gen(o25), gen(o50), gen(o75), s.openLoopCPU("redirect", o25, o50, o75))})
	// Against nginx: each at 50 % of its own like-for-like capacity; judged
	// only when both runs reached their rate.
	r := report.Row{ID: "hit_p99_nginx", Figure: "redirect p99 at 50 % of capacity vs nginx's (like-for-like) at 50 % of its own", Unit: "ms",
		Value: report.F(o50.P99), BaselineLabel: "nginx p99", Command: o50.Command,
		Note: fmt.Sprintf("pidnode %s vs nginx %s; judged only when both runs reached their rate; server CPU per request at 50 %%: pidnode %s, nginx %s",
			o50.P99Text(), ngl.P99Text(), o50.ServerText(), ngl.ServerText())}
	if ngl != nil {
		r.Baseline = report.F(ngl.P99)
		if ngl.Reached() && o50.Reached() && s.lfl[NginxLFL].OK {
			r.Target = &report.Target{Kind: report.Max, Value: ngl.P99}
		}
	}
	s.row(r)
	tail := fmt.Sprintf("open loop at 50 %% of each one's own like-for-like capacity: pidnode %s, nginx %s, the bare fasthttp map %s (the same fasthttp, without cache, statistics or collector); pidnode at 25 %%: %s. Server CPU per request at 50 %%: nginx %s, the fasthttp map %s; pidnode's %s.",
		o50.P99Text(), ngl.P99Text(), fml.P99Text(), o25.P99Text(), ngl.ServerText(), fml.ServerText(), s.openLoopCPU("redirect", o25, o50, o75))
	s.addWhy("hit_p99", tail)
	s.addWhy("hit_p99_nginx", tail)
}

// openLoopCPU says what the server's CPU per request was in scenario id's
// open-loop runs against its best closed-loop round: a server that idles
// between requests pays for waking up on each, so that figure, not the
// closed-loop one, says how busy a run at a given rate keeps it.
func (s *Suite) openLoopCPU(id string, runs ...*OpenLoop) string {
	var parts []string
	for _, o := range runs {
		if o != nil {
			parts = append(parts, fmt.Sprintf("%d %%: %s", o.Pct, o.ServerText()))
		}
	}
	closed := "?"
	if r, ok := s.rounds[id].Best(); ok && r.US() > 0 {
		closed = fmt.Sprintf("%.1f µs", r.US())
	}
	return fmt.Sprintf("server CPU per request in the open loop %s (best closed-loop round: %s)", strings.Join(parts, ", "), closed)
}

// nativeScenarios: pidnode's native-protocol replies captured for the Zipf
// stream's handles, the native map started with them and compared, then the
// native rounds (pidnode over UDP and TCP, the native map over TCP).
func (s *Suite) nativeScenarios(n *node) {
	if n.hdl == "" {
		s.na("hdl_tcp", "native Handle protocol", "queries/s", "hdlload", "no hdl listener in the ready file")
		return
	}
	targets := map[Server]target{PidnodeHDL: {n.hdl, n.p}}
	replies := filepath.Join(s.work, "native-replies.jsonl")
	var mp *Proc
	if _, err := s.output(s.onLoad([]string{s.bin("baseline-hdl"), "capture", "-addr", n.hdl, "-paths", s.pathsFile(Zipf), "-out", replies})...); err != nil {
		s.logf("baseline-hdl capture failed: %v", err)
	} else {
		ready := filepath.Join(s.work, "native.ready")
		p, err := s.start("native-map", nil, s.bin("baseline-hdl"), "serve", "-replies", replies, "-addr", "127.0.0.1:0", "-ready-file", ready)
		if err == nil {
			if m, ok := readyFile(ready, 60*time.Second, p, "native"); ok {
				mp = p
				targets[NativeMap] = target{m["native"], p}
				v, md := nativeCheck(n.hdl, m["native"], s.pathsFile(Zipf), 20)
				s.lfl[NativeMap] = v
				s.logf("native like-for-like check: ok=%v %s%s", v.OK, v.Note, v.NA)
				if md != "" {
					s.res.Responses = append(s.res.Responses, md)
				}
			} else {
				s.stop(p)
			}
		}
	}
	s.runGroup(NativeRounds, targets)
	s.profileGroup(NativeRounds, targets)
	if mp != nil {
		s.stop(mp)
	}
	s.chartGroup(NativeRounds)
	s.comparisonRows(NativeRounds)
}
