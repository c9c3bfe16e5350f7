package tokenbucket

import (
	"testing"
	"time"
)

func TestTakeN(t *testing.T) {
	hash := func(s string) uint64 { return uint64(len(s)) }
	tb := New(Config{Rate: 100, Burst: 200}, hash) // 10 ms per token
	now := int64(1e18)
	if r := tb.TakeN("k", 150, now); !r.OK {
		t.Fatalf("150 of a full bucket of 200: %+v", r)
	}
	if r := tb.TakeN("k", 100, now); r.OK || r.Wait != 500*time.Millisecond {
		t.Fatalf("100 with 50 left: %+v, want a wait of 500ms", r)
	}
	if r := tb.TakeN("k", 100, now+int64(500*time.Millisecond)); !r.OK {
		t.Fatalf("100 after the wait: %+v", r)
	}
	// More than the burst: only with a full bucket, then in debt.
	if r := tb.TakeN("big", 1000, now); !r.OK {
		t.Fatalf("1000 of a full bucket of 200: %+v", r)
	}
	r := tb.Take("big", now)
	if r.OK || r.Wait != 8*time.Second+10*time.Millisecond {
		t.Fatalf("after 1000: %+v, want a wait of 8.01s (800 tokens of debt, then one)", r)
	}
	if r := tb.TakeN("big", 1000, now+int64(9*time.Second)); r.OK || r.Wait != time.Second {
		t.Fatalf("1000 before the bucket is full: %+v, want a wait of 1s", r)
	}
	if r := tb.TakeN("big", 1000, now+int64(10*time.Second)); !r.OK {
		t.Fatalf("1000 with a full bucket again: %+v", r)
	}
	if r := tb.TakeN("x", 1<<62, now); !r.OK {
		t.Fatalf("a huge take of a full bucket: %+v", r)
	}
	if r := tb.Take("x", now+int64(time.Hour)); r.OK {
		t.Fatalf("a huge take left no debt: %+v", r)
	}
}

// TestGiveN: tokens given back after a take are there for the next take,
// as if the first had not happened; giving back never fills a bucket beyond
// its burst.
func TestGiveN(t *testing.T) {
	hash := func(s string) uint64 { return uint64(len(s)) }
	tb := New(Config{Rate: 100, Burst: 200}, hash) // 10 ms per token
	now := int64(1e18)
	if r := tb.TakeN("k", 1000, now); !r.OK {
		t.Fatalf("1000 of a full bucket: %+v", r)
	}
	if r := tb.Take("k", now); r.OK {
		t.Fatalf("a take after 1000 of debt: %+v", r)
	}
	tb.GiveN("k", 1000)
	if r := tb.TakeN("k", 200, now); !r.OK {
		t.Fatalf("200 after the 1000 were given back: %+v", r)
	}
	if r := tb.Take("k", now); r.OK {
		t.Fatalf("a 201st token of a burst of 200: %+v", r)
	}
	tb.GiveN("k", 1000) // more than was taken since the bucket was full
	if r := tb.TakeN("k", 200, now); !r.OK {
		t.Fatalf("200 after more than that was given back: %+v", r)
	}
	if r := tb.Take("k", now); r.OK {
		t.Fatalf("giving back filled the bucket beyond its burst: %+v", r)
	}
	tb.GiveN("unknown", 5) // a key not in the table: nothing to do
	if n := tb.Len(); n != 1 {
		t.Errorf("Len() = %d after giving to an unknown key, want 1", n)
	}
}
