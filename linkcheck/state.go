package linkcheck

import (
	"time"

	"pidnode/registry"
)

// outcome is what one check of a URL found.
type outcome struct {
	ok       bool
	status   int
	finalURL string
	class    string // "" when ok
	at       time.Time
	took     time.Duration
	bytes    int64 // body bytes read (GET)
}

// Rules are the state machine's parameters (docs/product.md §4.4).
type rules struct {
	failures int           // consecutive failures before broken
	minAge   time.Duration // and at least this long since the first
}

// step is the time between the rechecks of a failing or recovering URL:
// the failures needed spread over the minimum age, so that a URL that
// stays down is broken after about minAge, not after failures intervals.
func (ru rules) step() time.Duration {
	return max(ru.minAge/time.Duration(max(ru.failures-1, 1)), time.Second)
}

// next is the result after a check with outcome o of a URL whose previous
// result is old (nil: never checked), and the audit action of the change
// ("" when the state did not become broken or recover from it).
//
//	ok, failing ─failure→ failing (first failure and count kept)
//	failing ─failure (count ≥ failures and now − first ≥ minAge)→ broken  [linkcheck.broken]
//	broken ─failure→ broken
//	broken ─success→ recovering  [linkcheck.recovered]
//	recovering ─success→ ok;  recovering ─failure→ failing (count from 1)
//	ok, failing ─success→ ok
//
// Failing and recovering URLs get a Due time for an early recheck.
func (ru rules) next(old *registry.LinkResult, handle, url, kind string, o *outcome) (registry.LinkResult, string) {
	prev := registry.LinkOK
	if old != nil && old.State != "" {
		prev = old.State
	}
	now := o.at.UTC()
	r := registry.LinkResult{Handle: handle, URL: url, Kind: kind, Status: o.status, FinalURL: o.finalURL,
		Error: o.class, Checked: now, DurationMS: o.took.Milliseconds()}
	var action string
	if o.ok {
		switch prev {
		case registry.LinkBroken:
			r.State, action = registry.LinkRecovering, registry.ActLinkRecovered
			due := now.Add(ru.step())
			r.Due = &due
		default:
			r.State = registry.LinkOK
		}
	} else {
		r.Failures = 1
		first := now
		if old != nil && (prev == registry.LinkFailing || prev == registry.LinkBroken) {
			r.Failures = old.Failures + 1
			if old.FirstFailure != nil {
				first = old.FirstFailure.UTC()
			}
		}
		r.FirstFailure = &first
		switch {
		case prev == registry.LinkBroken:
			r.State = registry.LinkBroken
		case r.Failures >= ru.failures && now.Sub(first) >= ru.minAge:
			r.State, action = registry.LinkBroken, registry.ActLinkBroken
		default:
			r.State = registry.LinkFailing
			due := now.Add(ru.step())
			if r.Failures >= ru.failures-1 && first.Add(ru.minAge).After(due) {
				due = first.Add(ru.minAge)
			}
			r.Due = &due
		}
	}
	r.Since = now
	if old != nil && old.State == r.State && !old.Since.IsZero() {
		r.Since = old.Since.UTC()
	}
	return r, action
}
