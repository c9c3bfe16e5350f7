package main

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes read from text: plain bytes ("67108864") or a
// number with a binary (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB) unit;
// "auto" or empty is 0, which means "choose from the memory limit".
type ByteSize int64

// parseByteSize reads s as a ByteSize.
func parseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "auto") {
		return 0, nil
	}
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	mult := int64(0)
	switch strings.ToLower(unit) {
	case "", "b":
		mult = 1
	case "kib", "k":
		mult = 1 << 10
	case "mib", "m":
		mult = 1 << 20
	case "gib", "g":
		mult = 1 << 30
	case "tib", "t":
		mult = 1 << 40
	case "kb":
		mult = 1e3
	case "mb":
		mult = 1e6
	case "gb":
		mult = 1e9
	case "tb":
		mult = 1e12
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if mult == 0 || err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("want a size such as 512MiB, 2GiB or plain bytes, got %q", s)
	}
	return ByteSize(n * mult), nil
}

// UnmarshalTOML reads cache_bytes as a string ("512MiB") or an integer (bytes).
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("want a non-negative size, got %d", x)
		}
		*b = ByteSize(x)
		return nil
	case string:
		n, err := parseByteSize(x)
		*b = n
		return err
	}
	return fmt.Errorf("want a size such as \"512MiB\" or bytes, got %v", v)
}

// String writes b in the largest binary unit that divides it, "auto" for 0.
func (b ByteSize) String() string {
	if b == 0 {
		return "auto"
	}
	for _, u := range []struct {
		name string
		n    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// The default cache budget is a quarter of the memory the node may use (the
// container's limit, else the machine's memory), between 32 MiB and 4 GiB:
// the rest is for the node's base (listeners, connection buffers) and the
// page cache that the memory-mapped database reads through, which a large
// cache would otherwise crowd out.
const (
	minAutoCache = 32 << 20
	maxAutoCache = 4 << 30
)

// The budget (--cache-bytes) is what resolving costs the process's memory
// beyond its base: the cache's entries, the two tables that grow with the
// identifiers resolved (below), and the collector's room to work in, which
// a Go heap needs on top of what it keeps live. So the soft memory limit is
// the budget plus the base measured once the node is ready (baseMemory),
// and the entries get what the rest leaves (entryBytes).
//
// Why the room is inside the budget: with every byte of the budget given to
// live entries, the heap can only stay near budget + base by collecting
// continuously, and under uniform misses a small budget could then not be
// kept at all while the node served far fewer requests.
//
// gcRoomDiv: a quarter of the budget is the collector's room: with 64 MiB a
// collection after every 16 MiB allocated, with 1 GiB after every 256 MiB.
const gcRoomDiv = 4

// memBase is the provisional base, for the soft memory limit from start-up
// until the node is ready and its base is measured.
const memBase = 32 << 20

// entryBytes is the share of a budget the cache's entries may hold: the
// budget less the collector's room, the statistics table and its flush's
// buffer (twice its bound), and the DNS memo; at least a quarter of the
// budget (a budget too small for the tables' floors).
func entryBytes(budget int64) int64 {
	return max(budget-budget/gcRoomDiv-2*statsBytes(budget)-memoBytes(budget), budget/4)
}

// memoryLimit returns the memory the node may use and where that figure came
// from: the cgroup v2 memory.max or cgroup v1 memory.limit_in_bytes under
// root (the smaller, when both exist), else MemTotal of /proc/meminfo, which
// also caps a container limit larger than the machine.
func memoryLimit(root string) (int64, string, error) {
	limit, from := int64(0), ""
	if n, ok := readCgroupLimit(filepath.Join(root, "sys/fs/cgroup/memory.max")); ok {
		limit, from = n, "cgroup memory.max"
	}
	if n, ok := readCgroupLimit(filepath.Join(root, "sys/fs/cgroup/memory/memory.limit_in_bytes")); ok && (limit == 0 || n < limit) {
		limit, from = n, "cgroup memory.limit_in_bytes"
	}
	total, err := memTotal(filepath.Join(root, "proc/meminfo"))
	if err == nil && (limit == 0 || total < limit) {
		limit, from = total, "MemTotal"
	}
	if limit == 0 {
		return 0, "", fmt.Errorf("no cgroup memory limit and /proc/meminfo unreadable: %w", err)
	}
	return limit, from, nil
}

// readCgroupLimit reads a cgroup memory limit file; "max" (v2) and v1's
// near-2^63 "unlimited" are no limit.
func readCgroupLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}

func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, errors.New("no MemTotal line")
}

