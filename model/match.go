package model

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// A model's patterns are matched against the same few strings over and
// over (every create's media types), and running the regexp engine for each
// is CPU a create need not spend. matchMemo remembers the verdicts for the strings of up to
// matchMemoMaxLen bytes, one per slot of a small table (a later string
// replaces an earlier one in its slot): bounded memory, and a verdict is
// the regexp's own, so the answers are the same.
type matchMemo struct {
	slots [matchMemoSlots]atomic.Pointer[matchVerdict]
}

const (
	matchMemoSlots  = 64
	matchMemoMaxLen = 256
)

type matchVerdict struct {
	s  string
	ok bool
}

var matchSeed = maphash.MakeSeed()

// matches reports whether str matches s's pattern (s.re must be set).
func (s *Schema) matches(str string) bool {
	if s.matched == nil || len(str) > matchMemoMaxLen {
		return s.re.MatchString(str)
	}
	slot := &s.matched.slots[maphash.String(matchSeed, str)%matchMemoSlots]
	if v := slot.Load(); v != nil && v.s == str {
		return v.ok
	}
	ok := s.re.MatchString(str)
	// A copy: str may be a substring of a whole request body (decoded
	// strings share one copy of it), which the table must not keep alive.
	slot.Store(&matchVerdict{s: strings.Clone(str), ok: ok})
	return ok
}
