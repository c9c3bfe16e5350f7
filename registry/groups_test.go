package registry

import (
	"errors"
	"fmt"
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
