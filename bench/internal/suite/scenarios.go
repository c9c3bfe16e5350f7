package suite

import "pidnode/bench/internal/report"

// Server is a process a scenario sends its load to.
type Server string

// The servers of the rounds.
const (
	Pidnode    Server = "pidnode"     // the node's HTTP resolver listener
	PidnodeHDL Server = "pidnode hdl" // the node's native-protocol listener
	NginxLFL   Server = "nginx lfl"   // nginx's like-for-like server block
	NginxMin   Server = "nginx min"   // nginx's `return 302 $target`
	MapLFL     Server = "map lfl"     // bench/cmd/baseline-http's like-for-like listener
	MapMin     Server = "map min"     // bench/cmd/baseline-http's Location-only listener
	NativeMap  Server = "native map"  // bench/cmd/baseline-hdl: pidnode's captured native replies
)

// ServerInfo says where a server comes from and how the chart names it.
type ServerInfo struct {
	// Source is the directory of the Go command that runs it, relative to
	// the module root; empty for nginx (Debian's).
	Source string
	// System is the chart's name for it (its colour).
	System string
}

// Servers describes every Server the tables name.
var Servers = map[Server]ServerInfo{
	Pidnode:    {Source: "cmd/pidnode", System: "pidnode"},
	PidnodeHDL: {Source: "cmd/pidnode", System: "pidnode"},
	NginxLFL:   {System: "nginx"},
	NginxMin:   {System: "nginx"},
	MapLFL:     {Source: "bench/cmd/baseline-http", System: "fasthttp map"},
	MapMin:     {Source: "bench/cmd/baseline-http", System: "fasthttp map"},
	NativeMap:  {Source: "bench/cmd/baseline-hdl", System: "native map"},
}

// Paths is a request stream: a file bench/cmd/gen writes into the dataset
// directory (or, for the tombstones, into the scratch directory).
type Paths string

// The request streams.
const (
	Zipf       Paths = "zipf.paths"      // Zipf s = 1.1 over N: the cache-hit stream
	Uniform    Paths = "uniform.paths"   // uniform over N: the cache-miss stream
	Tombstones Paths = "tombstone.paths" // 1,000 OBSOLETED records (gen -tombstones)
)

// Load is the shape of a scenario's capacity run.
type Load string

// The load shapes.
const (
	Wrk    Load = "wrk"         // closed loop, keep-alive, cycling over the stream (bench/wrk/stream.lua)
	HdlUDP Load = "hdlload udp" // closed loop, one request per datagram exchange (bench/cmd/hdlload)
	HdlTCP Load = "hdlload tcp" // closed loop, one request per connection (bench/cmd/hdlload)
)

// Group is a set of scenarios measured in interleaved rounds: every round
// runs each scenario of the group once, in table order, all servers up at
// once.
type Group string

// The round groups, in the order the suite runs them.
const (
	HitRounds    Group = "hit"    // cache hits: pidnode's routes, nginx, the fasthttp map
	NativeRounds Group = "native" // the native protocol: pidnode over UDP and TCP, the native map
	MissRounds   Group = "miss"   // cache misses, on a node started for them
)

// Groups lists the round groups in the order they run.
var Groups = []Group{HitRounds, NativeRounds, MissRounds}

// Scenario is one capacity run of a round group.
type Scenario struct {
	ID     string
	Group  Group
	Server Server
	Paths  Paths
	Load   Load
	// Prefix and Suffix are added to every path (wrk and the open loop);
	// Accept is every request's Accept header.
	Prefix, Suffix, Accept string
	// Spread: the scenario's rounds decide whether its group runs extra
	// rounds (Config.SpreadMax, Config.ExtraRounds).
	Spread bool
	// OpenLoop lists the open-loop latency runs after the rounds, each at
	// this percentage of the best round's rate.
	OpenLoop []int
	// Profile is the perf profile's label: a separate run after the rounds,
	// recorded on the server. Empty: not profiled.
	Profile string
	// Chart names the scenario in the chart; empty: not charted.
	Chart string
}

