package procfloor

import (
	"runtime"
	"testing"
	"time"
)

// setup shortens the linger and starts from GOMAXPROCS procs, as if the
// process had started with atStart; everything is reset afterwards. It
// returns the runtime's default.
func setup(t *testing.T, procs, start int) (def int) {
	t.Helper()
	runtime.SetDefaultGOMAXPROCS()
	def = runtime.GOMAXPROCS(0)
	old, oldExplicit, oldStart := linger, explicit, atStart
	linger, explicit, atStart = 20*time.Millisecond, false, start
	runtime.GOMAXPROCS(procs)
	t.Cleanup(func() {
		waitDropped(t)
		linger, explicit, atStart = old, oldExplicit, oldStart
		runtime.SetDefaultGOMAXPROCS()
	})
	return def
}

func waitDropped(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); Raised(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second P was never dropped")
		}
	}
}

func procs() int { return runtime.GOMAXPROCS(0) }

func TestRaiseWhileInsideThenDrop(t *testing.T) {
	def := setup(t, 1, 1) // one CPU: 1 is the default
	Enter()
	if procs() != 2 || !Raised() {
		t.Fatalf("inside: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Enter() // a second caller: nothing more to do
	Exit()
	time.Sleep(3 * linger)
	if procs() != 2 || !Raised() {
		t.Fatalf("one caller still inside: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Exit()
	if procs() != 2 {
		t.Fatalf("right after the last Exit: GOMAXPROCS %d, want 2 (kept for the linger)", procs())
	}
	waitDropped(t)
	if procs() != def {
		t.Fatalf("after the linger: GOMAXPROCS %d, want the default %d", procs(), def)
	}
}

func TestEnterWithinLingerKeepsIt(t *testing.T) {
	setup(t, 1, 1)
	Enter()
	Exit()
	Enter()
	time.Sleep(3 * linger)
	if !Raised() || procs() != 2 {
		t.Fatalf("re-entered within the linger: GOMAXPROCS %d, raised %v; want 2, true", procs(), Raised())
	}
	Exit()
}

// Above 1, or with GOMAXPROCS set in the environment, Enter changes nothing.
func TestLeftAlone(t *testing.T) {
	for _, c := range []struct {
		name     string
		procs    int
		explicit bool
	}{{"GOMAXPROCS 3", 3, false}, {"GOMAXPROCS=1 in the environment", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			setup(t, c.procs, c.procs)
			explicit = c.explicit
			Enter()
			if Raised() || procs() != c.procs {
				t.Fatalf("now %d, raised %v; want %d, false", procs(), Raised(), c.procs)
			}
			Exit()
		})
	}
}

func TestOthersChangeIsKept(t *testing.T) {
	setup(t, 1, 1)
	Enter()
	runtime.GOMAXPROCS(4) // someone else decides meanwhile
	Exit()
	waitDropped(t)
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
	setup(t, 1, 4)
	Enter()
	Exit()
	waitDropped(t)
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
