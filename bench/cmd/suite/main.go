package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"pidnode/bench/internal/suite"
)

func main() {
	if code, stop := answerArgs(os.Args[1:], os.Stdout, os.Stderr); stop {
		os.Exit(code)
	}
	cfg, err := fromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(2)
	}
	cfg.Log = progressOut()
	out, stopped, err := runUntilSignal(func() (string, error) { return suite.Run(cfg) }, suite.Interrupt, cfg.Log)
	if stopped {
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}

// runUntilSignal returns run's result, unless SIGINT, SIGTERM or SIGHUP
// (the terminal or the SSH session gone) comes first: then it calls stop,
// the run's clean-up (every process group the suite started is stopped, so
// no pinned server is left behind), and reports stopped without waiting for
// run. The message goes to log, the progress lines' descriptor: after a
// hangup standard error may be a pipe whose reader (tee, say) has gone.
func runUntilSignal(run func() (string, error), stop func(), log io.Writer) (out string, stopped bool, err error) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1) // a run that outlives a stop never blocks
	go func() {
		out, err := run()
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, false, r.err
	case s := <-sig:
		fmt.Fprintf(log, "suite: %v: stopping\n", s)
		stop()
		return "", true, nil
	}
}

// progressOut is where the progress lines go: a duplicate of standard
// error. The runtime ends a process that writes to descriptor 1 or 2 after
// its reader has gone (make bench | head) at once, by SIGPIPE, before the
// clean-up could stop the servers; a write to the duplicate fails instead,
// and the run goes on to write its report. SIGPIPE itself is left alone: a
// handler or SIG_IGN would also catch the sockets' and be inherited by the
// commands the suite runs.
func progressOut() io.Writer {
	fd, err := syscall.Dup(2)
	if err != nil {
		return os.Stderr
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "/dev/stderr")
}

// usage is what -h prints, and what an argument is refused with.
const usage = `usage: [NAME=value ...] go run ./bench/cmd/suite

The suite takes no arguments. Its settings are environment variables (N,
DUR, ROUNDS, OUT, PROFILE, ...): bench/README.md lists them with their
defaults, and a quick run of every scenario. make bench and make bench-full
set N and DUR and run it.
`

// answerArgs handles the command line, which only ever asks for the usage:
// -h (or -help, --help) prints it, and any other argument is refused with
// it rather than read as "run", since a run takes many minutes and pins
// both CPUs. stop reports that main should exit with code.
func answerArgs(args []string, stdout, stderr io.Writer) (code int, stop bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0, true
	}
	fmt.Fprintf(stderr, "suite: unexpected argument %q\n%s", args[0], usage)
	return 2, true
}

// fromEnv reads the settings (bench/README.md); unset ones keep the
// suite's defaults.
func fromEnv() (suite.Config, error) {
	root, err := moduleRoot()
	if err != nil {
		return suite.Config{}, err
	}
	cfg := suite.Config{Root: root, Out: os.Getenv("OUT"), Data: os.Getenv("BENCH_DATA"), Work: os.Getenv("BENCH_WORK"),
		Keep: os.Getenv("KEEP") == "1", PidnodeBin: os.Getenv("PIDNODE_BIN"), PidnodeCommit: os.Getenv("PIDNODE_COMMIT"),
		Profile: os.Getenv("PROFILE") != "0", CacheBytes: os.Getenv("CACHE_BYTES"), MemBytes: os.Getenv("MEM_BYTES"),
		ExtraRounds: suite.DefaultExtraRounds, ServerCPU: 0, LoadCPU: 1}
	var errs []string
	ints := map[string]*int{"N": &cfg.N, "CONNS": &cfg.Conns, "OL_CONNS": &cfg.OLConns, "REQUESTS": &cfg.Requests, "SEED": &cfg.Seed,
		"ROUNDS": &cfg.Rounds, "EXTRA_ROUNDS": &cfg.ExtraRounds, "DNS_MAX_N": &cfg.DNSMaxN, "LC_RATE": &cfg.LCRate, "LC_HOSTS": &cfg.LCHosts,
		"SERVER_CPU": &cfg.ServerCPU, "LOAD_CPU": &cfg.LoadCPU}
	for k, p := range ints {
		if v := os.Getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Sprintf("%s=%q: want a whole number ≥ 0", k, v))
			}
			*p = n
		}
	}
	durs := map[string]*time.Duration{"DUR": &cfg.Dur, "OL_DUR": &cfg.OLDur, "PROF_DUR": &cfg.ProfDur, "NGINX_WAIT": &cfg.NginxWait,
		"MEM_DUR": &cfg.MemDur, "LC_DUR": &cfg.LCDur, "LC_SETTLE": &cfg.LCSettle}
	for k, p := range durs {
		if v := os.Getenv(k); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				errs = append(errs, fmt.Sprintf("%s=%q: want seconds > 0", k, v))
			}
			*p = time.Duration(f * float64(time.Second))
		}
	}
	if v := os.Getenv("SPREAD_MAX"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			errs = append(errs, fmt.Sprintf("SPREAD_MAX=%q: want a percentage > 0", v))
		}
		cfg.SpreadMax = f
	}
	if v := os.Getenv("HIT_BUDGETS"); v != "" {
		for _, f := range strings.Fields(v) {
			p, err := strconv.ParseFloat(f, 64)
			if err != nil || p <= 0 {
				errs = append(errs, fmt.Sprintf("HIT_BUDGETS=%q: want percentages > 0", v))
				break
			}
			cfg.HitBudgets = append(cfg.HitBudgets, p)
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return cfg, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return cfg, nil
}

// moduleRoot is the directory holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		d = p
	}
}
