// Package procfloor keeps a second Go processor (P) while a goroutine waits in
// a blocking system call, in a process that otherwise runs with GOMAXPROCS 1.
//
// A goroutine in a system call keeps its P. The runtime hands that P to
// another thread only when its monitor (sysmon) sees the call still running
// on two of its passes, and a busy process's monitor wakes every 10 ms. With
// a single P (a node pinned to one CPU, or a container limited to one), each
// fsync of a bbolt commit, two per commit and milliseconds each on virtual
// disks, would stop every other goroutine for up to 20 ms: a one-CPU node
// would serve a fraction of its redirects while clients create identifiers,
// and its tail latency would jump during a statistics flush (dozens of
// commits).
//
// Enter before a call that may block on the disk and Exit after it: while any
// caller is inside, the process has two Ps, so the resolver keeps running on
// the second while the first waits in fsync (the waiting thread uses no CPU,
// so the two do not compete for the core). GOMAXPROCS goes back to 1 once
// nobody has been inside for Linger, so a steady read load runs on one P;
// changing GOMAXPROCS stops the world briefly, and the linger keeps a burst of
// commits from paying that per commit.
//
// Nothing changes when GOMAXPROCS is already above 1, or when the GOMAXPROCS
// environment variable was set (the operator's explicit choice).
package procfloor

import (
	"os"
	"runtime"
	"sync"
	"time"
)

// Linger is how long the second P is kept after the last Exit.
const Linger = 100 * time.Millisecond

var (
	mu      sync.Mutex
	inside  int         // callers between Enter and Exit
	raised  bool        // GOMAXPROCS was raised from 1 to 2 here
	dropper lingerTimer // drops the second P Linger after the last Exit

	// explicit: GOMAXPROCS was set in the environment; leave it alone.
	explicit = os.Getenv("GOMAXPROCS") != ""
	// atStart is GOMAXPROCS when the process started: the runtime's default
	// unless explicit. A 1 that differs from it was set by a call (go test
	// -cpu 1, say), and drop puts that 1 back rather than the default.
	atStart = runtime.GOMAXPROCS(0)
	// linger is Linger; tests shorten it.
	linger = Linger
	// afterFunc starts the linger's timer. Tests replace it with a timer
	// they fire themselves, so what they check does not depend on how soon
	// a loaded machine runs them.
	afterFunc = func(d time.Duration, f func()) lingerTimer { return time.AfterFunc(d, f) }
)

// lingerTimer is the part of *time.Timer the linger uses.
type lingerTimer interface {
	Reset(d time.Duration) bool
}

// Enter marks the start of a call that may block in the kernel.
func Enter() {
	mu.Lock()
	inside++
	// The current value, not the flag alone: GOMAXPROCS may have been set
	// back to 1 by someone else while raised.
	if !explicit && runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
		raised = true
	}
	mu.Unlock()
}

// Exit marks the end of a call begun with Enter.
func Exit() {
	mu.Lock()
	if inside == 0 {
		mu.Unlock()
		panic("procfloor: Exit without Enter")
	}
	inside--
	if inside == 0 && raised {
		if dropper == nil {
			dropper = afterFunc(linger, drop)
		} else {
			dropper.Reset(linger)
		}
	}
	mu.Unlock()
}

// drop takes GOMAXPROCS back to 1 (through the runtime's default when the
// process started at 1) if nobody is inside and nobody else has changed it
// meanwhile.
func drop() {
	mu.Lock()
	defer mu.Unlock()
	if inside > 0 || !raised {
		return
	}
	raised = false
	switch {
	case runtime.GOMAXPROCS(0) != 2: // changed by someone else meanwhile
	case atStart == 1:
		// The default (CPU affinity and cgroup limit), with the runtime's
		// automatic updates on again: runtime.GOMAXPROCS(2) turned them off.
		runtime.SetDefaultGOMAXPROCS()
	default:
		runtime.GOMAXPROCS(1)
	}
}

// Raised reports whether the second P is currently held (for tests).
func Raised() bool {
	mu.Lock()
	defer mu.Unlock()
	return raised
}
