package resolver

import (
	"bytes"
	"math/bits"
	"net/netip"

	"pidnode/internal/ascii"
)

// Location selection (docs/handle-protocol.md §2.1): the chooseby methods
// narrow a set of locations in order, each keeping the previous set when it
// would leave none; the first location left is chosen. Sets are 64-bit masks
// over extras.locs (handlev.MaxLocations), so selecting allocates nothing.

// selectIn holds what a request brings to the selection.
type selectIn struct {
	// locatt are the ?locatt=name[:value] filters, in order.
	locatt [][]byte
	// ip is the client's address and geo the country look-up
	// (Config.Country); geo is called at most once, and only when the
	// country method runs over a set where some location has a country.
	ip  netip.Addr
	geo func(netip.Addr) ([2]byte, bool)
	// rnd returns a uniformly random 64-bit number, for the weighted method.
	rnd func() uint64
}

// choose returns the index in x.locs of the location to redirect to, -1
// when the record has no location to select by default (the legacy target
// applies).
func (x *extras) choose(in *selectIn) int {
	set := x.choosable
	if set == 0 {
		return -1
	}
	for _, m := range x.chooseBy[:x.nChoose] {
		if set&(set-1) == 0 {
			break // one left
		}
		switch m {
		case chooseLocatt:
			for _, f := range in.locatt {
				if s := x.byAttr(set, f); s != 0 {
					set = s
				}
			}
		case chooseCountry:
			if x.country && in.geo != nil && in.ip.IsValid() {
				if s := x.byCountry(set, in); s != 0 {
					set = s
				}
			}
		case chooseScore:
			set = x.byScore(set)
		case chooseWeighted:
			return x.weighted(set, in.rnd())
		}
	}
	return bits.TrailingZeros64(set)
}

// byAttr keeps the locations with an attribute called name (ASCII
// case-insensitive) and, when f is "name:value", exactly that value.
func (x *extras) byAttr(set uint64, f []byte) uint64 {
	name, value, hasValue := bytes.Cut(f, colon)
	var out uint64
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		l := &x.locs[i]
		for _, a := range x.attrs[l.attrs[0]:l.attrs[1]] {
			if ascii.EqualFold(x.at(a.name), name) && (!hasValue || bytes.Equal(x.at(a.value), value)) {
				out |= 1 << i
				break
			}
		}
	}
	return out
}

var colon = []byte(":")

// byCountry keeps the locations whose country is the client's.
func (x *extras) byCountry(set uint64, in *selectIn) uint64 {
	has := false
	for s := set; s != 0; s &= s - 1 {
		if x.locs[bits.TrailingZeros64(s)].country.n > 0 {
			has = true
			break
		}
	}
	if !has {
		return 0
	}
	code, ok := in.geo(in.ip)
	if !ok {
		return 0
	}
	cc := code[:]
	var out uint64
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		if c := x.locs[i].country; c.n > 0 && ascii.EqualFold(x.at(c), cc) {
			out |= 1 << i
		}
	}
	return out
}

// byScore keeps the locations with the highest score (no score counts as 0).
func (x *extras) byScore(set uint64) uint64 {
	var out uint64
	best := 0.0
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		switch sc := x.locs[i].score; {
		case out == 0 || sc > best:
			out, best = 1<<i, sc
		case sc == best:
			out |= 1 << i
		}
	}
	return out
}

// weighted picks one location of set at random in proportion to the
// weights, r being a uniformly random number; uniformly when every weight is
// 0.
func (x *extras) weighted(set uint64, r uint64) int {
	total := 0.0
	for s := set; s != 0; s &= s - 1 {
		total += x.locs[bits.TrailingZeros64(s)].weight
	}
	if total <= 0 {
		k := int(r % uint64(bits.OnesCount64(set)))
		for s := set; ; s &= s - 1 {
			if k == 0 {
				return bits.TrailingZeros64(s)
			}
			k--
		}
	}
	// r's top 53 bits as a number in [0, 1).
	p := float64(r>>11) / (1 << 53) * total
	last := -1
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		w := x.locs[i].weight
		if w <= 0 {
			continue
		}
		if p < w {
			return i
		}
		p -= w
		last = i
	}
	return last // rounding left p at the total
}

// status is the redirect status of location i: its http_sc, else that of
// <locations>, else 302.
func (x *extras) status(i int) int {
	if sc := x.locs[i].status; sc != 0 {
		return int(sc)
	}
	if x.listSC != 0 {
		return int(x.listSC)
	}
	return 302
}
