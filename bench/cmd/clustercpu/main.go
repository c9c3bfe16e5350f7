// Command clustercpu measures what one admin create costs a cluster, for
// `make bench-cluster-cpu` (which `make bench-cluster` runs first): for each pidnode binary in -pidnode it starts a
// 3-member etcd (three etcd processes, fsync on) and two pidnode nodes on
// it, creates pid4cat records through the admin API of node n1 with
// bench/cmd/admincreate at each client count of -clients for -duration,
// and reads each process's CPU time (utime+stime of /proc/PID/stat) before
// and after every count: CPU per create per process. Then it compacts
// etcd's history, defragments every member and divides the member's file
// size by the records created: etcd bytes per record. With -rounds above 1
// it does all that again on fresh clusters, the binaries alternating (a, b,
// a, b, …) so that whatever else the host does lands on each, and reports
// the mean of the rounds. The report goes to -out as Markdown, one table
// per binary, so that two builds measured in one run
// (-pidnode base=bin/pidnode-base,head=bin/pidnode) compare on one page.
//
//	go run ./bench/cmd/clustercpu -bin bin -pidnode bin/pidnode -out bench/results/cluster-cpu-DATE.md
//
// Everything on loopback, on ports the kernel hands out. Part of bench/,
// imported by nothing.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func main() {
	var (
		bin      = flag.String("bin", "bin", "directory holding etcd and admincreate")
		pidnodes = flag.String("pidnode", "bin/pidnode", "pidnode binaries to measure, comma-separated, each as label=path or path")
		clients  = flag.String("clients", "1,16,64", "client counts, comma-separated")
		duration = flag.Duration("duration", 10*time.Second, "run time per client count")
		rounds   = flag.Int("rounds", 1, "fresh clusters per binary, alternating between the binaries; the report gives their mean")
		out      = flag.String("out", "", "write the Markdown report here as well as to stdout")
	)
	flag.Parse()
	var counts []int
	for _, f := range strings.Split(*clients, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			fail(fmt.Errorf("bad -clients entry %q", f))
		}
		counts = append(counts, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Cluster CPU and etcd bytes per create, %s\n\n", time.Now().UTC().Format("2006-01-02T15:04Z"))
	fmt.Fprintf(&b, "Host: %d CPUs, %s. Every process on this host: three etcd members (fsync on), two pidnode\n", runtime.NumCPU(), uname())
	fmt.Fprintf(&b, "nodes (n1 accepts every create, n2 applies them from etcd), the load driver. `admincreate` clients\n")
	fmt.Fprintf(&b, "(closed loop) create pid4cat records through n1's admin API, %v per row. CPU per create is each\n", *duration)
	fmt.Fprintf(&b, "process's utime+stime over the row divided by the row's creates. etcd bytes per record: a member's\n")
	fmt.Fprintf(&b, "DbSize after the rows, once the history is compacted and every member defragmented, divided by\n")
	fmt.Fprintf(&b, "every record created (each with its audit entry). Mean of %d round(s), the builds alternating.\n", *rounds)
	fmt.Fprintf(&b, "`make bench-cluster`.\n")
	load0 := loadavg()
	specs := strings.Split(*pidnodes, ",")
	all := make([][]*result, len(specs))
	for r := 0; r < *rounds; r++ {
		for i, spec := range specs {
			_, path, ok := strings.Cut(spec, "=")
			if !ok {
				path = spec
			}
			res, err := measure(*bin, path, counts, *duration)
			if err != nil {
				fail(fmt.Errorf("%s: %w", spec, err))
			}
			all[i] = append(all[i], res)
		}
	}
	fmt.Fprintf(&b, "Load average (1 min) of the host at the start %s, at the end %s: other work on the host shares its CPUs.\n", load0, loadavg())
	for i, spec := range specs {
		label, _, ok := strings.Cut(spec, "=")
		if !ok {
			label = spec
		}
		mean(all[i]).render(&b, label)
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clustercpu:", err)
	os.Exit(1)
}

// loadavg is the host's one-minute load average, "?" if unknown.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func uname() string {
	o, err := exec.Command("uname", "-sr").Output()
	if err != nil {
		return runtime.GOOS
	}
	return strings.TrimSpace(string(o))
}

// names are the measured processes, in the order of run.procs.
var names = []string{"etcd e1", "etcd e2", "etcd e3", "n1 (accepts)", "n2 (applies)"}

// row is one client count: creates, creates/s, p99 and CPU seconds per
// process (in a mean: CPU seconds per create, created 1).
type row struct {
	clients int
	created int
	rate    float64
	p99     float64
	cpu     []float64
	// n1's etcd transactions and local apply commits (n1 and n2) in the
	// row, per create; negative when the build has no such metric.
	txns, applies1, applies2 float64
}

