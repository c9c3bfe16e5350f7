package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// target is where a scenario's load goes: an address and the process group
// whose CPU is the server's.
type target struct {
	Addr string
	Proc *Proc
}

// capacity runs scenario sc's closed-loop load against t for d and measures
// the server's CPU over it.
func (s *Suite) capacity(label string, sc Scenario, t target, d time.Duration) Result {
	c0 := groupCPU(t.Proc.PG)
	b0, okB0 := cpuBusy(s.cfg.ServerCPU)
	var r Result
	switch sc.Load {
	case Wrk:
		r = s.wrk(label, t.Addr, s.pathsFile(sc.Paths), sc.Prefix, sc.Suffix, sc.Accept, d)
	case HdlUDP, HdlTCP:
		r = s.hdlload(label, t.Addr, s.pathsFile(sc.Paths), sc.Load == HdlUDP, d)
	}
	c := groupCPU(t.Proc.PG).Sub(c0)
	if b1, ok := cpuBusy(s.cfg.ServerCPU); ok && okB0 && s.pinned {
		// Ticks the server CPU spent on anything but the server.
		s.otherTicks += (b1 - b0) - c.Total()
		s.runTicks += d.Seconds() * clkTck
	}
	r.Duration = d.Seconds()
	r.ServerSecs = c.Total() / clkTck
	r.UserSecs, r.SysSecs = c.User/clkTck, c.Sys/clkTck
	r.MajFaults, r.MinFaults = c.Maj, c.Minor
	if r.ServerSecs > 0 {
		r.PerCPU = r.Requests / r.ServerSecs
	}
	s.logf("%s: %.0f req/s, %.0f req/server-CPU-s, server CPU %.2fs, p99 %.3f ms (closed loop), bad %.0f, %.3f minor and %.3f major page faults per request",
		label, r.Rate, r.PerCPU, r.ServerSecs, r.P99, r.Bad, r.Min(), r.Maj())
	return r
}

