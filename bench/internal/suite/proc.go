package suite

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clkTck is the kernel's USER_HZ, the unit of /proc's CPU times: 100 on
// every Linux architecture the suite runs on.
const clkTck = 100

// Proc is a server the suite started, in a process group of its own.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	PG   int
	done chan struct{}
}

// procs tracks the process groups the suite started, so that every one of
// them is stopped on the way out, whatever happens.
type procs struct {
	mu     sync.Mutex
	groups map[int]*Proc
}

// start runs args in a new process group (setsid), pinned to the server CPU,
// output to WORK/name.log.
func (s *Suite) start(name string, env []string, args ...string) (*Proc, error) {
	return s.startOn(s.onServer, name, env, args...)
}

func (s *Suite) startOn(pin []string, name string, env []string, args ...string) (*Proc, error) {
	full := append(append([]string{}, pin...), args...)
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Dir = s.cfg.Root
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.Create(filepath.Join(s.work, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &Proc{Name: name, Cmd: cmd, PG: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	s.procs.mu.Lock()
	s.procs.groups[p.PG] = p
	s.procs.mu.Unlock()
	return p, nil
}

// Alive reports whether p's leader still runs.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to p's group, waits up to 10 s for its leader, then
// SIGKILLs what is left.
func (s *Suite) stop(p *Proc) {
	if p == nil {
		return
	}
	syscall.Kill(-p.PG, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	syscall.Kill(-p.PG, syscall.SIGKILL)
	<-p.done
	s.procs.mu.Lock()
	delete(s.procs.groups, p.PG)
	s.procs.mu.Unlock()
}

// stopAll stops every group still running (the way out).
func (s *Suite) stopAll() {
	s.procs.mu.Lock()
	var ps []*Proc
	for _, p := range s.procs.groups {
		ps = append(ps, p)
	}
	s.procs.mu.Unlock()
	for _, p := range ps {
		syscall.Kill(-p.PG, syscall.SIGTERM)
	}
	time.Sleep(500 * time.Millisecond)
	for _, p := range ps {
		syscall.Kill(-p.PG, syscall.SIGKILL)
	}
}

// CPU is what a process group used so far, from /proc/PID/stat.
type CPU struct {
	User, Sys  float64 // clock ticks
	Maj, Minor float64 // page faults that read from disk; that did not
}

// Total is user + system ticks.
func (c CPU) Total() float64 { return c.User + c.Sys }

// Sub is c − o.
func (c CPU) Sub(o CPU) CPU {
	return CPU{c.User - o.User, c.Sys - o.Sys, c.Maj - o.Maj, c.Minor - o.Minor}
}

// groupCPU sums /proc/PID/stat over every live process of group pg (nginx's
// master and worker both count): utime, stime, majflt, minflt (fields 14,
// 15, 12, 10).
func groupCPU(pg int) CPU {
	var c CPU
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fs, ok := statFields(b)
		if !ok {
			continue
		}
		if g, _ := strconv.Atoi(fs[2]); g != pg {
			continue
		}
		c.Minor += atof(fs[7])
		c.Maj += atof(fs[9])
		c.User += atof(fs[11])
		c.Sys += atof(fs[12])
	}
	return c
}

// statFields splits /proc/PID/stat after the command name, so fs[0] is
// field 3 (state).
func statFields(b []byte) ([]string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	fs := strings.Fields(string(b[i+1:]))
	return fs, len(fs) >= 13
}

func atof(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v
}

// cpuBusy is the busy ticks (user+nice+system+irq+softirq+steal) of cpu
// from /proc/stat; false when unknown.
func cpuBusy(cpu int) (float64, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	want := "cpu" + strconv.Itoa(cpu)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 8 && fs[0] == want {
			return atof(fs[1]) + atof(fs[2]) + atof(fs[3]) + atof(fs[6]) + atof(fs[7]) + atof(fs[8]), true
		}
	}
	return 0, false
}

// statusKB is a field of /proc/PID/status in kB (VmRSS, RssAnon, RssFile);
// 0 when unreadable.
func statusKB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == field {
			fs := strings.Fields(v)
			if len(fs) > 0 {
				return atof(fs[0])
			}
		}
	}
	return 0
}

// memWatch samples RssAnon and VmRSS of pid every 0.1 s until stopped; the
// stop function returns the peaks in kB.
func memWatch(pid int) (stop func() (anon, rss float64)) {
	quit := make(chan struct{})
	done := make(chan [2]float64)
	go func() {
		var pa, pr float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			pa = max(pa, statusKB(pid, "RssAnon"))
			pr = max(pr, statusKB(pid, "VmRSS"))
			select {
			case <-quit:
				done <- [2]float64{pa, pr}
				return
			case <-t.C:
			}
		}
	}()
	return func() (float64, float64) {
		close(quit)
		p := <-done
		return p[0], p[1]
	}
}

// readyFile waits up to d for name to hold lines "NAME ADDR" with every key
// of want, and returns them; false when it does not appear in time or p
// dies first.
func readyFile(name string, d time.Duration, p *Proc, want ...string) (map[string]string, bool) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if b, err := os.ReadFile(name); err == nil {
			m := map[string]string{}
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
					m[k] = strings.TrimSpace(v)
				}
			}
			all := true
			for _, w := range want {
				if m[w] == "" {
					all = false
				}
			}
			if all {
				return m, true
			}
		}
		if p != nil && !p.Alive() {
			return nil, false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, false
}
