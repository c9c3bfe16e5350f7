package cache

import (
	"fmt"
	"testing"

	"pidnode/handlev"
)

// TestAdmission: once a shard is full, a key missed for the first time is
// answered but not kept; its second miss adds it. Entries being reused
// survive a stream of one-off misses that a plain LRU would let push them out.
func TestAdmission(t *testing.T) {
	const reused, oneOff = 16, 96
	for _, tt := range []struct {
		name     string
		admitAll bool
	}{
		{name: "doorkeeper"},
		{name: "admit all", admitAll: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := newSource()
			for i := range reused + oneOff {
				k := fmt.Sprintf("K%03d", i)
				src.put(k, record("21.T11148/"+k, "https://example.org/"+k, handlev.StatusNone))
			}
			c := mustNew(t, Config{Source: src, Entries: reused, Shards: 1, AdmitAll: tt.admitAll})
			for i := range reused { // room: all kept
				mustGet(t, c, fmt.Sprintf("K%03d", i))
			}
			for i := reused; i < reused+oneOff; i++ { // one-off misses into a full shard
				e := mustGet(t, c, fmt.Sprintf("K%03d", i))
				if !e.Found || url(e) != fmt.Sprintf("https://example.org/K%03d", i) {
					t.Fatalf("Get(K%03d) = %+v, want the record", i, e)
				}
			}
			before := c.Stats().Hits
			for i := range reused {
				mustGet(t, c, fmt.Sprintf("K%03d", i))
			}
			hits := c.Stats().Hits - before
			u := c.Usage()
			if tt.admitAll {
				if hits != 0 || u.NotAdmitted != 0 {
					t.Errorf("hits on the reused keys = %d, Usage() = %+v: want 0 and every miss added", hits, u)
				}
				return
			}
			// The filter's false positives (about 1 %) admit a few one-offs,
			// each evicting one reused key.
			if hits < reused-8 || u.NotAdmitted < oneOff-8 || u.Entries != reused {
				t.Errorf("hits on the %d reused keys after %d one-off misses = %d, Usage() = %+v: want most hits, most one-offs not admitted",
					reused, oneOff, hits, u)
			}
		})
	}
}

// TestAdmissionSecondMiss: a key missed twice while the shard is full is kept,
// and the entry built for the first miss was charged to no shard.
func TestAdmissionSecondMiss(t *testing.T) {
	src := newSource()
	for _, k := range []string{"A", "B", "C"} {
		src.put(k, record("21.T11148/"+k, "https://example.org/"+k, handlev.StatusNone))
	}
	c := mustNew(t, Config{Source: src, Entries: 2, Shards: 1})
	mustGet(t, c, "A")
	mustGet(t, c, "B")
	held := c.Usage().Bytes
	first := mustGet(t, c, "C")
	if u := c.Usage(); u.Entries != 2 || u.NotAdmitted != 1 || u.Bytes != held+c.shards[0].dk.bytes() {
		t.Fatalf("after the first miss of C: Usage() = %+v, want 2 entries, 1 not admitted, %d B", u, held+c.shards[0].dk.bytes())
	}
	first.Charge(1000) // a part built for a transient entry is charged to no shard
	if got := c.Usage().Bytes; got != held+c.shards[0].dk.bytes() {
		t.Fatalf("after charging the transient entry: Usage().Bytes = %d, want %d", got, held+c.shards[0].dk.bytes())
	}
	second := mustGet(t, c, "C")
	if second == first {
		t.Fatal("second Get(C) returned the transient entry: it must have been loaded again")
	}
	if third := mustGet(t, c, "C"); third != second {
		t.Fatal("third Get(C) missed: the second miss should have kept C")
	}
	if st := c.Stats(); st.Evictions != 1 || st.Entries != 2 {
		t.Fatalf("Stats() = %+v, want C added with one eviction", st)
	}
}

// TestDoorkeeperWindow: the filter forgets after its window, so a key must
// come back within twice the shard's entries of other first misses.
func TestDoorkeeperWindow(t *testing.T) {
	var d doorkeeper
	const held = 100 // window 200
	h := func(i int) uint64 { return uint64(i+1) * 0x9e3779b97f4a7c15 }
	if d.admit(h(0), held) {
		t.Fatal("first sighting admitted")
	}
	if !d.admit(h(0), held) {
		t.Fatal("second sighting right after the first not admitted")
	}
	false1 := 0
	for i := 1; i < 200; i++ {
		if d.admit(h(i), held) {
			false1++
		}
	}
	if false1 > 10 {
		t.Errorf("%d of 199 first sightings admitted, want under 5 %%", false1)
	}
	for i := 200; i < 300; i++ { // past the window: reset
		d.admit(h(i), held)
	}
	if d.admit(h(0), held) {
		t.Error("a key last seen before the reset still admitted")
	}
}
