package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
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
		BaselineLabel: "pidnode redirect, no writes", Target: targetOf("mixed"), Command: r.Command + " + admincreate -clients 16",
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
		ar.Target = targetOf(ar.ID)
		s.row(ar)
		s.bar(fmt.Sprintf("admin create ×%d", a.Clients), "pidnode", 0, a.Rate, a.Latency["p99"])
	}
	s.logf("admin: %s", strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", " "))
	s.profileLoad(AdminProfile, n.p, s.bin("admincreate"), "-addr", n.adm, "-operator-key-file", key, "-clients", "64", "-duration", secs(s.cfg.ProfDur))
}
