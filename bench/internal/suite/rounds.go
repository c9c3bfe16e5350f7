package suite

import (
	"fmt"
	"slices"
	"strings"
)

// Result is what one capacity run measured.
type Result struct {
	// Requests answered (wrk's count; hdlload's successful resolutions).
	Requests float64
	// Rate is requests per second of wall time.
	Rate float64
	// PerCPU is requests per server CPU-second.
	PerCPU float64
	// ServerSecs is the server's CPU seconds over the run, UserSecs and
	// SysSecs its parts.
	ServerSecs, UserSecs, SysSecs float64
	// MajFaults and MinFaults are the server's page faults over the run.
	MajFaults, MinFaults float64
	// P99 in ms (closed loop).
	P99 float64
	// Bad counts non-2xx/3xx answers and socket errors (wrk) or errors
	// (hdlload).
	Bad     float64
	Command string
	// Duration of the run in seconds.
	Duration float64
}

// US is the server's CPU per request in µs, all of it.
func (r Result) US() float64 { return perReq(r.ServerSecs*1e6, r.Requests) }

// USR is the server's CPU per request in user space, µs.
func (r Result) USR() float64 { return perReq(r.UserSecs*1e6, r.Requests) }

// SYS is the server's CPU per request in the kernel, µs.
func (r Result) SYS() float64 { return perReq(r.SysSecs*1e6, r.Requests) }

// Maj is the major page faults (disk reads) per request.
func (r Result) Maj() float64 { return perReq(r.MajFaults, r.Requests) }

// Min is the minor page faults per request.
func (r Result) Min() float64 { return perReq(r.MinFaults, r.Requests) }

func perReq(v, n float64) float64 {
	if n <= 0 {
		return 0
	}
	return v / n
}

// thinShare: a run in which the server got less than this share of the
// run's wall time (the machine stalled: a handful of clock ticks, so requests
// per CPU-second are mostly rounding) counts only while no run did better.
const thinShare = 0.2

// Rounds holds one scenario's rounds and its best.
type Rounds struct {
	All  []Result
	best int // index into All; -1 while empty
	thin bool
}

// thin reports whether r had too little server CPU to count on its own.
func thin(r Result) bool { return r.ServerSecs < thinShare*r.Duration }

// Add records a round. Interference from other work only ever slows a run
// down, so the best of several interleaved rounds (most requests per server
// CPU-second) is the least disturbed one; a thin round counts only while no
// round did better.
func (rs *Rounds) Add(r Result) {
	rs.All = append(rs.All, r)
	i := len(rs.All) - 1
	if i == 0 {
		rs.best, rs.thin = 0, thin(r)
		return
	}
	b := rs.All[rs.best]
	switch t := thin(r); {
	case !t && (rs.thin || r.PerCPU > b.PerCPU):
		rs.best, rs.thin = i, false
	case t && rs.thin && r.PerCPU > b.PerCPU:
		rs.best = i
	}
}

// Best returns the best round, false when none ran.
func (rs *Rounds) Best() (Result, bool) {
	if rs == nil || len(rs.All) == 0 {
		return Result{}, false
	}
	return rs.All[rs.best], true
}

// Spread is how far apart the rounds lie: (best − worst) / best of their
// requests per server CPU-second, in %; 0 for fewer than two rounds.
func (rs *Rounds) Spread() float64 {
	if rs == nil || len(rs.All) < 2 {
		return 0
	}
	lo, hi := rs.All[0].PerCPU, rs.All[0].PerCPU
	for _, r := range rs.All[1:] {
		lo, hi = min(lo, r.PerCPU), max(hi, r.PerCPU)
	}
	if hi <= 0 {
		return 0
	}
	return 100 * (hi - lo) / hi
}

// List is the rounds in order, in thousands of requests per server
// CPU-second, with their spread: "90.9k, 72.6k, 72.9k (spread 20 %)".
func (rs *Rounds) List() string {
	if rs == nil || len(rs.All) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, r := range rs.All {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.1fk", r.PerCPU/1000)
	}
	fmt.Fprintf(&b, " (spread %.0f %%)", rs.Spread())
	return b.String()
}

// RoundRule is when a round group stops: after Rounds rounds, unless the
// rounds of a scenario that decides the spread lie more than SpreadMax %
// apart (the machine was disturbed during some of them); then up to Extra
// more, so that each best-of has more chances of an undisturbed round.
type RoundRule struct {
	Rounds    int
	Extra     int
	SpreadMax float64
}

// More reports whether a group that has run ran rounds should run another,
// given the rounds of the scenarios that decide its spread, and if so why
// (empty for the first Rounds).
func (rr RoundRule) More(ran int, deciding map[string]*Rounds) (bool, string) {
	if ran < rr.Rounds {
		return true, ""
	}
	if ran >= rr.Rounds+rr.Extra {
		return false, ""
	}
	for _, id := range sortedKeys(deciding) {
		// Compared unrounded: rounds 10.4 % apart are more than 10 % apart.
		if s := deciding[id].Spread(); s > rr.SpreadMax {
			return true, fmt.Sprintf("%s: rounds lie %.1f %% apart, more than %g %%: round %d", id, s, rr.SpreadMax, ran+1)
		}
	}
	return false, ""
}

// sortedKeys returns m's keys in order, so that the log names the same
// scenario first every time.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