type result struct {
	rows    []row
	records int
	dbSize  int64 // a member's, summed over rounds in a mean
	inUse   int64
}

// mean is the mean of rounds: per row, creates/s, p99 and CPU per create
// of each process; bytes per record over every round's records.
func mean(rounds []*result) *result {
	m := &result{}
	n := float64(len(rounds))
	for j, w := range rounds[0].rows {
		mw := row{clients: w.clients, created: 1, cpu: make([]float64, len(w.cpu))}
		for _, r := range rounds {
			rw := r.rows[j]
			mw.rate += rw.rate / n
			mw.p99 += rw.p99 / n
			mw.txns += rw.txns / n
			mw.applies1 += rw.applies1 / n
			mw.applies2 += rw.applies2 / n
			for i, c := range rw.cpu {
				mw.cpu[i] += c / float64(max(rw.created, 1)) / n
			}
		}
		m.rows = append(m.rows, mw)
	}
	for _, r := range rounds {
		m.records += r.records
		m.dbSize += r.dbSize
		m.inUse += r.inUse
	}
	return m
}

// per is 1/x with one decimal, "–" for a missing metric.
func per(x float64) string {
	if x <= 0 {
		return "–"
	}
	return strconv.FormatFloat(1/x, 'f', 1, 64)
}

func (r *result) render(b *strings.Builder, label string) {
	fmt.Fprintf(b, "\n## `%s`\n\n", label)
	fmt.Fprintf(b, "| clients | creates/s | p99 ms |")
	for _, n := range names {
		fmt.Fprintf(b, " %s µs/create |", n)
	}
	fmt.Fprintf(b, " cluster µs/create | creates per etcd txn | creates per apply commit n1, n2 |\n|---|---|---|")
	for range names {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	for _, w := range r.rows {
		fmt.Fprintf(b, "| %d | %.0f | %.1f |", w.clients, w.rate, w.p99)
		sum := 0.0
		for _, c := range w.cpu {
			us := c * 1e6 / float64(max(w.created, 1))
			sum += us
			fmt.Fprintf(b, " %.0f |", us)
		}
		fmt.Fprintf(b, " %.0f | %s | %s, %s |\n", sum, per(w.txns), per(w.applies1), per(w.applies2))
	}
	fmt.Fprintf(b, "\netcd after compaction and defragmentation: %d records, DbSize %d bytes (%d in use), **%.0f bytes per record** (over every round).\n",
		r.records, r.dbSize, r.inUse, float64(r.dbSize)/float64(max(r.records, 1)))
}

// run is one cluster: its processes and working directory.
type run struct {
	dir   string
	procs []*exec.Cmd
	eps   []string
}

func (c *run) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(c.dir)
}

// freePort returns a loopback port nothing listens on at the moment.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *run) start(logName string, name string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(c.dir, logName))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "PIDNODE_LINKCHECK_INTERVAL=0") // generated URLs are public names
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.procs = append(c.procs, cmd)
	return cmd, nil
}

