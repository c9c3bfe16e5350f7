package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestParseByteSize(t *testing.T) {
	good := []struct {
		in   string
		want ByteSize
	}{
		{"512MiB", 512 << 20}, {"2GiB", 2 << 30}, {"67108864", 64 << 20}, {"64 MiB", 64 << 20},
		{"1kb", 1000}, {"3G", 3 << 30}, {"auto", 0}, {"", 0}, {"10B", 10},
	}
	for _, c := range good {
		got, err := parseByteSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"lots", "-1", "12XB", "1.5GiB", "MiB", "99999999999TiB"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q): no error", in)
		}
	}
	for _, c := range []struct {
		in   ByteSize
		want string
	}{{0, "auto"}, {64 << 20, "64MiB"}, {1500, "1500"}, {3 << 30, "3GiB"}} {
		if got := c.in.String(); got != c.want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(c.in), got, c.want)
		}
	}
}

// TestCacheBytesSources: cache_bytes from the file as text or bytes, the
// environment, the flag; cache_entries 0 is no cap; bad sizes are refused.
func TestCacheBytesSources(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.toml")
	num := filepath.Join(dir, "num.toml")
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(text, []byte("cache_bytes = \"512MiB\"\ncache_entries = 0\n"), 0o600)
	os.WriteFile(num, []byte("cache_bytes = 1048576\n"), 0o600)
	os.WriteFile(bad, []byte("cache_bytes = \"much\"\n"), 0o600)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want ByteSize
	}{
		{"default", nil, nil, 0},
		{"file text", []string{"--config", text}, nil, 512 << 20},
		{"file bytes", []string{"--config", num}, nil, 1 << 20},
		{"env beats file", []string{"--config", text}, map[string]string{"PIDNODE_CACHE_BYTES": "2GiB"}, 2 << 30},
		{"flag beats env", []string{"--cache-bytes", "64MiB"}, map[string]string{"PIDNODE_CACHE_BYTES": "2GiB"}, 64 << 20},
	}
	for _, c := range cases {
		cfg, _, err := loadConfig("serve", c.args, envFrom(c.env), &bytes.Buffer{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.CacheBytes != c.want || cfg.CacheEntries != 0 {
			t.Errorf("%s: cache bytes %d, entries %d; want %d, 0", c.name, cfg.CacheBytes, cfg.CacheEntries, c.want)
		}
	}
	for _, args := range [][]string{{"--config", bad}, {"--cache-bytes", "-5MiB"}, {"--cache-entries", "-1"}} {
		if _, _, err := loadConfig("serve", args, envFrom(nil), &bytes.Buffer{}, nil); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, _, err := loadConfig("serve", nil, envFrom(map[string]string{"PIDNODE_CACHE_BYTES": "x"}), &bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "PIDNODE_CACHE_BYTES") {
		t.Errorf("bad PIDNODE_CACHE_BYTES: error %v", err)
	}
}

// TestMemoryLimit reads the limit from cgroup v2, cgroup v1 and /proc/meminfo
// under a fake root, and derives the default budget and soft memory limit.
func TestMemoryLimit(t *testing.T) {
	root := func(files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(body), 0o644)
		}
		return dir
	}
	meminfo := "MemTotal:       33554432 kB\nMemFree:         1000 kB\n"
	cases := []struct {
		name   string
		files  map[string]string
		limit  int64
		from   string
		budget int64
	}{
		{"cgroup v2", map[string]string{"sys/fs/cgroup/memory.max": "1073741824\n", "proc/meminfo": meminfo}, 1 << 30, "cgroup memory.max", 256 << 20},
		{"cgroup v2 unlimited", map[string]string{"sys/fs/cgroup/memory.max": "max\n", "proc/meminfo": meminfo}, 32 << 30, "MemTotal", 4 << 30},
		{"cgroup v1", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n", "proc/meminfo": meminfo}, 512 << 20, "cgroup memory.limit_in_bytes", 128 << 20},
		{"cgroup v1 unlimited", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n", "proc/meminfo": meminfo}, 32 << 30, "MemTotal", 4 << 30},
		{"container above the machine", map[string]string{"sys/fs/cgroup/memory.max": "999999999999\n", "proc/meminfo": meminfo}, 32 << 30, "MemTotal", 4 << 30},
		{"small container", map[string]string{"sys/fs/cgroup/memory.max": "67108864\n"}, 64 << 20, "cgroup memory.max", minAutoCache},
	}
	for _, c := range cases {
		r := root(c.files)
		limit, from, err := memoryLimit(r)
		if err != nil || limit != c.limit || from != c.from {
			t.Errorf("%s: memoryLimit = %d, %q, %v; want %d, %q", c.name, limit, from, err, c.limit, c.from)
		}
		if got, _ := cacheBudget(0, r); got != c.budget {
			t.Errorf("%s: default budget %d, want %d", c.name, got, c.budget)
		}
	}
	if _, _, err := memoryLimit(root(nil)); err == nil {
		t.Error("no limit files: no error")
	}
	if got, _ := cacheBudget(0, root(nil)); got != minAutoCache {
		t.Errorf("budget without any limit = %d, want the minimum %d", got, minAutoCache)
	}
	if got, from := cacheBudget(64<<20, root(nil)); got != 64<<20 || from != "cache_bytes" {
		t.Errorf("set budget = %d from %q", got, from)
	}
	if got := entryBytes(64 << 20); got != 64<<20-16<<20-2*4<<20-1<<20 {
		t.Errorf("entryBytes(64MiB) = %d, want 39MiB", got)
	}
	if got := entryBytes(8 << 20); got != 2<<20 {
		t.Errorf("entryBytes(8MiB) = %d, want the floor of a quarter, 2MiB", got)
	}
	if got := softMemoryLimit(64<<20, 7<<20); got != 71<<20 {
		t.Errorf("softMemoryLimit(64MiB, 7MiB) = %d", got)
	}
}

// TestCacheMetrics: a node started with --cache-bytes reports its budget, the
// bytes charged once something is cached, evictions by a fixed set of causes,
// the statistics table's bound derived from the budget, and the soft memory
// limit it set from the budget.
func TestCacheMetrics(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo", "--cache-bytes", "8MiB")
	defer stopTestNode(t, cancel, done)
	get(t, "http://"+n.addr("resolver")+"/"+n.demo.Handles[0])
	_, body := get(t, "http://"+n.addr("admin")+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("/metrics lacks %s", name)
		}
		return f.GetMetric()[0].GetGauge().GetValue()
	}
	if got := gauge("pidnode_cache_budget_bytes"); got != 8<<20 {
		t.Errorf("pidnode_cache_budget_bytes = %v, want 8MiB", got)
	}
	if got := gauge("pidnode_cache_entries_limit_bytes"); got != float64(entryBytes(8<<20)) {
		t.Errorf("pidnode_cache_entries_limit_bytes = %v, want %d", got, entryBytes(8<<20))
	}
	if got := gauge("pidnode_cache_bytes"); got <= 0 || got > float64(entryBytes(8<<20)) {
		t.Errorf("pidnode_cache_bytes = %v after a resolution, want within (0, %d]", got, entryBytes(8<<20))
	}
	if gauge("pidnode_cache_entries") < 1 {
		t.Error("pidnode_cache_entries < 1 after a resolution")
	}
	if got := gauge("pidnode_stats_table_limit_bytes"); got != minStatsBytes {
		t.Errorf("pidnode_stats_table_limit_bytes = %v with an 8MiB budget, want the floor %d", got, minStatsBytes)
	}
	if got := gauge("pidnode_stats_table_bytes"); got < 0 || got > minStatsBytes {
		t.Errorf("pidnode_stats_table_bytes = %v, want within [0, %d]", got, minStatsBytes)
	}
	// The budget plus the base measured at ready (here the whole test
	// process's), which replaced the provisional one.
	if lim := gauge("pidnode_go_memory_limit_bytes"); os.Getenv("GOMEMLIMIT") == "" && (lim <= 8<<20 || lim == 8<<20+memBase) {
		t.Errorf("pidnode_go_memory_limit_bytes = %v, want 8MiB plus the measured base", lim)
	}
	if got := gauge("pidnode_go_gc_percent"); os.Getenv("GOGC") == "" && got != gcPercent {
		t.Errorf("pidnode_go_gc_percent = %v, want %d", got, gcPercent)
	}
	var causes []string
	for _, m := range fams["pidnode_cache_evictions_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			causes = append(causes, l.GetName()+"="+l.GetValue())
		}
	}
	if got := strings.Join(causes, " "); got != "cause=bytes cause=entries cause=invalidation cause=expiry" {
		t.Errorf("eviction causes: %s", got)
	}
}
