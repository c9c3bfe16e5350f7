package access

import (
	"hash/maphash"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"pidnode/internal/tokenbucket"
	"pidnode/registry"
)

// Admission is what a request of an SNAA passes once its key is found (by
// bearer key on the API, by a session's key hash in the console): the SNAA
// is not suspended, the key's use is noted, the rate limits per key and per
// SNAA are charged, and a write is refused in maintenance mode. It also
// holds the per-address limits of the public routes (applications, sign-in
// attempts). The API and the console admit through the one Admission, so a
// key's budget is the same whichever way it comes. Safe for concurrent use.
type Admission struct {
	keys      *Keys
	now       func() time.Time
	key, snaa *tokenbucket.Table[string] // nil: no rate limit
	readOnly  atomic.Bool
	// rateLimited counts every refusal with 429 by a rate limit here (per
	// key, per SNAA, per address); keyRate and snaaRate those by the
	// limit per key and per SNAA.
	rateLimited, keyRate, snaaRate atomic.Uint64
}

// DefaultSNAARateFactor is how many keys' worth of requests an SNAA's keys
// may send together when AdmissionConfig.SNAARateLimit is zero: more than
// one, so that one busy key leaves its SNAA's other clients room, and a
// fixed number, so that keys beyond it buy nothing.
const DefaultSNAARateFactor = 2

// rateTableSize bounds the keys (and the SNAAs, and the addresses) a limit
// tracks; keys and SNAAs are few, the bound only guards against a flood.
const rateTableSize = 100000

var rateSeed = maphash.MakeSeed()

func rateHash(k string) uint64 { return maphash.String(rateSeed, k) }

