// Package suite is pidnode's end-to-end benchmark suite: pidnode and its
// baselines (nginx's map, a bare fasthttp map, a bare native-protocol map, a
// bare miekg/dns map) measured in one invocation on the same data, the
// scenarios as data (Scenarios, Comparisons, Breakdowns), results as JSON and
// the report rendered from it (bench/internal/report).
//
// It runs real processes: the pidnode binary, nginx, the bench/cmd tools,
// wrk and perf, each server in a process group of its own pinned to
// Config.ServerCPU, the load generators to Config.LoadCPU, all on loopback;
// every group it started is stopped on the way out. bench/cmd/suite is its
// command. Part of bench/, imported by nothing outside it.
package suite

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"pidnode/bench/internal/report"
)

// Config is one run's settings; bench/cmd/suite fills it from the
// environment (bench/README.md lists the variables). Zero fields take the
// defaults New documents.
type Config struct {
	// Root is the module's root directory. Required.
	Root string
	// N identifiers (1,000,000).
	N int
	// Dur per closed-loop capacity run (10 s); OLDur per open-loop latency
	// run (15 s: longer than the 10 s statistics interval, so every latency
	// run includes a flush); ProfDur per profile run (5 s).
	Dur, OLDur, ProfDur time.Duration
	// NginxWait is how long nginx may take to load its map (300 s).
	NginxWait time.Duration
	// Conns are wrk's connections (64), OLConns the open loop's (128).
	Conns, OLConns int
	// Requests is the length of each request stream (200,000); Seed the
	// dataset's (1).
	Requests int
	Seed     int
	// Rounds of each round group (3), ExtraRounds at most when a group's
	// rounds lie more than SpreadMax % apart (2, 10).
	Rounds, ExtraRounds int
	SpreadMax           float64
	// CacheBytes is pidnode's --cache-bytes for every node ("": its own
	// default). MemBytes is the memory scenario's budget (CacheBytes, else
	// "64MiB"), MemDur its length (2×Dur).
	CacheBytes, MemBytes string
	MemDur               time.Duration
	// HitBudgets are the hit-ratio budgets in percent of the database file
	// (1, 5, 25).
	HitBudgets []float64
	// DNSMaxN caps bench/dns/run.sh's names (100,000).
	DNSMaxN int
	// The link checker's run: LCDur measured (30 s), LCRate URLs per second
	// (1,000), LCHosts loopback hosts (64), LCSettle idle before the base
	// memory sample (5 s).
	LCDur    time.Duration
	LCRate   int
	LCHosts  int
	LCSettle time.Duration
	// Out is the results directory (Root/bench/results); Data the dataset
	// cache (Root/bench/data); Work the scratch directory (a temporary one,
	// removed at the end unless Keep).
	Out, Data, Work string
	Keep            bool
	// ServerCPU and LoadCPU pin the servers and the load generators (0, 1)
	// on a machine with 2 or more CPUs.
	ServerCPU, LoadCPU int
	// PidnodeBin is a prebuilt pidnode to measure ("": build ./cmd/pidnode);
	// PidnodeCommit names the commit it was built from.
	PidnodeBin, PidnodeCommit string
	// Profile takes the perf profiles (when perf is installed).
	Profile bool
	// Log receives the progress lines (os.Stderr if nil).
	Log io.Writer
}

// New fills cfg's defaults.
func New(cfg Config) Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defd := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	def(&cfg.N, 1000000)
	defd(&cfg.Dur, 10*time.Second)
	defd(&cfg.OLDur, 15*time.Second)
	defd(&cfg.ProfDur, 5*time.Second)
	defd(&cfg.NginxWait, 300*time.Second)
	def(&cfg.Conns, 64)
	def(&cfg.OLConns, 128)
	def(&cfg.Requests, 200000)
	def(&cfg.Seed, 1)
	def(&cfg.Rounds, 3)
	def(&cfg.DNSMaxN, 100000)
	if cfg.SpreadMax == 0 {
		cfg.SpreadMax = 10
	}
	if cfg.MemBytes == "" {
		cfg.MemBytes = cfg.CacheBytes
		if cfg.MemBytes == "" {
			cfg.MemBytes = "64MiB"
		}
	}
	defd(&cfg.MemDur, 2*cfg.Dur)
	if len(cfg.HitBudgets) == 0 {
		cfg.HitBudgets = []float64{1, 5, 25}
	}
	defd(&cfg.LCDur, 30*time.Second)
	def(&cfg.LCRate, 1000)
	def(&cfg.LCHosts, 64)
	defd(&cfg.LCSettle, 5*time.Second)
	if cfg.Out == "" {
		cfg.Out = filepath.Join(cfg.Root, "bench/results")
	}
	if cfg.Data == "" {
		cfg.Data = filepath.Join(cfg.Root, "bench/data")
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	return cfg
}

