package procfloor

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// manualTimer stands in for the linger's time.Timer: it fires only when the
// test says the linger has passed, so no check depends on scheduling delays.
type manualTimer struct {
	mu    sync.Mutex
	armed bool
	d     time.Duration
	f     func()
}

func (m *manualTimer) Reset(d time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.armed
	m.armed, m.d = true, d
	return was
}

// expire runs the timer's function as if its duration had passed; it reports
// whether the timer was armed (an unarmed timer does nothing).
func (m *manualTimer) expire() bool {
	m.mu.Lock()
	armed, f := m.armed, m.f
	m.armed = false
	m.mu.Unlock()
	if armed {
		f()
	}
	return armed
}

func (m *manualTimer) pending() (bool, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.armed, m.d
}

// setup starts from GOMAXPROCS procs, as if the process had started with
// atStart, with the linger's timer under the test's control (the returned
// timer; it exists once an Exit has armed it); everything is reset afterwards.
// It returns the runtime's default.
func setup(t *testing.T, procs, start int) (def int, timer *manualTimer) {
	t.Helper()
	runtime.SetDefaultGOMAXPROCS()
	def = runtime.GOMAXPROCS(0)
	timer = &manualTimer{}
	old, oldExplicit, oldStart, oldAfter, oldDropper := linger, explicit, atStart, afterFunc, dropper
	explicit, atStart, dropper = false, start, nil
	afterFunc = func(d time.Duration, f func()) lingerTimer {
		timer.mu.Lock()
		timer.armed, timer.d, timer.f = true, d, f
		timer.mu.Unlock()
		return timer
	}
	runtime.GOMAXPROCS(procs)
	t.Cleanup(func() {
		timer.expire()
		if Raised() {
			t.Error("the second P is still held at the end of the test")
		}
		linger, explicit, atStart, afterFunc, dropper = old, oldExplicit, oldStart, oldAfter, oldDropper
		runtime.SetDefaultGOMAXPROCS()
	})
	return def, timer
}

// expireLinger lets the linger pass: the timer must be armed for linger.
func expireLinger(t *testing.T, timer *manualTimer) {
	t.Helper()
	if armed, d := timer.pending(); !armed || d != linger {
		t.Fatalf("linger timer armed %v for %v, want armed for %v", armed, d, linger)
	}
	timer.expire()
}

func procs() int { return runtime.GOMAXPROCS(0) }

func TestRaiseWhileInsideThenDrop(t *testing.T) {
	def, timer := setup(t, 1, 1) // one CPU: 1 is the default
	Enter()
	if procs() != 2 || !Raised() {
		t.Fatalf("inside: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Enter() // a second caller: nothing more to do
	Exit()
	if armed, _ := timer.pending(); armed {
		t.Fatal("the linger started while a caller is still inside")
	}
	if procs() != 2 || !Raised() {
		t.Fatalf("one caller still inside: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Exit()
	if procs() != 2 {
		t.Fatalf("right after the last Exit: GOMAXPROCS %d, want 2 (kept for the linger)", procs())
	}
	expireLinger(t, timer)
	if Raised() {
		t.Fatal("still raised after the linger")
	}
	if procs() != def {
		t.Fatalf("after the linger: GOMAXPROCS %d, want the default %d", procs(), def)
	}
}

func TestEnterWithinLingerKeepsIt(t *testing.T) {
	def, timer := setup(t, 1, 1)
	Enter()
	Exit()
	Enter()
	timer.expire() // the linger that began at the Exit runs out with a caller inside
	if !Raised() || procs() != 2 {
		t.Fatalf("re-entered within the linger: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Exit()
	if procs() != 2 {
		t.Fatalf("right after the last Exit: GOMAXPROCS %d, want 2 (a new linger)", procs())
	}
	expireLinger(t, timer)
	if Raised() || procs() != def {
		t.Fatalf("after the new linger: GOMAXPROCS %d, raised %v; want the default %d, false", procs(), Raised(), def)
	}
}

// Above 1, or with GOMAXPROCS set in the environment, Enter changes nothing.
func TestLeftAlone(t *testing.T) {
	for _, c := range []struct {
		name     string
		procs    int
		explicit bool
	}{{"GOMAXPROCS 3", 3, false}, {"GOMAXPROCS=1 in the environment", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			_, timer := setup(t, c.procs, c.procs)
			explicit = c.explicit
			Enter()
			if Raised() || procs() != c.procs {
				t.Fatalf("now %d, raised %v; want %d, false", procs(), Raised(), c.procs)
			}
			Exit()
			if armed, _ := timer.pending(); armed {
				t.Fatal("a linger started although nothing was raised")
			}
		})
	}
}

func TestOthersChangeIsKept(t *testing.T) {
	_, timer := setup(t, 1, 1)
	Enter()
	runtime.GOMAXPROCS(4) // someone else decides meanwhile
	Exit()
	expireLinger(t, timer)
	if procs() != 4 {
		t.Fatalf("GOMAXPROCS %d after the drop, want the 4 set meanwhile", procs())
	}
}

func TestSetBackToOneWhileRaised(t *testing.T) {
	setup(t, 1, 1)
	Enter()
	Exit()
	runtime.GOMAXPROCS(1) // someone else, within the linger
	Enter()
	if procs() != 2 {
		t.Fatalf("entered while raised but at 1: GOMAXPROCS %d, want 2", procs())
	}
	Exit()
}

// A process that started with more processors and was set to 1 by a call
// (go test -cpu 1) gets its 1 back, not the default.
func TestSetOneIsPutBack(t *testing.T) {
	_, timer := setup(t, 1, 4)
	Enter()
	Exit()
	expireLinger(t, timer)
	if procs() != 1 {
		t.Fatalf("after the linger: GOMAXPROCS %d, want the 1 that was set", procs())
	}
}

func TestExitWithoutEnterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Exit without Enter did not panic")
		}
	}()
	Exit()
}

// The real timer: the drop happens on its own once the linger has passed
// (waited for with a generous deadline, an upper bound only).
func TestRealTimerDrops(t *testing.T) {
	setup(t, 1, 1)
	afterFunc = func(d time.Duration, f func()) lingerTimer { return time.AfterFunc(d, f) }
	linger = 5 * time.Millisecond
	Enter()
	Exit()
	for deadline := time.Now().Add(10 * time.Second); Raised(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second P was never dropped")
		}
	}
}
