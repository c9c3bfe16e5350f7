package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"pidnode/bench/internal/report"
)

// runGroup runs group g's interleaved rounds over the scenarios whose
// server is up (in targets): Config.Rounds rounds, then more while
// the rule says so (RoundRule.More); then each scenario's open-loop runs at
// its percentages of its best round's rate.
func (s *Suite) runGroup(g Group, targets map[Server]target) {
	var scs []Scenario
	deciding := map[string]*Rounds{}
	for _, sc := range Scenarios {
		if _, up := targets[sc.Server]; sc.Group == g && up {
			scs = append(scs, sc)
			if sc.Spread {
				deciding[sc.ID] = s.rounds[sc.ID]
			}
		}
	}
	if len(scs) == 0 {
		return
	}
	ran := 0
	for {
		more, why := s.rule.More(ran, deciding)
		if !more {
			break
		}
		if why != "" {
			s.logf("%s", why)
		}
		for _, sc := range scs {
			s.rounds[sc.ID].Add(s.capacity(fmt.Sprintf("%s-r%d", sc.ID, ran+1), sc, targets[sc.Server], s.cfg.Dur))
		}
		ran++
	}
	s.ran[g] = ran
	for _, sc := range scs {
		best, _ := s.rounds[sc.ID].Best()
		for _, pct := range sc.OpenLoop {
			if s.ol[sc.ID] == nil {
				s.ol[sc.ID] = map[int]*OpenLoop{}
			}
			s.ol[sc.ID][pct] = s.openLoop(fmt.Sprintf("%s-%d", sc.ID, pct), sc, targets[sc.Server], pct, best.Rate*float64(pct)/100)
		}
	}
}

// profileGroup takes the profiles of g's scenarios whose server is up.
func (s *Suite) profileGroup(g Group, targets map[Server]target) {
	for _, sc := range Scenarios {
		t, up := targets[sc.Server]
		if sc.Group != g || !up || sc.Profile == "" {
			continue
		}
		pids := ""
		if sc.Server == NginxLFL || sc.Server == NginxMin {
			// perf follows the worker (the master only forks it).
			pids = childPIDs(t.Proc.PG)
		}
		s.profile(sc, t, pids)
	}
}

// childPIDs lists the children of pid, comma-separated; pid itself when it
// has none.
func childPIDs(pid int) string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fs, ok := statFields(b); ok && fs[1] == strconv.Itoa(pid) {
			kids = append(kids, filepath.Base(filepath.Dir(f)))
		}
	}
	if len(kids) == 0 {
		return strconv.Itoa(pid)
	}
	return strings.Join(kids, ",")
}

// chartGroup adds g's charted scenarios to the chart: requests per server
// CPU-second of the best round, p99 of the open-loop run at 50 % (HTTP, when
// it reached its rate) or of the closed loop (native protocol).
func (s *Suite) chartGroup(g Group) {
	for _, sc := range Scenarios {
		best, ok := s.rounds[sc.ID].Best()
		if sc.Group != g || sc.Chart == "" || !ok {
			continue
		}
		p99 := 0.0
		if sc.Load != Wrk {
			p99 = best.P99
		} else if o := s.ol[sc.ID][50]; o.Reached() {
			p99 = o.P99
		}
		s.bar(sc.Chart, Servers[sc.Server].System, best.PerCPU, best.Rate, p99)
	}
}

// us is "X µs (user U, kernel K)": the server's CPU per request in r.
func us(r Result) string {
	return fmt.Sprintf("%.1f µs (user %.1f, kernel %.1f)", r.US(), r.USR(), r.SYS())
}

// comparisonRows adds the rows of Comparisons whose scenario is in group g.
func (s *Suite) comparisonRows(g Group) {
	for _, c := range Comparisons {
		sc, _ := ScenarioByID(c.Scenario)
		if sc.Group != g {
			continue
		}
		s.row(s.comparisonRow(c, sc))
	}
}

