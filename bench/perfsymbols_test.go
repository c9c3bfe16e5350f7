// Package bench holds the benchmark suite (run.sh and its tools under cmd/);
// this test keeps run.sh's profile shares honest.
package bench

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shareCall matches the symbol argument of run.sh's perf_share and share_us
// calls: `perf_share LABEL SYMBOL`, `share_us LABEL SYMBOL US`, the label
// quoted or a bare word, the symbol in single quotes or bare.
var shareCall = regexp.MustCompile(`\b(?:perf_share|share_us) (?:"[^"]*"|[^\s"']+) ('[^']+'|[^\s)"']+)`)

// TestPerfShareSymbolsExist builds pidnode and checks that every Go function
// whose profile share bench/run.sh reports (the "Measured in this run"
// reasons) is a symbol of the binary. perf_share matches symbols by exact
// name and reads 0 % for a name the profile does not hold, so a renamed or
// inlined-away function would otherwise turn a reason into a silent 0 %.
// Kernel symbols (no '.' in the name) are left out: they belong to the
// machine's kernel, not to this tree.
func TestPerfShareSymbolsExist(t *testing.T) {
	script, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{} // symbol → first line
	for i, line := range strings.Split(string(script), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // the helpers' usage comments
		}
		for _, m := range shareCall.FindAllStringSubmatch(line, -1) {
			sym := strings.Trim(m[1], "'")
			if strings.HasPrefix(sym, "$") || !strings.Contains(sym, ".") {
				continue // the helpers' own parameters; kernel symbols
			}
			if _, ok := want[sym]; !ok {
				want[sym] = i + 1
			}
		}
	}
	// The pattern must keep finding the calls: run.sh names at least the
	// handler, the store read and bbolt's commit.
	for _, sym := range []string{"pidnode/resolver.(*Server).Handler", "pidnode/store.(*DB).Get", "go.etcd.io/bbolt.(*Tx).Commit"} {
		if _, ok := want[sym]; !ok {
			t.Fatalf("no perf_share/share_us call of %s found in run.sh: has the call's form changed? (found %d symbols)", sym, len(want))
		}
	}

	bin := filepath.Join(t.TempDir(), "pidnode")
	build := exec.Command("go", "build", "-o", bin, "pidnode/cmd/pidnode")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF binary here (%v): the profiles are Linux perf's", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(syms))
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			have[s.Name] = true
		}
	}
	for sym, line := range want {
		if !have[sym] {
			t.Errorf("run.sh:%d reports the profile share of %s, which is not a function of the pidnode binary (renamed, or inlined everywhere): its share would read 0 %%", line, sym)
		}
	}
}