// NegAccept is the negotiated-redirect scenario's Accept header: the
// generator gives each record two representation variants among five media
// types.
const NegAccept = "text/turtle, application/ld+json;q=0.9, application/pdf;q=0.8"

// Scenarios is the suite's table of capacity runs. Within a group the
// rounds run the scenarios in this order, back to back.
var Scenarios = []Scenario{
	{ID: "redirect", Group: HitRounds, Server: Pidnode, Paths: Zipf, Load: Wrk, Spread: true, OpenLoop: []int{25, 50, 75}, Profile: "redirect, cache hit", Chart: "redirect (hit)"},
	{ID: "api", Group: HitRounds, Server: Pidnode, Paths: Zipf, Load: Wrk, Prefix: "/api/handles", OpenLoop: []int{50}, Profile: "/api/handles, cache hit", Chart: "/api/handles"},
	{ID: "noredirect", Group: HitRounds, Server: Pidnode, Paths: Zipf, Load: Wrk, Suffix: "?noredirect", OpenLoop: []int{50}, Profile: "?noredirect, cache hit", Chart: "?noredirect"},
	{ID: "negotiated", Group: HitRounds, Server: Pidnode, Paths: Zipf, Load: Wrk, Accept: NegAccept, Profile: "negotiated redirect"},
	{ID: "linkset", Group: HitRounds, Server: Pidnode, Paths: Zipf, Load: Wrk, Prefix: "/api/linksets"},
	{ID: "tombstone", Group: HitRounds, Server: Pidnode, Paths: Tombstones, Load: Wrk, Profile: "tombstone"},
	{ID: "nginx-lfl", Group: HitRounds, Server: NginxLFL, Paths: Zipf, Load: Wrk, Spread: true, OpenLoop: []int{50}, Profile: "nginx, like-for-like redirect", Chart: "redirect (hit)"},
	{ID: "nginx-min", Group: HitRounds, Server: NginxMin, Paths: Zipf, Load: Wrk, Chart: "redirect, minimal 302"},
	{ID: "map-lfl", Group: HitRounds, Server: MapLFL, Paths: Zipf, Load: Wrk, Spread: true, OpenLoop: []int{50}, Profile: "fasthttp map, like-for-like redirect", Chart: "redirect (hit)"},
	{ID: "map-min", Group: HitRounds, Server: MapMin, Paths: Zipf, Load: Wrk, Chart: "redirect, minimal 302"},
	{ID: "hdl-udp", Group: NativeRounds, Server: PidnodeHDL, Paths: Zipf, Load: HdlUDP, Chart: "native UDP"},
	{ID: "hdl-tcp", Group: NativeRounds, Server: PidnodeHDL, Paths: Zipf, Load: HdlTCP, Spread: true, Profile: "native TCP", Chart: "native TCP"},
	{ID: "native-map-tcp", Group: NativeRounds, Server: NativeMap, Paths: Zipf, Load: HdlTCP, Spread: true, Chart: "native TCP"},
	{ID: "miss", Group: MissRounds, Server: Pidnode, Paths: Uniform, Load: Wrk, Spread: true, OpenLoop: []int{50}, Profile: "redirect, cache miss", Chart: "redirect (miss)"},
}

// Comparison is a row that sets one scenario's best round against
// another's: pidnode against a baseline, or a page against the redirect.
type Comparison struct {
	Row, Figure string
	// Scenario and Baseline are scenario IDs.
	Scenario, Baseline string
	BaselineLabel      string
	// Target is the least ratio Scenario/Baseline that meets it; 0: a row for
	// reference, not judged.
	Target float64
	// LikeForLike names the server whose like-for-like check must have
	// passed for the ratio to be reported; empty: none needed.
	LikeForLike Server
	// Note is added to the row's notes.
	Note string
}