// DefaultExtraRounds is Config.ExtraRounds when the environment does not
// set it (bench/cmd/suite: EXTRA_ROUNDS).
const DefaultExtraRounds = 2

// Prefix and namespace of the generated identifiers.
const (
	prefix = "21.T12345"
	ns     = "BNC"
)

// Suite is one run.
type Suite struct {
	cfg      Config
	rule     RoundRule
	work     string
	binDir   string
	data     string // the dataset directory
	logw     io.Writer
	logFile  *os.File
	logMu    sync.Mutex
	started  time.Time
	procs    procs
	pinned   bool
	onServer []string
	pinning  string

	otherTicks, runTicks float64

	res      report.Results
	rounds   map[string]*Rounds
	ran      map[Group]int
	ol       map[string]map[int]*OpenLoop
	lfl      map[Server]Verdict
	children map[string]map[string]float64
	syscalls map[string]float64
	// why collects each row's reasons until the rows are final.
	why map[string][]string

	meta     genMeta
	dbBytes  int64
	commit   string
	haveNode bool
	// missNote says how the miss rounds' database got into the page cache.
	missNote string
}

// running is the suite Run is running, for Interrupt.
var running struct {
	sync.Mutex
	s *Suite
}

// Interrupt stops every process group the running suite started and
// removes its scratch directory (unless kept): the caller is about to exit.
func Interrupt() {
	running.Lock()
	s := running.s
	running.Unlock()
	if s == nil {
		return
	}
	s.stopAll()
	if s.cfg.Work == "" && !s.cfg.Keep {
		os.RemoveAll(s.work)
	}
}

// Run runs the whole suite with cfg and writes the report; it returns the
// report's path.
func Run(cfg Config) (string, error) {
	cfg = New(cfg)
	s := &Suite{
		cfg:      cfg,
		rule:     RoundRule{Rounds: cfg.Rounds, Extra: cfg.ExtraRounds, SpreadMax: cfg.SpreadMax},
		started:  time.Now(),
		procs:    procs{groups: map[int]*Proc{}},
		rounds:   map[string]*Rounds{},
		ran:      map[Group]int{},
		ol:       map[string]map[int]*OpenLoop{},
		lfl:      map[Server]Verdict{},
		children: map[string]map[string]float64{},
		syscalls: map[string]float64{},
		why:      map[string][]string{},
	}
	for _, sc := range Scenarios {
		s.rounds[sc.ID] = &Rounds{}
	}
	var err error
	if cfg.Work != "" {
		s.work = cfg.Work
		err = os.MkdirAll(s.work, 0o755)
	} else {
		s.work, err = os.MkdirTemp("", "pidnode-bench.")
	}
	if err != nil {
		return "", err
	}
	s.logFile, err = os.Create(filepath.Join(s.work, "suite.log"))
	if err != nil {
		return "", err
	}
	s.logw = io.MultiWriter(s.logFile, cfg.Log)
	running.Lock()
	running.s = s
	running.Unlock()
	defer func() {
		s.stopAll()
		s.logFile.Close()
		if cfg.Work == "" && !cfg.Keep {
			os.RemoveAll(s.work)
		} else {
			fmt.Fprintf(cfg.Log, "bench: scratch kept in %s\n", s.work)
		}
	}()
	return s.run()
}

// logf writes one progress line with the seconds since the start.
func (s *Suite) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.logw, "bench: [+%.0fs] %s\n", time.Since(s.started).Seconds(), fmt.Sprintf(format, args...))
}

// onLoad prefixes args with the load CPU's taskset when pinned.
func (s *Suite) onLoad(args []string) []string {
	if !s.pinned {
		return args
	}
	return append([]string{"taskset", "-c", strconv.Itoa(s.cfg.LoadCPU)}, args...)
}

// loadCmd is a command pinned to the load CPU.
func (s *Suite) loadCmd(args ...string) *exec.Cmd {
	a := s.onLoad(args)
	c := exec.Command(a[0], a[1:]...)
	c.Dir = s.cfg.Root
	return c
}

func (s *Suite) bin(name string) string { return filepath.Join(s.binDir, name) }

// pathsFile is the request stream's file.
func (s *Suite) pathsFile(p Paths) string {
	if p == Tombstones {
		return filepath.Join(s.work, "tomb", string(p))
	}
	return filepath.Join(s.data, string(p))
}

// row appends a row to the report.
func (s *Suite) row(r report.Row) { s.res.Rows = append(s.res.Rows, r) }

// na appends a row whose figure could not be measured; a target it has
// stays on the row, judged "not measured".
func (s *Suite) na(id, figure, unit, command, why string) {
	s.row(report.Row{ID: id, Figure: figure, Unit: unit, Command: command, Target: targetOf(id), Note: "not available: " + why})
}

