package people

import (
	"sync"
	"time"
)

// lockout counts the failed sign-ins of each e-mail address (known or
// not: locking only known ones would tell which exist) in this node's
// memory. Safe for concurrent use.
type lockout struct {
	after   int
	window  time.Duration
	lockFor time.Duration

	mu sync.Mutex
	m  map[string]*failures
}

type failures struct {
	n      int
	first  time.Time
	until  time.Time
	totpAt uint64 // the last TOTP step used, refused a second time
}

// lockoutMax bounds the addresses remembered; when full it starts over.
const lockoutMax = 100000

// locked returns how long the address stays locked (0: not locked).
func (l *lockout) locked(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.m[addr]
	if f == nil || !now.Before(f.until) {
		return 0
	}
	return f.until.Sub(now)
}

// fail counts a failure and reports whether it locked the address.
func (l *lockout) fail(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= lockoutMax {
		l.m = map[string]*failures{}
	}
	f := l.m[addr]
	if f == nil {
		f = &failures{}
		l.m[addr] = f
	}
	if f.n == 0 || now.Sub(f.first) > l.window {
		f.n, f.first = 0, now
	}
	f.n++
	if f.n >= l.after {
		f.n, f.until = 0, now.Add(l.lockFor)
		return true
	}
	return false
}

// succeed forgets the address's failures and records the TOTP step used
// (0: none); it reports false if that step was used before (a replayed
// code).
func (l *lockout) succeed(addr string, step uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.m[addr]
	if f == nil {
		f = &failures{}
		l.m[addr] = f
	}
	if step != 0 && step <= f.totpAt {
		return false
	}
	f.n = 0
	if step != 0 {
		f.totpAt = step
	}
	return true
}