// Comparisons is the table of ratio rows, in report order.
var Comparisons = []Comparison{
	{Row: "hit_nginx", Figure: "redirect, cache hit, vs nginx map, like-for-like (pidnode's status, headers and body)", Scenario: "redirect", Baseline: "nginx-lfl", BaselineLabel: "nginx (1 worker)", Target: 0.95, LikeForLike: NginxLFL},
	{Row: "hit_fasthttp", Figure: "redirect, cache hit, vs bare fasthttp map, like-for-like", Scenario: "redirect", Baseline: "map-lfl", BaselineLabel: "fasthttp map", Target: 0.95, LikeForLike: MapLFL},
	{Row: "hit_nginx_min", Figure: "redirect, cache hit, vs nginx's plainest 302 (minimal, for reference)", Scenario: "redirect", Baseline: "nginx-min", BaselineLabel: "nginx minimal"},
	{Row: "hit_fasthttp_min", Figure: "redirect, cache hit, vs the fasthttp map's plainest 302 (minimal, for reference)", Scenario: "redirect", Baseline: "map-min", BaselineLabel: "fasthttp map minimal"},
	{Row: "api", Figure: "/api/handles JSON vs redirect", Scenario: "api", Baseline: "redirect", BaselineLabel: "pidnode redirect", Target: 0.9},
	{Row: "noredirect", Figure: "?noredirect HTML vs redirect", Scenario: "noredirect", Baseline: "redirect", BaselineLabel: "pidnode redirect", Target: 0.9},
	{Row: "negotiated", Figure: "negotiated redirect (Accept: " + NegAccept + ") vs redirect", Scenario: "negotiated", Baseline: "redirect", BaselineLabel: "pidnode redirect", Target: 0.9,
		Note: "4 of 5 generated records have a matching representation variant (303), the others answer with the landing redirect"},
	{Row: "linkset", Figure: "linkset (/api/linksets, application/linkset+json) vs redirect", Scenario: "linkset", Baseline: "redirect", BaselineLabel: "pidnode redirect", Target: 0.9},
	{Row: "tombstone", Figure: "tombstone (410 page of an OBSOLETED record) vs redirect", Scenario: "tombstone", Baseline: "redirect", BaselineLabel: "pidnode redirect", Target: 0.9,
		Note: "1,000 tombstones (gen -tombstones); every answer is a 410 by design, so wrk counts each one as bad"},
	{Row: "hdl_udp", Figure: "native Handle protocol over UDP (OC_RESOLUTION, one request per datagram exchange)", Scenario: "hdl-udp"},
	{Row: "hdl_tcp", Figure: "native Handle protocol over TCP vs a bare native map sending pidnode's reply bytes (one request per connection)", Scenario: "hdl-tcp", Baseline: "native-map-tcp", BaselineLabel: "native map", Target: 0.9, LikeForLike: NativeMap},
	{Row: "miss", Figure: "cache-miss redirect (uniform, cache = 1 % of N) vs cache hit", Scenario: "miss", Baseline: "redirect", BaselineLabel: "pidnode redirect (hit)", Target: 0.5},
}

// FixedTarget is a target of the report that is not a Comparison's.
type FixedTarget struct {
	Row, Figure, Unit string
	// Kind is report.Min, report.Max or report.RatioMin.
	Kind string
	// Value is the target; 0 for mem_budget, whose target is the budget the
	// node reports.
	Value         float64
	BaselineLabel string
}