// bar appends a chart entry; perCPU ≤ 0 draws the rate instead.
func (s *Suite) bar(scenario, system string, perCPU, rate, p99 float64) {
	b := report.Bar{Scenario: scenario, System: system, Rate: rate, P99: p99}
	if perCPU > 0 {
		b.PerCPU = report.F(perCPU)
	}
	s.res.Bars = append(s.res.Bars, b)
}

// addWhy records what the run measured behind row id's figure.
func (s *Suite) addWhy(id, text string) {
	if strings.TrimSpace(text) != "" {
		s.why[id] = append(s.why[id], strings.TrimSpace(text))
	}
}

func (s *Suite) run() (string, error) {
	cfg := s.cfg
	if n := runtime.NumCPU(); n >= 2 {
		s.pinned = true
		s.onServer = []string{"taskset", "-c", strconv.Itoa(cfg.ServerCPU)}
		s.pinning = fmt.Sprintf("server on CPU %d, load generator on CPU %d (taskset)", cfg.ServerCPU, cfg.LoadCPU)
	} else {
		s.pinning = "not pinned (1 CPU): server and load generator share the CPU"
	}
	load0 := loadavg()
	s.commit = cfg.PidnodeCommit
	if s.commit == "" {
		s.commit = gitCommit(cfg.Root)
	}
	s.logf("N=%d DUR=%s CONNS=%d REQUESTS=%d ROUNDS=%d; %s; scratch %s", cfg.N, secs(cfg.Dur), cfg.Conns, cfg.Requests, cfg.Rounds, s.pinning, s.work)
	s.installTools()
	if err := s.build(); err != nil {
		return "", err
	}
	if err := s.dataset(); err != nil {
		return "", err
	}
	notRun := "its scenario did not run (see the log)"
	if s.haveNode {
		s.nodeScenarios()
	} else {
		notRun = "cmd/pidnode does not build"
	}
	s.res.Rows = append(s.res.Rows, missingTargets(s.res.Rows, notRun)...)
	return s.write(load0)
}

// installTools installs wrk and nginx with apt-get when missing (Debian).
func (s *Suite) installTools() {
	var need []string
	if _, err := exec.LookPath("wrk"); err != nil {
		need = append(need, "wrk")
	}
	if s.nginx() == "" {
		need = append(need, "nginx-light")
	}
	if len(need) == 0 {
		return
	}
	s.logf("installing %s (Debian packages)", strings.Join(need, " "))
	args := append([]string{"install", "-y", "-qq"}, need...)
	cmd := exec.Command("apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = s.logFile, s.logFile
	if cmd.Run() != nil {
		up := exec.Command("apt-get", "update", "-qq")
		up.Stdout, up.Stderr = s.logFile, s.logFile
		up.Run()
		cmd = exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = s.logFile, s.logFile
		if err := cmd.Run(); err != nil {
			s.logf("could not install %s: %v", strings.Join(need, " "), err)
		}
	}
}

func (s *Suite) nginx() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return ""
}

// tools are the bench commands the suite runs.
var tools = []string{"gen", "openloop", "baseline-http", "baseline-hdl", "admincreate", "hdlload", "likeforlike", "linktarget"}

func (s *Suite) build() error {
	s.logf("building")
	s.binDir = filepath.Join(s.work, "bin")
	if err := os.MkdirAll(s.binDir, 0o755); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-o", s.binDir + "/"}
	for _, t := range tools {
		args = append(args, "./bench/cmd/"+t)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = s.cfg.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the bench tools: %v\n%s", err, out)
	}
	s.haveNode = true
	if s.cfg.PidnodeBin != "" {
		// A binary built elsewhere, e.g. from a clean checkout of a commit
		// while the work tree is mid-edit.
		b, err := os.ReadFile(s.cfg.PidnodeBin)
		if err == nil {
			err = os.WriteFile(s.bin("pidnode"), b, 0o755)
		}
		if err != nil {
			return err
		}
		s.logf("pidnode binary: %s", s.cfg.PidnodeBin)
		return nil
	}
	cmd = exec.Command("go", "build", "-trimpath", "-o", s.bin("pidnode"), "./cmd/pidnode")
	cmd.Dir = s.cfg.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		s.haveNode = false
		s.logf("cmd/pidnode does not build: pidnode rows will read 'not available'\n%s", out)
	}
	return nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	fs := strings.Fields(string(b))
	if len(fs) < 3 {
		return "?"
	}
	return strings.Join(fs[:3], " ")
}

// gitCommit is HEAD's short hash, "+local changes" when the server's code
// differs from it: taken at the start, not when the report is written
// (others may commit meanwhile).
func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	c := strings.TrimSpace(string(out))
	st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--", "cmd", "handlev", "store", "cache", "resolver", "admin").Output()
	if len(strings.TrimSpace(string(st))) > 0 {
		c += "+local changes"
	}
	return c
}
