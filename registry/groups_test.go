package registry

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupsLanes: with Lanes 4, groups run at once, never more than four,
// and every caller gets its own write's result, including callers handed
// the lead whose write another lane ran meanwhile.
func TestGroupsLanes(t *testing.T) {
	var running, most atomic.Int32
	g := &Groups[int]{Lanes: 4}
	g.Run = func(group []*Call[int]) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		for _, c := range group {
			if c.Fn%7 == 0 {
				c.Finish(fmt.Errorf("write %d refused", c.Fn))
			} else {
				c.Finish(nil)
			}
		}
	}
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				v := w*1000 + i
				err := g.Do(fmt.Sprint("owner", w%5), 1, v)
				if want := v%7 == 0; (err != nil) != want {
					t.Errorf("write %d: error %v, want an error: %v", v, err, want)
				}
				if errors.Is(err, errLead) {
					t.Errorf("write %d got the lead hand-over as its result", v)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writes never finished: a lane was lost")
	}
	if m := most.Load(); m > 4 || m < 2 {
		t.Errorf("at most %d groups ran at once, want 2 to 4", m)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active != 0 || g.npending != 0 {
		t.Errorf("after the writes: %d lanes active, %d writes pending", g.active, g.npending)
	}
}

// TestGroupsLinger: after a group of two, the next leader waits for the two
// writers it released to send their next writes and takes them in its group;
// when they do not come back, it waits half the previous group's run, not
// Linger.
func TestGroupsLinger(t *testing.T) {
	for _, back := range []bool{true, false} {
		t.Run(fmt.Sprintf("back=%v", back), func(t *testing.T) {
			const run = 400 * time.Millisecond
			gate, started := make(chan struct{}), make(chan int, 8)
			var mu sync.Mutex
			var groups [][]int
			g := &Groups[int]{Linger: 10 * time.Second}
			g.Run = func(group []*Call[int]) {
				var fns []int
				for _, c := range group {
					fns = append(fns, c.Fn)
				}
				slices.Sort(fns) // 11 and 12 come back in either order
				mu.Lock()
				groups = append(groups, fns)
				mu.Unlock()
				started <- fns[0]
				switch fns[0] {
				case 0:
					<-gate
				case 1:
					time.Sleep(run)
				}
				for _, c := range group {
					c.Finish(nil)
				}
			}
			pending := func(n int) { t.Helper(); waitPending(t, g, n) }
			var wg sync.WaitGroup
			do := func(fn int, then func()) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := g.Do("", 1, fn); err != nil {
						t.Errorf("write %d: %v", fn, err)
					}
					if then != nil {
						then()
					}
				}()
			}
			again := func(fn int) func() {
				if !back {
					return nil
				}
				return func() { time.Sleep(20 * time.Millisecond); do(fn, nil) }
			}
			do(0, nil)
			<-started
			do(1, again(11))
			pending(1)
			do(2, again(12))
			pending(2)
			close(gate)
			<-started // the group of 1 and 2
			do(3, nil)
			pending(1)
			start := time.Now()
			wg.Wait()
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the writes took %v: the leader waited for Linger, not for half the previous run", took)
			}
			want := [][]int{{0}, {1, 2}, {3, 11, 12}}
			if !back {
				want = [][]int{{0}, {1, 2}, {3}}
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(groups) != fmt.Sprint(want) {
				t.Errorf("groups %v, want %v", groups, want)
			}
		})
	}
}

// waitPending waits until n writes are queued in g, failing t after 10 s.
func waitPending[T any](t *testing.T, g *Groups[T], n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		p := g.npending
		g.mu.Unlock()
		if p == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", p, n)
		}
	}
}
