package cluster

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRevReadsNeverStale: a Sync call is answered by a read that started
// after the call was made (otherwise a write acknowledged just before the
// call could be missed), while concurrent calls share reads.
func TestRevReadsNeverStale(t *testing.T) {
	var started atomic.Int64
	s := &revReads{read: func() (int64, error) {
		n := started.Add(1) // the read's number is its revision
		time.Sleep(2 * time.Millisecond)
		return n, nil
	}}
	var wg sync.WaitGroup
	var calls atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				before := started.Load()
				r := s.join()
				<-r.done
				calls.Add(1)
				if r.rev <= before {
					t.Errorf("answered by read %d, which started before the call (%d reads had started)", r.rev, before)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := started.Load(); n >= calls.Load()/2 {
		t.Errorf("%d reads for %d calls: concurrent calls did not share them", n, calls.Load())
	}
}