var (
	wrkTotal  = regexp.MustCompile(`(?m)^\s*(\d+) requests in`)
	wrkRate   = regexp.MustCompile(`(?m)^Requests/sec:\s*([0-9.]+)`)
	wrkP99    = regexp.MustCompile(`(?m)^\s*99%\s+([0-9.]+)(us|ms|s|m)\b`)
	wrkNon2xx = regexp.MustCompile(`(?m)Non-2xx or 3xx responses:\s*(\d+)`)
	wrkSocket = regexp.MustCompile(`(?m)Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk's --latency output into a Run's requests, rate, p99
// (ms) and bad count.
func parseWrk(out string) Result {
	var r Result
	if m := wrkTotal.FindStringSubmatch(out); m != nil {
		r.Requests = atof(m[1])
	}
	if m := wrkRate.FindStringSubmatch(out); m != nil {
		r.Rate = atof(m[1])
	}
	if m := wrkP99.FindStringSubmatch(out); m != nil {
		mult := map[string]float64{"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[m[2]]
		r.P99 = atof(m[1]) * mult
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Bad += atof(m[1])
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		for _, v := range m[1:] {
			r.Bad += atof(v)
		}
	}
	return r
}

// wrk runs one closed-loop wrk run on the load CPU: one thread, CONNS
// connections, cycling over paths.
func (s *Suite) wrk(label, addr, paths, pre, suf, accept string, d time.Duration) Result {
	args := []string{"wrk", "-t1", "-c" + strconv.Itoa(s.cfg.Conns), "-d" + secs(d), "--timeout", "5s", "--latency",
		"-s", filepath.Join(s.cfg.Root, "bench/wrk/stream.lua"), "http://" + addr, "--", pre, suf, accept}
	cmd := s.loadCmd(args...)
	cmd.Env = append(os.Environ(), "BENCH_PATHS="+paths)
	out, _ := cmd.CombinedOutput()
	os.WriteFile(filepath.Join(s.work, "wrk-"+fileSafe(label)+".txt"), out, 0o644)
	r := parseWrk(string(out))
	acc := ""
	if accept != "" {
		acc = " '" + accept + "'"
	}
	r.Command = fmt.Sprintf("wrk -t1 -c%d -d%s --latency -s bench/wrk/stream.lua http://ADDR -- '%s' '%s'%s  (BENCH_PATHS=%s)",
		s.cfg.Conns, secs(d), pre, suf, acc, filepath.Base(paths))
	return r
}

// hdlResult is one line of bench/cmd/hdlload's output.
type hdlResult struct {
	Queries int                `json:"queries"`
	QPS     float64            `json:"qps"`
	Errors  int                `json:"errors"`
	Codes   map[string]int     `json:"response_codes"`
	Latency map[string]float64 `json:"latency_ms"`
}

// hdlload runs bench/cmd/hdlload with 32 clients over one protocol.
func (s *Suite) hdlload(label, addr, paths string, udp bool, d time.Duration) Result {
	proto := "tcp"
	if udp {
		proto = "udp"
	}
	args := []string{s.bin("hdlload"), "-addr", addr, "-paths", paths, "-clients", "32", "-duration", secs(d), "-protos", proto}
	var res hdlResult
	out, err := s.output(s.onLoad(args)...)
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	if err != nil {
		s.logf("%s: hdlload: %v", label, err)
	}
	return Result{
		Requests: res.QPS * d.Seconds(), Rate: res.QPS, P99: res.Latency["p99"], Bad: float64(res.Errors),
		Command: fmt.Sprintf("hdlload -addr ADDR -paths %s -clients 32 -duration %s -protos %s", filepath.Base(paths), secs(d), proto),
	}
}

// olResult is bench/cmd/openloop's output.
type olResult struct {
	Achieved float64            `json:"achieved_rate"`
	Errors   float64            `json:"errors"`
	Missed   float64            `json:"missed"`
	Latency  map[string]float64 `json:"latency_ms"`
	CPUShare float64            `json:"cpu_share"`
}

// OpenLoop is what one open-loop latency run measured.
type OpenLoop struct {
	Pct            int
	Rate           float64
	P50, P99       float64
	Achieved       float64
	Bad            float64
	GenCPU         float64 // % of its core the generator itself used
	ServerUS       float64 // the server's CPU per answered request, µs (0: not measured)
	Flag           string  // empty when the rate was reached; else generator- or server-bound
	Command        string
	ServerScenario string
}

// Reached reports whether the run sent its rate (its tail is then the
// server's, not a backlog's).
func (o *OpenLoop) Reached() bool { return o != nil && o.Flag == "" }

// P99Text is the p99 in ms with the flag ("2.939 ms", "417.535 ms
// [server-bound: …]"), or "?" when the run did not happen.
func (o *OpenLoop) P99Text() string {
	if o == nil {
		return "?"
	}
	return fmt.Sprintf("%.3f ms%s", o.P99, o.Flag)
}

// ServerText is ServerUS as text ("12.3 µs"), or "?" when not measured.
func (o *OpenLoop) ServerText() string {
	if o == nil || o.ServerUS == 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f µs", o.ServerUS)
}

// openLoop runs bench/cmd/openloop at rate for OL_DUR against t, and
// measures the server's CPU over it: at a rate the server can keep up with,
// that CPU per request (its idle spells between requests included) decides
// how close to saturation the run is, and so its tail.
func (s *Suite) openLoop(label string, sc Scenario, t target, pct int, rate float64) *OpenLoop {
	rate = float64(int(rate))
	paths := s.pathsFile(sc.Paths)
	args := []string{s.bin("openloop"), "-addr", t.Addr, "-paths", paths, "-prefix", sc.Prefix, "-suffix", sc.Suffix,
		"-rate", strconv.Itoa(int(rate)), "-duration", secs(s.cfg.OLDur), "-conns", strconv.Itoa(s.cfg.OLConns)}
	var res olResult
	c0 := groupCPU(t.Proc.PG)
	out, err := s.output(s.onLoad(args)...)
	used := groupCPU(t.Proc.PG).Sub(c0)
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	if err != nil {
		s.logf("%s: openloop: %v", label, err)
	}
	o := &OpenLoop{Pct: pct, Rate: rate, P50: res.Latency["p50"], P99: res.Latency["p99"], Achieved: res.Achieved,
		Bad: res.Errors + res.Missed, GenCPU: 100 * res.CPUShare,
		Command: fmt.Sprintf("openloop -addr ADDR -paths %s -prefix '%s' -suffix '%s' -rate %d -duration %s -conns %d",
			filepath.Base(paths), sc.Prefix, sc.Suffix, int(rate), secs(s.cfg.OLDur), s.cfg.OLConns)}
	o.ServerUS = perReq(used.Total()/clkTck*1e6, o.Achieved*s.cfg.OLDur.Seconds())
	if o.Achieved < 0.95*rate {
		// The target rate was not achieved: the tail then measures a
		// backlog, the generator's (its core saturated) or the server's.
		if o.GenCPU >= 90 {
			o.Flag = fmt.Sprintf(" [generator-bound: %.0f of %.0f/s, load core %.0f %% busy]", o.Achieved, rate, o.GenCPU)
		} else {
			o.Flag = fmt.Sprintf(" [server-bound: %.0f of %.0f/s answered]", o.Achieved, rate)
		}
	}
	s.logf("%s: open loop at %.0f/s: achieved %.0f/s, p50 %.3f ms, p99 %.3f ms, errors+missed %.0f, generator CPU %.0f %%, server CPU %s per request%s",
		label, rate, o.Achieved, o.P50, o.P99, o.Bad, o.GenCPU, o.ServerText(), o.Flag)
	return o
}

// output runs args and returns its standard output; its standard error
// goes to the suite's log file.
func (s *Suite) output(args ...string) ([]byte, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = s.cfg.Root
	cmd.Stderr = s.logFile
	return cmd.Output()
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s" }

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
