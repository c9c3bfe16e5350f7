package suite

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

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
	r := report.Row{ID: "dns", Figure: fig, BaselineLabel: "miekg/dns map", Target: targetOf("dns"),
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