func measure(bin, pidnode string, counts []int, d time.Duration) (res *result, err error) {
	dir, err := os.MkdirTemp("", "pidnode-clustercpu-")
	if err != nil {
		return nil, err
	}
	c := &run{dir: dir}
	defer c.stop()
	var peers, clientURLs []string
	for i := 1; i <= 3; i++ {
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		peers = append(peers, fmt.Sprintf("e%d=http://127.0.0.1:%d", i, pp))
		clientURLs = append(clientURLs, fmt.Sprintf("http://127.0.0.1:%d", cp))
	}
	for i := range 3 {
		peer := strings.SplitN(peers[i], "=", 2)[1]
		_, err := c.start(fmt.Sprintf("etcd%d.log", i+1), filepath.Join(bin, "etcd"),
			"--name", fmt.Sprintf("e%d", i+1), "--data-dir", filepath.Join(dir, fmt.Sprintf("etcd%d", i+1)),
			"--listen-client-urls", clientURLs[i], "--advertise-client-urls", clientURLs[i],
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-token", "bench",
			"--max-txn-ops", "4096", "--max-request-bytes", "8388608", "--log-level", "error")
		if err != nil {
			return nil, err
		}
	}
	c.eps = clientURLs
	cli, err := clientv3.New(clientv3.Config{Endpoints: clientURLs, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := waitEtcd(ctx, cli); err != nil {
		return nil, err
	}
	admins := map[string]string{}
	for _, n := range []string{"n1", "n2"} {
		ready := filepath.Join(dir, n+".ready")
		_, err := c.start(n+".log", pidnode, "serve", "--data", filepath.Join(dir, n),
			"--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--dns-addr", "127.0.0.1:0",
			"--hdl-addr", "127.0.0.1:0", "--ready-file", ready, "--admin-rate", "0",
			"--etcd-endpoints", strings.Join(clientURLs, ","), "--node-name", n)
		if err != nil {
			return nil, err
		}
		if admins[n], err = waitReady(ready, c.procs[len(c.procs)-1]); err != nil {
			return nil, fmt.Errorf("%s: %w (log %s)", n, err, filepath.Join(dir, n+".log"))
		}
	}
	res = &result{}
	for _, k := range counts {
		m0 := []float64{metric(admins["n1"], "pidnode_cluster_etcd_txns_total"),
			metric(admins["n1"], "pidnode_cluster_applies_total"), metric(admins["n2"], "pidnode_cluster_applies_total")}
		before, err := cpuOf(c.procs)
		if err != nil {
			return nil, err
		}
		o, err := exec.Command(filepath.Join(bin, "admincreate"), "-addr", admins["n1"],
			"-operator-key-file", filepath.Join(dir, "n1", "operator.key"),
			"-clients", strconv.Itoa(k), "-duration", d.String()).Output()
		if err != nil {
			return nil, fmt.Errorf("admincreate: %w", err)
		}
		after, err := cpuOf(c.procs)
		if err != nil {
			return nil, err
		}
		m1 := []float64{metric(admins["n1"], "pidnode_cluster_etcd_txns_total"),
			metric(admins["n1"], "pidnode_cluster_applies_total"), metric(admins["n2"], "pidnode_cluster_applies_total")}
		var lr struct {
			Created int                `json:"created"`
			Rate    float64            `json:"creates_per_s"`
			Latency map[string]float64 `json:"latency_ms"`
		}
		if err := json.Unmarshal(o, &lr); err != nil {
			return nil, fmt.Errorf("admincreate said %q: %w", o, err)
		}
		w := row{clients: k, created: lr.Created, rate: lr.Rate, p99: lr.Latency["p99"]}
		d := make([]float64, 3)
		for i := range d {
			if m0[i] >= 0 && m1[i] >= 0 {
				d[i] = (m1[i] - m0[i]) / float64(max(lr.Created, 1))
			} else {
				d[i] = -1
			}
		}
		w.txns, w.applies1, w.applies2 = d[0], d[1], d[2]
		for i := range before {
			w.cpu = append(w.cpu, after[i]-before[i])
		}
		res.rows = append(res.rows, w)
		res.records += lr.Created
		fmt.Fprintf(os.Stderr, "clustercpu: %s: %d clients: %d creates\n", pidnode, k, lr.Created)
	}
	g, err := cli.Get(ctx, "\x00", clientv3.WithCountOnly())
	if err != nil {
		return nil, err
	}
	if _, err := cli.Compact(ctx, g.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	for _, ep := range clientURLs {
		if _, err := cli.Defragment(ctx, ep); err != nil {
			return nil, fmt.Errorf("defragment %s: %w", ep, err)
		}
	}
	st, err := cli.Status(ctx, clientURLs[0])
	if err != nil {
		return nil, err
	}
	res.dbSize, res.inUse = st.DbSize, st.DbSizeInUse
	return res, nil
}

func waitEtcd(ctx context.Context, cli *clientv3.Client) error {
	for i := 0; ; i++ {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.Get(tctx, "\x00", clientv3.WithCountOnly())
		cancel()
		if err == nil {
			return nil
		}
		if i > 60 {
			return fmt.Errorf("etcd did not start: %w", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitReady waits for pidnode's ready file and returns the admin address.
func waitReady(name string, p *exec.Cmd) (string, error) {
	for range 600 {
		if f, err := os.Open(name); err == nil {
			s := bufio.NewScanner(f)
			for s.Scan() {
				if k, v, ok := strings.Cut(s.Text(), " "); ok && k == "admin" {
					f.Close()
					return strings.TrimSpace(v), nil
				}
			}
			f.Close()
		}
		if p.ProcessState != nil {
			return "", errors.New("exited")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", errors.New("not ready within a minute")
}

// metric reads a counter from the node's /metrics at admin; -1 if absent.
func metric(admin, name string) float64 {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// cpuOf returns each process's utime+stime in seconds.
func cpuOf(ps []*exec.Cmd) ([]float64, error) {
	hz := 100.0 // USER_HZ, which Linux fixes at 100 for /proc
	out := make([]float64, len(ps))
	for i, p := range ps {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
		if err != nil {
			return nil, err
		}
		// Fields after the command name, which may hold spaces: state is
		// field 3, utime 14, stime 15.
		j := strings.LastIndexByte(string(raw), ')')
		f := strings.Fields(string(raw[j+1:]))
		if len(f) < 13 {
			return nil, fmt.Errorf("short /proc/%d/stat", p.Process.Pid)
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		out[i] = (u + s) / hz
	}
	return out, nil
}
