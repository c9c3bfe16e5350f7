package handlev

import (
	"unicode/utf8"

	"pidnode/internal/ascii"
)

// Public is what an anonymous client may see of a record: the one decision
// every public front (HTTP redirect, ?noredirect, /api/handles, tombstone and
// reserved pages, DNS, the native protocol) renders from, so that no two fronts
// can disagree about it. Build it with NewPublic.
//
// A Public built from a Record shares that record's memory and is as immutable
// as the record: never modify Values, Alias or what they point to.
type Public struct {
	// Status is the record's lifecycle state (Record.Status), read from the
	// whole record, including a STATUS value without public read: the status is
	// the administrator's decision about the identifier (hide it while
	// SUBMITTED, tombstone it when OBSOLETED or DEPRECATED), not data that a
	// value's permissions guard. Its text is shown only when the STATUS value
	// itself is public (it is then in Values) or as the tombstone's status.
	Status Status

	// Values are the values with public read (Perm has PermPublicRead), in
	// record order. Every request to a public front is anonymous, so no other
	// value is ever shown (docs/handle-protocol.md §1.4, publicOnly). When every
	// value is public, Values is the record's own slice.
	Values []Value

	// Target is the index in Values of the value a redirect goes to (see
	// ChooseTarget), -1 if there is none. Only public values are considered:
	// a private URL is never the target, the next public one is.
	Target int

	// Alias is the data of the first public HS_ALIAS value that is usable
	// handle text (ValidAlias), nil if there is none.
	Alias []byte
}

// NewPublic decides what the public may see of r. It allocates only when some
// value lacks public read (then Values is a new slice of the public ones).
func NewPublic(r *Record) Public {
	p := Public{Status: r.Status(), Values: publicValues(r.Values)}
	p.Target = ChooseTarget(p.Values, nil)
	for i := range p.Values {
		if ascii.EqualFold(p.Values[i].Type, TypeAlias) && ValidAlias(p.Values[i].Data) {
			p.Alias = p.Values[i].Data
			break
		}
	}
	return p
}

// Hidden reports whether the record is SUBMITTED: reserved, not yet public.
// To the public it does not exist yet, on every front.
func (p *Public) Hidden() bool { return p.Status == StatusSubmitted }

// Gone reports whether the record is OBSOLETED or DEPRECATED: a redirect
// answers with a tombstone instead of the target.
func (p *Public) Gone() bool { return p.Status.Tombstoned() }

// TargetValue returns the redirect target value, nil if there is none.
func (p *Public) TargetValue() *Value {
	if p.Target < 0 {
		return nil
	}
	return &p.Values[p.Target]
}

// publicValues returns the values with public read, reusing vs when all have it.
func publicValues(vs []Value) []Value {
	n := 0
	for i := range vs {
		if vs[i].Perm&PermPublicRead != 0 {
			n++
		}
	}
	if n == len(vs) {
		return vs
	}
	out := make([]Value, 0, n)
	for i := range vs {
		if vs[i].Perm&PermPublicRead != 0 {
			out = append(out, vs[i])
		}
	}
	return out
}

// ChooseTarget returns the index in vs of the value a redirect goes to
// (docs/handle-protocol.md §2): among the values keep accepts (all if keep is
// nil), the first whose type is URL (ASCII case-insensitive), else the first
// whose type is a URL.* subtype; -1 if there is none. The URL value wins even
// when a URL.* value comes before it in record order.
func ChooseTarget(vs []Value, keep func(*Value) bool) int {
	sub := -1
	for i := range vs {
		if keep != nil && !keep(&vs[i]) {
			continue
		}
		t := vs[i].Type
		if len(t) == len(TypeURL) && ascii.EqualFold(t, TypeURL) {
			return i
		}
		if sub < 0 && len(t) > len(TypeURL)+1 && t[len(TypeURL)] == '.' && ascii.EqualFold(t[:len(TypeURL)], TypeURL) {
			sub = i
		}
	}
	return sub
}

// IsURLType reports whether a value type is URL or a URL.* subtype (ASCII
// case-insensitive): the types a redirect may go to.
func IsURLType(t string) bool {
	return len(t) >= len(TypeURL) && ascii.EqualFold(t[:len(TypeURL)], TypeURL) && (len(t) == len(TypeURL) || len(t) > len(TypeURL)+1 && t[len(TypeURL)] == '.')
}

// ValidAlias reports whether HS_ALIAS data is usable handle text: non-empty,
// at most MaxHandleLen bytes of valid UTF-8, no control characters.
func ValidAlias(b []byte) bool {
	if len(b) == 0 || len(b) > MaxHandleLen || !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
