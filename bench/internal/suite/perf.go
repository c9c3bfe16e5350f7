package suite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pidnode/bench/internal/report"
)

// profiling reports whether perf profiles are taken: Debian's linux-perf is
// installed (the suite does not install it) and PROFILE is not 0.
func (s *Suite) profiling() bool {
	if !s.cfg.Profile {
		return false
	}
	_, err := exec.LookPath("perf")
	return err == nil
}

func (s *Suite) perfData(label string) string {
	return filepath.Join(s.work, "perf-"+fileSafe(label)+".data")
}

// profile records perf on pids (comma-separated; the server's group leader
// by default) during a separate PROF_DUR run of sc, and counts the server's
// system calls meanwhile (perf stat), for syscallsPerRequest. Not part of any
// figure.
func (s *Suite) profile(sc Scenario, t target, pids string) {
	if !s.profiling() || sc.Profile == "" {
		return
	}
	if pids == "" {
		pids = strconv.Itoa(t.Proc.PG)
	}
	data := s.perfData(sc.Profile)
	d := s.cfg.ProfDur
	rec := s.loadCmd("perf", "record", "-F", "997", "-g", "-p", pids, "-o", data, "--", "sleep", secs(d))
	stat := s.loadCmd("perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", pids, "-o", data+".stat", "--", "sleep", secs(d))
	rec.Start()
	stat.Start()
	time.Sleep(200 * time.Millisecond)
	r := s.capacity("profile-"+sc.Profile, sc, t, d)
	rec.Wait()
	stat.Wait()
	// perf's window opens 0.2 s before the load starts and closes with it.
	if b, err := os.ReadFile(data + ".stat"); err == nil {
		n := r.Rate * (d.Seconds() - 0.2)
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Split(l, ",")
			if len(fs) > 2 && fs[2] == "raw_syscalls:sys_enter" && n > 0 {
				s.syscalls[sc.Profile] = atof(fs[0]) / n
			}
		}
	}
	s.profileSection(sc.Profile)
}

// profileLoad records perf on the server while args (on the load CPU) run.
func (s *Suite) profileLoad(label string, p *Proc, args ...string) {
	if !s.profiling() {
		return
	}
	rec := s.loadCmd("perf", "record", "-F", "997", "-g", "-p", strconv.Itoa(p.PG), "-o", s.perfData(label), "--", "sleep", secs(s.cfg.ProfDur))
	rec.Start()
	time.Sleep(200 * time.Millisecond)
	s.output(s.onLoad(args)...)
	rec.Wait()
	s.profileSection(label)
}

// profileSection adds the flat top of label's profile to the report.
func (s *Suite) profileSection(label string) {
	out, _ := exec.Command("perf", "report", "-i", s.perfData(label), "--stdio", "--no-children", "-g", "none",
		"--sort", "symbol", "--percent-limit", "1.5").Output()
	var top []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		l = strings.TrimRight(l, " \t")
		l = strings.TrimSuffix(strings.TrimRight(strings.TrimSuffix(l, "-"), " \t"), "-")
		top = append(top, strings.TrimRight(l, " \t"))
		if len(top) == 30 {
			break
		}
	}
	s.res.Profiles = append(s.res.Profiles, report.Profile{Label: label, Top: strings.Join(top, "\n")})
}

// share is symbol's share (%) of label's samples with everything it calls
// (perf's call graphs; Go keeps frame pointers); 0 if it never ran or the
// profile was not taken. A deep kernel stack can cut a sample's chain short
// of its callers, so a caller's share may read less than a callee's: the
// reasons list shares side by side, never one as part of another.
func (s *Suite) share(label, symbol string) float64 {
	tbl, ok := s.children[label]
	if !ok {
		out, _ := exec.Command("perf", "report", "-i", s.perfData(label), "--stdio", "--children", "-g", "none", "--sort", "symbol").Output()
		tbl = parseChildren(string(out))
		s.children[label] = tbl
	}
	return tbl[symbol]
}

// parseChildren reads `perf report --children --sort symbol`: lines
// "  12.34%   1.23%  [.] symbol   -   -" into symbol → the first (children)
// share.
func parseChildren(out string) map[string]float64 {
	m := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		i := strings.Index(l, "] ")
		if i < 0 {
			continue
		}
		fs := strings.Fields(l[:i])
		if len(fs) == 0 {
			continue
		}
		// The symbol ends at the first run of spaces (perf pads the column
		// and may add "-  -" for the columns it has no data for).
		sym, _, _ := strings.Cut(strings.TrimSpace(l[i+2:]), "  ")
		if _, seen := m[sym]; !seen {
			m[sym] = atof(strings.TrimSuffix(fs[0], "%"))
		}
	}
	return m
}

// kernelShare is the kernel's share (%) of label's samples.
func (s *Suite) kernelShare(label string) float64 {
	out, _ := exec.Command("perf", "report", "-i", s.perfData(label), "--stdio", "--no-children", "-g", "none", "--sort", "dso").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[kernel.kallsyms]") {
			if fs := strings.Fields(l); len(fs) > 0 {
				return atof(strings.TrimSuffix(fs[0], "%"))
			}
		}
	}
	return 0
}

// breakdown renders b's shares of its profile: "In *LABEL*: the kernel 50 %;
// X (sym) 28 % (≈ 4.3 µs); …". Empty when the profile was not taken.
func (s *Suite) breakdown(b Breakdown) string {
	if !s.profiling() {
		return ""
	}
	if _, err := os.Stat(s.perfData(b.Profile)); err != nil {
		return ""
	}
	us := 0.0
	if b.PerRequest != "" {
		if r, ok := s.rounds[b.PerRequest].Best(); ok {
			us = r.US()
		}
	}
	var parts []string
	for _, sh := range b.Shares {
		var p float64
		what := sh.What
		if sh.Kernel {
			p = s.kernelShare(b.Profile)
		} else {
			p = s.share(b.Profile, sh.Symbol)
			what += " (" + shortSym(sh.Symbol) + ")"
		}
		t := fmt.Sprintf("%s %.0f %%", what, p)
		if us > 0 {
			t += fmt.Sprintf(" (≈ %.1f µs)", p*us/100)
		}
		parts = append(parts, t)
	}
	return fmt.Sprintf("In *%s*: %s.", b.Profile, strings.Join(parts, "; "))
}

// shortSym drops a symbol's package path: "store.(*DB).Get".
func shortSym(sym string) string {
	if i := strings.LastIndex(sym, "/"); i >= 0 && strings.Contains(sym[i:], ".") {
		return sym[i+1:]
	}
	return sym
}