// cacheBudget returns the cache budget: cfg's, or the default from the memory
// limit found under root (minAutoCache if none is found), with where it came
// from for the startup log.
func cacheBudget(set ByteSize, root string) (int64, string) {
	if set > 0 {
		return int64(set), "cache_bytes"
	}
	limit, from, err := memoryLimit(root)
	if err != nil {
		return minAutoCache, "minimum (" + err.Error() + ")"
	}
	return min(max(limit/4, minAutoCache), maxAutoCache), "a quarter of " + from
}

// Besides the cache, two tables grow with the identifiers resolved, and each
// has a bound of its own derived from the cache budget:
//   - the resolution statistics table (cache.Counter): about 145 bytes an
//     identifier counted since the last flush, flushed early when half full
//     (stats.Service.Run), so a sixteenth of the budget, between 4 MiB (some
//     14,000 identifiers between flushes) and 64 MiB (some 230,000), keeps
//     it and the flush's own buffer (about 100 bytes an identifier) near a
//     tenth of the budget;
//   - the DNS front's memo of parsed DNS.* values (512 slots, a few hundred
//     bytes a typical set): a sixty-fourth of the budget, at least 1 MiB,
//     holds every slot of ordinary records and leaves large TXT sets out.
const (
	minStatsBytes = 4 << 20
	maxStatsBytes = 64 << 20
	minMemoBytes  = 1 << 20
)

// statsBytes is the bound of the resolution statistics table for a cache budget.
func statsBytes(budget int64) int64 { return min(max(budget/16, minStatsBytes), maxStatsBytes) }

// memoBytes is the bound of the DNS memo for a cache budget.
func memoBytes(budget int64) int64 { return max(budget/64, minMemoBytes) }

// softMemoryLimit is the Go runtime's soft memory limit for a cache budget
// and the node's base.
func softMemoryLimit(budget, base int64) int64 { return budget + base }

// baseMemory is the node's base, taken once the node is ready and its cache
// is empty, after a collection: its anonymous resident memory (RssAnon of
// /proc/self/status), which is what an operator sees of it; where that file
// is missing, what the Go runtime holds (everything mapped and not
// released: what the soft limit counts). The runtime's figure is the larger
// (it counts memory mapped but not yet touched), so with the Linux figure
// the limit keeps anonymous memory within the budget plus the base.
func baseMemory() int64 {
	runtime.GC()
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "RssAnon:" && f[2] == "kB" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
					return kb << 10
				}
			}
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return memBase
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// gcPercent is the Go collector's target (GOGC) for pidnode serve unless
// GOGC is set: a collection starts once the heap has grown to five times what
// the last one kept, or at the soft memory limit (setMemoryLimit), whichever
// comes first. The runtime's default, 100, collects every few megabytes of
// garbage on the write and miss paths, whose live heaps are small, which
// makes creates and cache misses markedly dearer (make bench compares
// them). Hits allocate nothing, so it does not change them; the memory it
// uses is the budget's (the soft limit still bounds the heap), and an
// operator who wants the footprint smaller sets GOGC or a smaller
// --cache-bytes.
const gcPercent = 400

// setGCPercent sets the collector's target to gcPercent unless GOGC is set
// (the operator's figure then stands).
func setGCPercent(logger *slog.Logger) {
	if env := os.Getenv("GOGC"); env != "" {
		logger.Info("collector", "gogc", env, "from", "GOGC")
		return
	}
	debug.SetGCPercent(gcPercent)
	logger.Info("collector", "gogc", gcPercent)
}

// setMemoryLimit sets the Go runtime's soft memory limit from the cache
// budget and base (softMemoryLimit), so that the collector's headroom does
// not double the footprint, unless GOMEMLIMIT is set: the operator's figure
// then stands. It is set at start-up with the provisional memBase, and again
// once the node is ready with the base measured then (baseMemory).
func setMemoryLimit(logger *slog.Logger, budget, base int64, from string) {
	if env := os.Getenv("GOMEMLIMIT"); env != "" {
		logger.Info("cache budget", "bytes", budget, "from", from, "entries_bytes", entryBytes(budget), "gomemlimit", env)
		return
	}
	limit := softMemoryLimit(budget, base)
	debug.SetMemoryLimit(limit)
	logger.Info("cache budget", "bytes", budget, "from", from, "entries_bytes", entryBytes(budget), "base", base, "soft_memory_limit", limit)
}

// gcPercentNow is the collector's current target, from runtime/metrics
// (reading it through debug.SetGCPercent would change it for a moment).
func gcPercentNow() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64())
}
