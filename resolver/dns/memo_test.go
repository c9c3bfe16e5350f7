package hdldns

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
)

// txtEntry is a found cache entry with values DNS.TXT values, each of size
// bytes of RDATA text (quoted character-strings of at most 255 bytes).
func txtEntry(values, size int) *cache.Entry {
	var sb strings.Builder
	for sb.Len() < size {
		n := min(255, size-sb.Len())
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(`"` + strings.Repeat("x", n) + `"`)
	}
	vals := make([]handlev.Value, values)
	for i := range vals {
		vals[i] = handlev.Value{Index: int32(i + 1), Type: "DNS.TXT", Data: []byte(sb.String()), Perm: handlev.PermPublicRead}
	}
	return &cache.Entry{Key: "21.T12345/X", Found: true, Public: handlev.Public{Values: vals, Target: -1}}
}

// memoTotal is what the memo's slots hold, summed.
func memoTotal(m *rrMemo) int64 {
	var n int64
	for i := range m.slots {
		if ps := m.slots[i].Load(); ps != nil {
			n += ps.bytes
		}
	}
	return n
}

// TestMemoBound fills a small memo with sets of very different sizes (one
// short TXT string to 64 RRs of 1 KiB, and one larger than the whole bound)
// and checks after every put that the memo is within its bound and that its
// count is what its slots hold; a set that fits is found again.
func TestMemoBound(t *testing.T) {
	const limit = 64 << 10
	m := &rrMemo{limit: limit}
	sizes := [][2]int{{1, 10}, {1, 200}, {4, 1000}, {64, 1 << 10}, {1, 3000}, {2, 60 << 10}, {8, 255}}
	var entries []*cache.Entry // keep them alive: the memo holds them weakly
	for i := range 700 {
		sz := sizes[i%len(sizes)]
		e := txtEntry(sz[0], sz[1])
		entries = append(entries, e)
		ps := parseStored(e, dns.TypeTXT)
		if ps == nil || len(ps.rrs) != min(sz[0], MaxRRsPerAnswer) {
			t.Fatalf("%d×%d B: parsed %v", sz[0], sz[1], ps)
		}
		m.put(e, ps)
		if b := m.bytes.Load(); b > limit || b != memoTotal(m) {
			t.Fatalf("after put %d (%d×%d B, set %d B): memo counts %d B, slots hold %d B, bound %d", i, sz[0], sz[1], ps.bytes, b, memoTotal(m), limit)
		}
		if got := m.get(e, dns.TypeTXT); ps.bytes <= limit/4 && got == nil && m.bytes.Load()+ps.bytes <= limit/2 {
			t.Fatalf("a %d B set with room for it was not kept", ps.bytes)
		}
		if ps.bytes > limit && m.get(e, dns.TypeTXT) != nil {
			t.Fatalf("a %d B set, over the %d B bound, was kept", ps.bytes, limit)
		}
	}
	if m.bytes.Load() == 0 {
		t.Error("the memo kept nothing")
	}
	runtime.KeepAlive(entries)
}

// TestMemoDoesNotPinEntries: an entry the cache has let go is collected even
// while the memo holds its parsed set, and the memo gives the set's bytes back
// when a look-up finds it gone.
func TestMemoDoesNotPinEntries(t *testing.T) {
	m := &rrMemo{limit: 1 << 20}
	e := txtEntry(2, 500)
	ps := parseStored(e, dns.TypeTXT)
	m.put(e, ps)
	if m.get(e, dns.TypeTXT) != ps {
		t.Fatal("set not kept")
	}
	sl := m.slot(e, dns.TypeTXT)
	var collected atomic.Bool
	runtime.AddCleanup(e, func(*atomic.Bool) { collected.Store(true) }, &collected)
	e = nil
	for range 10 {
		runtime.GC()
		if collected.Load() {
			break
		}
	}
	if !collected.Load() {
		t.Fatal("the entry was not collected while its set was in the memo")
	}
	// A look-up landing on the same slot drops the orphaned set.
	// other keeps the probes alive, so that no probe's set is collected
	// while the search goes on.
	var other []*cache.Entry
	defer func() { runtime.KeepAlive(other) }()
	for range 100000 {
		o := txtEntry(1, 10)
		other = append(other, o)
		if m.slot(o, dns.TypeTXT) == sl {
			if m.get(o, dns.TypeTXT) != nil {
				t.Fatal("a set of a collected entry was returned for another one")
			}
			if b := m.bytes.Load(); b != 0 {
				t.Errorf("after the look-up the memo holds %d B, want 0", b)
			}
			return
		}
	}
	t.Fatal("no entry landed on the slot")
}

// TestMemoAccounting: a parsed set is charged (setBytes) at least the heap it
// holds, and not more than half as much again, from a single short A record
// to 64 TXT RRs of 1 KiB and one TXT RR of 60 KiB.
func TestMemoAccounting(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	for _, tc := range []struct {
		name        string
		n, vals, sz int
	}{
		{"one short TXT", 4000, 1, 10},
		{"4 TXT of 1000 B", 1000, 4, 1000},
		{"64 TXT of 1 KiB", 40, 64, 1 << 10},
		{"one TXT of 60 KiB", 40, 1, 60 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := make([]*cache.Entry, tc.n)
			for i := range entries {
				entries[i] = txtEntry(tc.vals, tc.sz)
			}
			sets := make([]*parsedSet, 0, tc.n)
			before := heapInuse()
			var charged int64
			for _, e := range entries {
				ps := parseStored(e, dns.TypeTXT)
				charged += ps.bytes
				sets = append(sets, ps)
			}
			grown := int64(heapInuse()) - int64(before)
			ratio := float64(charged) / float64(grown)
			t.Logf("%d sets: charged %d B, heap grew %d B: ratio %.2f", tc.n, charged, grown, ratio)
			if ratio < 1 || ratio > 1.5 {
				t.Errorf("charged %d B, heap grew %d B: ratio %.2f outside [1, 1.5]", charged, grown, ratio)
			}
			runtime.KeepAlive(entries)
			runtime.KeepAlive(sets)
		})
	}
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestMemoGetAllocs: a look-up that finds its set (the weak pointer's Value
// included) allocates nothing.
func TestMemoGetAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates")
	}
	m := &rrMemo{limit: 1 << 20}
	e := txtEntry(1, 100)
	ps := parseStored(e, dns.TypeTXT)
	m.put(e, ps)
	if n := testing.AllocsPerRun(1000, func() {
		if m.get(e, dns.TypeTXT) != ps {
			t.Fatal("set not found")
		}
	}); n != 0 {
		t.Errorf("memo get allocates %.1f times, want 0", n)
	}
}
