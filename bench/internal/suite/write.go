package suite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

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
