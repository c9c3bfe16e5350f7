package suite

import (
	"strings"
	"testing"
	"time"
)

func round(perCPU, serverSecs float64) Result {
	return Result{PerCPU: perCPU, ServerSecs: serverSecs, Duration: 5}
}

func rounds(rs ...Result) *Rounds {
	var r Rounds
	for _, x := range rs {
		r.Add(x)
	}
	return &r
}

func TestRoundsBest(t *testing.T) {
	tests := []struct {
		name string
		in   []Result
		want float64
	}{
		{"best of three", []Result{round(80, 4), round(90, 4), round(85, 4)}, 90},
		{"first is best", []Result{round(95, 4), round(90, 4)}, 95},
		// A round with under a fifth of the run's CPU is mostly rounding:
		// it counts only while nothing better than it came.
		{"thin round loses to a full one", []Result{round(200, 0.5), round(90, 4)}, 90},
		{"full round beats a later thin one", []Result{round(90, 4), round(200, 0.5)}, 90},
		{"thin rounds only: the best of them", []Result{round(100, 0.5), round(150, 0.9)}, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := rounds(tt.in...).Best()
			if !ok || b.PerCPU != tt.want {
				t.Errorf("Best() = %v, %v, want %v", b.PerCPU, ok, tt.want)
			}
		})
	}
	if _, ok := (&Rounds{}).Best(); ok {
		t.Error("Best() of no rounds: ok")
	}
}

func TestRoundsSpreadAndList(t *testing.T) {
	r := rounds(round(90900, 4), round(72600, 4), round(72900, 4))
	if got := r.Spread(); got < 20.13 || got > 20.14 {
		t.Errorf("Spread() = %v, want (90.9k−72.6k)/90.9k = 20.13 %%", got)
	}
	if got, want := r.List(), "90.9k, 72.6k, 72.9k (spread 20 %)"; got != want {
		t.Errorf("List() = %q, want %q", got, want)
	}
	if got := rounds(round(5, 4)).Spread(); got != 0 {
		t.Errorf("Spread() of one round = %v, want 0", got)
	}
}

// TestRoundRule: ROUNDS rounds always; then up to EXTRA_ROUNDS more while
// a deciding scenario's rounds lie more than SPREAD_MAX % apart, compared
// unrounded.
func TestRoundRule(t *testing.T) {
	rule := RoundRule{Rounds: 3, Extra: 2, SpreadMax: 10}
	calm := rounds(round(100, 4), round(95, 4), round(97, 4))
	noisy := rounds(round(100, 4), round(89.6, 4), round(97, 4)) // 10.4 % apart
	tests := []struct {
		name     string
		ran      int
		deciding map[string]*Rounds
		want     bool
	}{
		{"first rounds", 0, map[string]*Rounds{"x": {}}, true},
		{"before ROUNDS", 2, map[string]*Rounds{"x": calm}, true},
		{"calm after ROUNDS", 3, map[string]*Rounds{"x": calm}, false},
		{"noisy after ROUNDS", 3, map[string]*Rounds{"x": calm, "y": noisy}, true},
		{"noisy, one extra left", 4, map[string]*Rounds{"y": noisy}, true},
		{"noisy, extras used up", 5, map[string]*Rounds{"y": noisy}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := rule.More(tt.ran, tt.deciding)
			if got != tt.want {
				t.Errorf("More(%d) = %v (%q), want %v", tt.ran, got, why, tt.want)
			}
			if got && tt.ran >= rule.Rounds && !strings.Contains(why, "y: rounds lie 10.4 % apart") {
				t.Errorf("More(%d) says %q, want the noisy scenario and its spread", tt.ran, why)
			}
		})
	}
	if got, _ := (RoundRule{Rounds: 2, Extra: 0, SpreadMax: 10}).More(2, map[string]*Rounds{"y": noisy}); got {
		t.Error("EXTRA_ROUNDS=0: an extra round ran")
	}
}

// TestDefaults: the rounds and durations a run takes when nothing is set.
func TestDefaults(t *testing.T) {
	c := New(Config{Root: "/r", ExtraRounds: DefaultExtraRounds})
	if c.Rounds != 3 || c.ExtraRounds != 2 || c.SpreadMax != 10 {
		t.Errorf("rounds %d, extra %d, spread %g; want 3, 2, 10", c.Rounds, c.ExtraRounds, c.SpreadMax)
	}
	if c.N != 1000000 || c.Dur != 10*time.Second || c.OLDur != 15*time.Second || c.NginxWait != 300*time.Second {
		t.Errorf("N %d, DUR %s, OL_DUR %s, NGINX_WAIT %s", c.N, c.Dur, c.OLDur, c.NginxWait)
	}
	if c.MemBytes != "64MiB" || c.MemDur != 20*time.Second || len(c.HitBudgets) != 3 {
		t.Errorf("MEM_BYTES %q, MEM_DUR %s, HIT_BUDGETS %v", c.MemBytes, c.MemDur, c.HitBudgets)
	}
	if c := New(Config{CacheBytes: "1GiB", Dur: 3 * time.Second}); c.MemBytes != "1GiB" || c.MemDur != 6*time.Second {
		t.Errorf("with CACHE_BYTES=1GiB DUR=3: MEM_BYTES %q, MEM_DUR %s; want 1GiB, 6s", c.MemBytes, c.MemDur)
	}
}

func TestParseWrk(t *testing.T) {
	out := `Running 5s test @ http://127.0.0.1:1
  1 threads and 64 connections
  Latency Distribution
     50%  600.00us
     99%    2.30ms
  421720 requests in 5.00s, 447.34MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 7
Requests/sec:  84341.20
`
	r := parseWrk(out)
	if r.Requests != 421720 || r.Rate != 84341.20 || r.P99 != 2.3 || r.Bad != 10 {
		t.Errorf("parseWrk = %+v, want 421720 requests, 84341.2/s, p99 2.3 ms, 10 bad", r)
	}
	if r := parseWrk("     99%    1.50s\n"); r.P99 != 1500 {
		t.Errorf("p99 of 1.50s = %v ms", r.P99)
	}
}

func TestParseChildren(t *testing.T) {
	out := "# Children      Self  Symbol\n" +
		"    94.43%     0.00%  [.] runtime.goexit.abi0                                         -      -            \n" +
		"    41.20%     0.15%  [k] tcp_sendmsg                                                 -      -            \n" +
		"    14.02%     2.10%  [.] pidnode/resolver.(*Server).Handler\n" +
		"     1.00%     1.00%  [.] pidnode/resolver.(*Server).Handler   -  -\n"
	m := parseChildren(out)
	for sym, want := range map[string]float64{"runtime.goexit.abi0": 94.43, "tcp_sendmsg": 41.20, "pidnode/resolver.(*Server).Handler": 14.02} {
		if m[sym] != want {
			t.Errorf("share of %s = %v, want %v (parsed %v)", sym, m[sym], want, m)
		}
	}
}