func (s *Suite) comparisonRow(c Comparison, sc Scenario) report.Row {
	unit := "req/server-CPU-s"
	if sc.Load != Wrk {
		unit = "queries/server-CPU-s"
	}
	r := report.Row{ID: c.Row, Figure: c.Figure, Unit: unit, BaselineLabel: c.BaselineLabel}
	if c.Target > 0 {
		r.Target = &report.Target{Kind: report.RatioMin, Value: c.Target}
	}
	best, ok := s.rounds[c.Scenario].Best()
	if !ok {
		r.Note = "not available: the scenario did not run (see the log)"
		return r
	}
	r.Value = report.F(best.PerCPU)
	r.Command = best.Command
	rounds := s.ran[sc.Group]
	var note []string
	what := "req/s"
	if sc.Load != Wrk {
		what = "queries/s"
	}
	note = append(note, fmt.Sprintf("best of %d interleaved rounds", rounds))
	var base Result
	haveBase := false
	sb, _ := ScenarioByID(c.Baseline)
	if c.Baseline != "" {
		base, haveBase = s.rounds[c.Baseline].Best()
	}
	if haveBase {
		r.Baseline = report.F(base.PerCPU)
		note = append(note, fmt.Sprintf("%.0f vs %.0f %s", best.Rate, base.Rate, what))
	} else {
		note = append(note, fmt.Sprintf("%.0f %s", best.Rate, what))
	}
	if o := s.ol[c.Scenario][50]; o != nil {
		p := "p99 at 50 %: " + o.P99Text()
		if bo := s.ol[c.Baseline][50]; bo != nil && haveBase {
			p += " vs " + bo.P99Text()
		}
		note = append(note, p)
	} else if sc.Load != Wrk {
		note = append(note, fmt.Sprintf("p99 %.3f ms (closed loop)", best.P99))
	}
	note = append(note, fmt.Sprintf("bad %.0f", best.Bad))
	if best.MajFaults > 0 || sc.Group == MissRounds {
		note = append(note, fmt.Sprintf("%.3f major page faults (disk reads) per request", best.Maj()))
	}
	if c.LikeForLike != "" {
		v, checked := s.lfl[c.LikeForLike]
		switch {
		case !checked:
			r.BaselineNA = "n/a: no like-for-like " + Servers[c.LikeForLike].System
		case !v.OK:
			r.BaselineNA = v.NA
		default:
			note = append(note, v.Note)
		}
	} else if bv := s.lfl[sb.Server]; haveBase && sb.Server != sc.Server && bv.Bytes != "" {
		// A minimal server: the check printed its response's size only.
		note = append(note, fmt.Sprintf("its plainest 302: %s against pidnode's %s", bv.Bytes, orQ(s.lfl[Pidnode].Bytes)))
	}
	if c.Note != "" {
		note = append(note, c.Note)
	}
	if sc.Group == MissRounds && s.missNote != "" {
		note = append(note, s.missNote)
	}
	r.Note = strings.Join(note, "; ")
	if haveBase && c.Target > 0 {
		name := c.BaselineLabel
		if sb.Server == sc.Server {
			s.addWhy(c.Row, fmt.Sprintf("server CPU per request in the best rounds: %s %s against %s's %s: %+.1f µs, %+.1f of them in user space, %+.1f in the kernel. Rounds in %s, in order: %s; %s's %s.",
				c.Scenario, us(best), c.Baseline, us(base), best.US()-base.US(), best.USR()-base.USR(), best.SYS()-base.SYS(), unit,
				s.rounds[c.Scenario].List(), c.Baseline, s.rounds[c.Baseline].List()))
		} else {
			s.addWhy(c.Row, fmt.Sprintf("server CPU per request in each one's best round: pidnode %s, %s %s: pidnode %+.1f µs in user space, %+.1f µs in the kernel. Rounds in %s, in order: pidnode %s; %s %s.",
				us(best), name, us(base), best.USR()-base.USR(), best.SYS()-base.SYS(), unit, s.rounds[c.Scenario].List(), name, s.rounds[c.Baseline].List()))
		}
	}
	if haveBase && c.Target > 0 {
		p, okP := s.syscalls[sc.Profile]
		q, okQ := s.syscalls[sb.Profile]
		if okP && okQ {
			s.addWhy(c.Row, fmt.Sprintf("System calls per request (perf stat, in the profile runs): %.2f in *%s*, %.2f in *%s*.", p, sc.Profile, q, sb.Profile))
		}
	}
	if sc.Group == MissRounds {
		var mins, majs []string
		for _, x := range s.rounds[c.Scenario].All {
			mins = append(mins, fmt.Sprintf("%.3f", x.Min()))
			majs = append(majs, fmt.Sprintf("%.3f", x.Maj()))
		}
		s.addWhy(c.Row, fmt.Sprintf("Page faults per request in those rounds, minor (pages already in memory touched for the first time by the server, such as the database file's mapping, or fresh memory): %s; major (disk reads): %s.",
			strings.Join(mins, ", "), strings.Join(majs, ", ")))
	}
	return r
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