// AdmissionConfig configures NewAdmission.
type AdmissionConfig struct {
	// Keys notes each admitted key's use. Required.
	Keys *Keys
	// RateLimit is the sustained requests per second allowed per SNAA key;
	// RateBurst the bucket size (if zero, 2×RateLimit). If RateLimit is
	// zero, there is no limit.
	RateLimit float64
	RateBurst int
	// SNAARateLimit and SNAARateBurst are the same limit for all of an
	// SNAA's keys together, charged after the key's; if zero,
	// DefaultSNAARateFactor times the key's. They apply only when
	// RateLimit is set.
	SNAARateLimit float64
	SNAARateBurst int
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// NewAdmission returns the Admission of cfg.
func NewAdmission(cfg AdmissionConfig) *Admission {
	a := &Admission{keys: cfg.Keys, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	if cfg.RateLimit > 0 {
		burst := float64(cfg.RateBurst)
		if burst <= 0 {
			burst = 2 * cfg.RateLimit
		}
		snaaRate, snaaBurst := cfg.SNAARateLimit, float64(cfg.SNAARateBurst)
		if snaaRate <= 0 {
			snaaRate = DefaultSNAARateFactor * cfg.RateLimit
		}
		if snaaBurst <= 0 {
			snaaBurst = DefaultSNAARateFactor * burst
		}
		a.key = tokenbucket.New(tokenbucket.Config{Rate: cfg.RateLimit, Burst: math.Max(burst, 1), Size: rateTableSize}, rateHash)
		a.snaa = tokenbucket.New(tokenbucket.Config{Rate: snaaRate, Burst: math.Max(snaaBurst, 1), Size: rateTableSize}, rateHash)
	}
	return a
}

// Admit admits a request of key k of SNAA sn. write: the request changes
// something (not GET or HEAD), so maintenance mode refuses it. bulk: the
// request is a bulk, which is charged by its items once they are counted
// (Charge) instead of one token here. A refusal is an *Error of
// ErrSuspended, ErrRateLimited or ErrMaintenance.
func (a *Admission) Admit(k registry.Key, sn registry.SNAA, write, bulk bool) error {
	if sn.Suspended {
		return refuse(ErrSuspended, "SNAA "+sn.ID+" is suspended; contact the operator")
	}
	if k.Hash != "" { // a person's admission identity has none
		a.keys.Touch(k.Hash)
	}
	if !bulk {
		if err := a.Charge(k.ID, sn.ID, 1); err != nil {
			return err
		}
	}
	if write {
		return a.Writable()
	}
	return nil
}

// Charge charges a request that writes n identifiers (n ≥ 1) to the key's
// bucket, then to its SNAA's: a bulk of n items costs what n creates cost,
// so that the rate limit bounds the identifiers a key writes, not its
// requests. A bulk of more items than the burst is let through only with a
// full bucket and leaves the key in debt: its next requests wait until the
// sustained rate has paid for every item (internal/tokenbucket TakeN). A
// bulk the bucket cannot cover now is refused whole (ErrRateLimited, with
// the RetryAfter after which it can). The key's bucket is charged first, so
// a key over its own rate costs its SNAA's other keys nothing; a request
// the SNAA's bucket refuses gives the key's tokens back.
func (a *Admission) Charge(keyID, snaaID string, n int) error {
	if a.key == nil {
		return nil
	}
	now := a.now().UnixNano()
	who, t, count := "with this key", a.key, &a.keyRate
	r := t.TakeN(keyID, n, now)
	if r.OK {
		who, t, count = "with the keys of SNAA "+snaaID+" together", a.snaa, &a.snaaRate
		if r = t.TakeN(snaaID, n, now); r.OK {
			return nil
		}
		a.key.GiveN(keyID, n) // the key is charged only for what is served
	}
	secs := waitSecs(r.Wait)
	a.rateLimited.Add(1)
	count.Add(1)
	rate := strconv.FormatFloat(t.Rate(), 'g', -1, 64)
	if n > 1 {
		return rateRefusal("a bulk of "+strconv.Itoa(n)+" items costs "+strconv.Itoa(n)+" of the "+rate+" writes per second allowed "+who+"; retry in "+strconv.Itoa(secs)+" s", secs)
	}
	return rateRefusal("more than "+rate+" requests per second "+who+"; retry in "+strconv.Itoa(secs)+" s", secs)
}

func waitSecs(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 1) }

func rateRefusal(detail string, secs int) *Error {
	return &Error{Kind: ErrRateLimited, Detail: detail, RetryAfter: time.Duration(secs) * time.Second}
}

// SetReadOnly switches maintenance mode: while on, every write is refused
// (reads keep working).
func (a *Admission) SetReadOnly(on bool) { a.readOnly.Store(on) }

// Writable refuses a write in maintenance mode (ErrMaintenance, retry
// after a minute).
func (a *Admission) Writable() error {
	if a.readOnly.Load() {
		return &Error{Kind: ErrMaintenance, Detail: "the node is in maintenance (read-only); retry later", RetryAfter: time.Minute}
	}
	return nil
}

// Refusals returns the counts of refusals by a rate limit: all of them
// (per key, per SNAA, per address), and those by the limit per key and
// per SNAA.
func (a *Admission) Refusals() (all, keyRate, snaaRate uint64) {
	return a.rateLimited.Load(), a.keyRate.Load(), a.snaaRate.Load()
}

// AddrLimit is a per-address limit of a public route (applications,
// sign-in attempts), counted among the Admission's refusals.
type AddrLimit struct {
	a *Admission
	t *tokenbucket.Table[string]
}

// AddrLimit returns a limit of perHour requests per address per hour.
func (a *Admission) AddrLimit(perHour float64) *AddrLimit {
	return &AddrLimit{a: a, t: tokenbucket.New(tokenbucket.Config{Rate: perHour / 3600, Burst: math.Max(perHour, 1), Size: rateTableSize}, rateHash)}
}

// Take charges one request of addr; what names the requests in the
// refusal ("applications").
func (l *AddrLimit) Take(addr, what string) error {
	res := l.t.Take(addr, l.a.now().UnixNano())
	if res.OK {
		return nil
	}
	secs := waitSecs(res.Wait)
	l.a.rateLimited.Add(1)
	return rateRefusal("too many "+what+" from your address; retry in "+strconv.Itoa(secs)+" s", secs)
}