// Targets lists the report's targets that are not a Comparison's. Every
// one of them, and every Comparison with a target, is a row of every
// report: "not measured", with the reason, when its scenario could not run.
var Targets = []FixedTarget{
	{Row: "import", Figure: importFigure, Unit: "records/s", Kind: report.Min, Value: 200000},
	{Row: "startup", Figure: "start-up to ready file", Unit: "s", Kind: report.Max, Value: 1},
	{Row: "hit_p99", Figure: "redirect p99 at 50 % of capacity (open loop)", Unit: "ms", Kind: report.Max, Value: 2},
	{Row: "mixed", Figure: "redirects while the admin API takes writes (16 writers)", Unit: "req/server-CPU-s", Kind: report.RatioMin, Value: 0.8, BaselineLabel: "pidnode redirect, no writes"},
	{Row: "admin_64", Figure: "admin creates, 64 client(s), fsync on", Unit: "creates/s", Kind: report.Min, Value: 5000},
	{Row: "mem_budget", Figure: "RssAnon growth over the base, uniform misses over redirect, /api/handles and ?noredirect (target: within --cache-bytes)", Unit: "MiB", Kind: report.Max},
	{Row: "dns", Figure: "DNS TXT queries vs bare miekg/dns map", Unit: "queries/server-CPU-s", Kind: report.RatioMin, Value: 1.3, BaselineLabel: "miekg/dns map"},
}

// targetOf is row id's target from Targets or Comparisons, nil when it has
// none (or, for mem_budget, when it comes from the run).
func targetOf(id string) *report.Target {
	for _, t := range Targets {
		if t.Row == id && t.Value > 0 {
			return &report.Target{Kind: t.Kind, Value: t.Value}
		}
	}
	for _, c := range Comparisons {
		if c.Row == id && c.Target > 0 {
			return &report.Target{Kind: report.RatioMin, Value: c.Target}
		}
	}
	return nil
}

// missingTargets returns a "not measured" row, with why, for every target
// of Targets and Comparisons that rows lack.
func missingTargets(rows []report.Row, why string) []report.Row {
	have := map[string]bool{}
	for _, r := range rows {
		have[r.ID] = true
	}
	var out []report.Row
	add := func(id, figure, unit, label string, t *report.Target) {
		if !have[id] {
			out = append(out, report.Row{ID: id, Figure: figure, Unit: unit, BaselineLabel: label, Target: t, Note: "not measured: " + why})
		}
	}
	for _, t := range Targets {
		add(t.Row, t.Figure, t.Unit, t.BaselineLabel, targetOf(t.Row))
	}
	for _, c := range Comparisons {
		if c.Target > 0 {
			unit := "req/server-CPU-s"
			if sc, _ := ScenarioByID(c.Scenario); sc.Load != Wrk {
				unit = "queries/server-CPU-s"
			}
			add(c.Row, c.Figure, unit, c.BaselineLabel, targetOf(c.Row))
		}
	}
	return out
}

// Share is one part of a profile the reasons name: a function's share of
// the samples with everything it calls, or the kernel's.
type Share struct {
	What string
	// Symbol is the function's exact symbol name in the profile (perf
	// matches it exactly; a renamed or inlined function would read 0 %:
	// TestShareSymbolsExist checks the pidnode binary has each one). Empty
	// with Kernel set: the kernel's share.
	Symbol string
	Kernel bool
}

// Breakdown is a reason under a missed target: the shares of one profile's
// main parts.
type Breakdown struct {
	// Rows are the report rows the reason belongs to.
	Rows []string
	// Profile is the profile's label (a Scenario's Profile, or one of the
	// suite's own: "import", "redirects while 16 clients create").
	Profile string
	Shares  []Share
	// PerRequest, a scenario ID: each share is also given in µs of that
	// scenario's server CPU per request (its best round).
	PerRequest string
}

// Profile labels of the profiles that are not a Scenario's.
const (
	ImportProfile = "import"
	MixedProfile  = "redirects while 16 clients create"
	AdminProfile  = "admin creates, 64 clients"
)

