package suite

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"pidnode/bench/internal/report"
)

// root is the module root, two directories up from this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s", r)
	}
	return r
}

// TestScenarioTable checks the tables are well-formed: unique IDs, every
// server, paths file, load and group known, every scenario's server has a
// source in the tree, every comparison and breakdown names scenarios and
// profiles that exist, and every group has a scenario that decides its
// extra rounds.
func TestScenarioTable(t *testing.T) {
	r := root(t)
	ids := map[string]Scenario{}
	profiles := map[string]bool{ImportProfile: true, MixedProfile: true, AdminProfile: true}
	deciders := map[Group]int{}
	for _, sc := range Scenarios {
		if sc.ID == "" {
			t.Errorf("scenario %+v has no ID", sc)
		}
		if _, dup := ids[sc.ID]; dup {
			t.Errorf("scenario ID %q twice", sc.ID)
		}
		ids[sc.ID] = sc
		info, ok := Servers[sc.Server]
		if !ok {
			t.Errorf("%s: server %q is not in Servers", sc.ID, sc.Server)
		}
		if info.Source != "" {
			if _, err := os.Stat(filepath.Join(r, info.Source)); err != nil {
				t.Errorf("%s: server %q: its source %s is not in the tree", sc.ID, sc.Server, info.Source)
			}
		}
		if !slices.Contains([]Paths{Zipf, Uniform, Tombstones}, sc.Paths) {
			t.Errorf("%s: paths %q unknown", sc.ID, sc.Paths)
		}
		if !slices.Contains([]Load{Wrk, HdlUDP, HdlTCP}, sc.Load) {
			t.Errorf("%s: load %q unknown", sc.ID, sc.Load)
		}
		if sc.Load != Wrk && (sc.Prefix != "" || sc.Suffix != "" || sc.Accept != "" || len(sc.OpenLoop) > 0) {
			t.Errorf("%s: the native load takes no prefix, suffix, Accept or open-loop runs", sc.ID)
		}
		if !slices.Contains(Groups, sc.Group) {
			t.Errorf("%s: group %q is not in Groups", sc.ID, sc.Group)
		}
		for _, p := range sc.OpenLoop {
			if p <= 0 || p >= 100 {
				t.Errorf("%s: open-loop run at %d %% of capacity", sc.ID, p)
			}
		}
		if sc.Profile != "" {
			if profiles[sc.Profile] {
				t.Errorf("%s: profile label %q twice", sc.ID, sc.Profile)
			}
			profiles[sc.Profile] = true
		}
		if sc.Spread {
			deciders[sc.Group]++
		}
	}
	for _, g := range Groups {
		if deciders[g] == 0 {
			t.Errorf("group %s: no scenario decides its extra rounds (Spread)", g)
		}
	}
	// The open-loop 50 % run of the redirect is what the p99 rows judge.
	if sc := ids["redirect"]; !slices.Contains(sc.OpenLoop, 50) || !slices.Contains(sc.OpenLoop, 25) {
		t.Errorf("redirect: open-loop runs %v, want 25 and 50 among them", sc.OpenLoop)
	}
	rows := map[string]bool{}
	for _, c := range Comparisons {
		if rows[c.Row] {
			t.Errorf("comparison row %q twice", c.Row)
		}
		rows[c.Row] = true
		sc, ok := ids[c.Scenario]
		if !ok {
			t.Errorf("%s: scenario %q not in Scenarios", c.Row, c.Scenario)
		}
		if c.Baseline != "" {
			b, ok := ids[c.Baseline]
			if !ok {
				t.Errorf("%s: baseline %q not in Scenarios", c.Row, c.Baseline)
			} else if b.Group != sc.Group && b.ID != "redirect" {
				// The miss rounds divide by the hit rounds' redirect; every
				// other ratio is of two scenarios of the same rounds.
				t.Errorf("%s: %s and %s are in different round groups", c.Row, c.Scenario, c.Baseline)
			}
		}
		if c.Target < 0 || c.Target > 2 || (c.Target > 0 && c.Baseline == "") {
			t.Errorf("%s: target %g with baseline %q", c.Row, c.Target, c.Baseline)
		}
		if c.LikeForLike != "" {
			if b := ids[c.Baseline]; b.Server != c.LikeForLike {
				t.Errorf("%s: like-for-like check of %q, but the baseline runs on %q", c.Row, c.LikeForLike, b.Server)
			}
		}
	}
	for _, tg := range Targets {
		if rows[tg.Row] {
			t.Errorf("target row %q twice (Targets or Comparisons)", tg.Row)
		}
		rows[tg.Row] = true
		if !slices.Contains([]string{report.Min, report.Max, report.RatioMin}, tg.Kind) || tg.Value < 0 || tg.Figure == "" || tg.Unit == "" {
			t.Errorf("target %+v: want a kind, a figure, a unit and a value ≥ 0", tg)
		}
		if tg.Kind == report.RatioMin && tg.BaselineLabel == "" {
			t.Errorf("target %q: a ratio names its baseline", tg.Row)
		}
	}
	// The native TCP baseline is compared like for like.
	if !rows["hdl_tcp"] {
		t.Error("no hdl_tcp row: pidnode's native TCP against the native map")
	}
	for _, b := range Breakdowns {
		if !profiles[b.Profile] {
			t.Errorf("breakdown of %v: profile %q is taken by no scenario", b.Rows, b.Profile)
		}
		if b.PerRequest != "" {
			if _, ok := ids[b.PerRequest]; !ok {
				t.Errorf("breakdown %q: PerRequest %q not in Scenarios", b.Profile, b.PerRequest)
			}
		}
		for _, sh := range b.Shares {
			if (sh.Symbol == "") != sh.Kernel || sh.What == "" {
				t.Errorf("breakdown %q: share %+v wants a description and either a symbol or Kernel", b.Profile, sh)
			}
		}
	}
}