// Breakdowns is the table of profile shares the reasons report.
var Breakdowns = []Breakdown{
	{Rows: []string{"import"}, Profile: ImportProfile, Shares: []Share{
		{What: "the kernel", Kernel: true},
		{What: "decoding the JSON and encoding the records", Symbol: "pidnode/store.(*parseBatch).decode"},
		{What: "merging and building the records' pages", Symbol: "pidnode/store.writeRecordPages"},
		{What: "writing the pages into the page cache", Symbol: "pidnode/store.(*pageWriter).flusher"},
		{What: "bbolt's consistency check", Symbol: "go.etcd.io/bbolt.(*Tx).check"},
		{What: "page faults (fresh memory, the file's mapping)", Symbol: "asm_exc_page_fault"},
	}},
	{Rows: []string{"hit_nginx", "hit_fasthttp"}, Profile: "redirect, cache hit", PerRequest: "redirect", Shares: []Share{
		{What: "the kernel (system calls, loopback TCP)", Kernel: true},
		{What: "the handler", Symbol: "pidnode/resolver.(*Server).Handler"},
		{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
	}},
	{Rows: []string{"hit_p99", "hit_p99_nginx"}, Profile: "redirect, cache hit", Shares: []Share{
		{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
	}},
	{Rows: []string{"api"}, Profile: "/api/handles, cache hit", PerRequest: "api", Shares: pageShares},
	{Rows: []string{"noredirect"}, Profile: "?noredirect, cache hit", PerRequest: "noredirect", Shares: pageShares},
	{Rows: []string{"negotiated"}, Profile: "negotiated redirect", PerRequest: "negotiated", Shares: pageShares},
	{Rows: []string{"tombstone"}, Profile: "tombstone", PerRequest: "tombstone", Shares: pageShares},
	{Rows: []string{"admin_64"}, Profile: AdminProfile, Shares: []Share{
		{What: "the admin API's creates", Symbol: "pidnode/admin.(*snaaAPI).create"},
		{What: "bbolt's commits", Symbol: "go.etcd.io/bbolt.(*Tx).Commit"},
		{What: "fdatasync", Symbol: "syscall.Fdatasync"},
		{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
		{What: "the kernel", Kernel: true},
	}},
	{Rows: []string{"mixed"}, Profile: MixedProfile, Shares: []Share{
		{What: "the admin API's creates", Symbol: "pidnode/admin.(*snaaAPI).create"},
		{What: "bbolt's commits", Symbol: "go.etcd.io/bbolt.(*Tx).Commit"},
		{What: "fdatasync", Symbol: "syscall.Fdatasync"},
		{What: "the resolver's handler", Symbol: "pidnode/resolver.(*Server).Handler"},
		{What: "the kernel", Kernel: true},
	}},
	{Rows: []string{"hdl_tcp"}, Profile: "native TCP", PerRequest: "hdl-tcp", Shares: []Share{
		{What: "the kernel (accept, loopback TCP, close)", Kernel: true},
		{What: "serving the connection (read, reply, write)", Symbol: "pidnode/resolver/hdl.(*Server).serveConn"},
		{What: "building the reply", Symbol: "pidnode/resolver/hdl.(*Server).respond"},
		{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
	}},
	{Rows: []string{"miss"}, Profile: "redirect, cache miss", PerRequest: "miss", Shares: []Share{
		{What: "the kernel", Kernel: true},
		{What: "reading the record and its derived part (bbolt's read transaction, B+tree search, decoding)", Symbol: "pidnode/store.(*DB).GetDerived"},
		{What: "the Link lines and representation variants", Symbol: "pidnode/resolver.(*view).buildExt"},
		{What: "the cache entry and its redirect", Symbol: "pidnode/cache.(*Cache).build"},
		{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
		{What: "the kernel's sending of the bytes (tcp_sendmsg, with the loopback delivery and the peer's wake-up)", Symbol: "tcp_sendmsg"},
	}},
}

// pageShares are the parts of a page's or a variant's profile the reasons
// name: the same network path as the redirect, the handler that renders it.
var pageShares = []Share{
	{What: "the kernel (system calls, loopback TCP)", Kernel: true},
	{What: "the handler", Symbol: "pidnode/resolver.(*Server).Handler"},
	{What: "the collector", Symbol: "runtime.gcBgMarkWorker"},
}

// ScenarioByID returns the scenario with id, or false.
func ScenarioByID(id string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}