// TestScenarioPathsFiles runs bench/cmd/gen at a small size and checks it
// writes every request stream the scenarios read.
func TestScenarioPathsFiles(t *testing.T) {
	dir := t.TempDir()
	gen := exec.Command("go", "run", "./bench/cmd/gen", "-n", "200", "-requests", "200", "-out", filepath.Join(dir, "data"))
	gen.Dir = root(t)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	tomb := exec.Command("go", "run", "./bench/cmd/gen", "-tombstones", "10", "-ns", "TMB", "-requests", "20", "-out", filepath.Join(dir, "tomb"))
	tomb.Dir = root(t)
	if out, err := tomb.CombinedOutput(); err != nil {
		t.Fatalf("gen -tombstones: %v\n%s", err, out)
	}
	s := &Suite{work: dir, data: filepath.Join(dir, "data")}
	for _, sc := range Scenarios {
		if st, err := os.Stat(s.pathsFile(sc.Paths)); err != nil || st.Size() == 0 {
			t.Errorf("%s: request stream %s not written by gen (%v)", sc.ID, s.pathsFile(sc.Paths), err)
		}
	}
	for _, f := range []string{"records.jsonl", "meta.json", "nginx-map.conf", "baseline-map.tsv"} {
		if _, err := os.Stat(filepath.Join(dir, "data", f)); err != nil {
			t.Errorf("gen did not write %s, which the suite reads: %v", f, err)
		}
	}
}

// TestShareSymbolsExist builds pidnode and checks that every Go function
// whose profile share the reasons report (Breakdowns) is a function of the
// binary. A share is looked up by exact name and reads 0 % for a name the
// profile does not hold, so a renamed or inlined-away function would
// otherwise turn a reason into a silent 0 %. Kernel symbols (no '.' in the
// name) are left out: they belong to the machine's kernel.
func TestShareSymbolsExist(t *testing.T) {
	want := map[string]string{} // symbol → the profile naming it
	for _, b := range Breakdowns {
		for _, sh := range b.Shares {
			if sh.Symbol != "" && slices.Contains([]byte(sh.Symbol), '.') {
				want[sh.Symbol] = b.Profile
			}
		}
	}
	for _, sym := range []string{"pidnode/resolver.(*Server).Handler", "pidnode/store.(*DB).GetDerived", "go.etcd.io/bbolt.(*Tx).Commit"} {
		if _, ok := want[sym]; !ok {
			t.Fatalf("Breakdowns no longer name %s (found %d Go symbols)", sym, len(want))
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
	for sym, prof := range want {
		if !have[sym] {
			t.Errorf("profile %q reports the share of %s, which is not a function of the pidnode binary (renamed, or inlined everywhere): its share would read 0 %%", prof, sym)
		}
	}
}

// TestMissingTargets: every target is a row of every report; one whose
// scenario did not run reads "not measured" with the reason, and a row the
// run did write is not added again.
func TestMissingTargets(t *testing.T) {
	got := missingTargets([]report.Row{{ID: "import"}, {ID: "hit_nginx"}}, "cmd/pidnode does not build")
	ids := map[string]report.Row{}
	for _, r := range got {
		ids[r.ID] = r
	}
	if _, dup := ids["import"]; dup {
		t.Error("import was written by the run and added again")
	}
	if _, dup := ids["hit_nginx"]; dup {
		t.Error("hit_nginx was written by the run and added again")
	}
	for _, id := range []string{"startup", "hit_p99", "mixed", "admin_64", "dns", "hit_fasthttp", "hdl_tcp", "miss", "api"} {
		r, ok := ids[id]
		if !ok {
			t.Errorf("no row for the target of %s", id)
			continue
		}
		if r.Target == nil || r.Value != nil || r.Note != "not measured: cmd/pidnode does not build" {
			t.Errorf("%s: target %v, value %v, note %q", id, r.Target, r.Value, r.Note)
		}
	}
	if r := ids["mem_budget"]; r.Target != nil || r.Note == "" {
		t.Errorf("mem_budget (its target is the run's budget): %+v", r)
	}
	if _, ref := ids["hit_nginx_min"]; ref {
		t.Error("a reference row without a target was added")
	}
}
