package hdldns

import (
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/miekg/dns"

	"pidnode/cache"
)

// memoSlots is the number of slots of the parsed-RR memo.
const memoSlots = 512

// DefaultMemoBytes bounds the memo's memory when Config.MemoBytes is zero.
const DefaultMemoBytes = 1 << 20

// parsedSet is what parseStored made of one entry's values of one type. It is
// immutable once published; the RRs are templates (owner ".") that answers copy.
type parsedSet struct {
	// e is the entry the set was parsed from, held weakly: the memo never
	// keeps an entry alive after the cache has let it go.
	e     weak.Pointer[cache.Entry]
	qt    uint16
	rrs   []dns.RR
	val   []int // index in e.Public.Values of each RR, for its TTL
	bytes int64 // what the set is charged in the memo (setBytes)
}

// rrMemo is a direct-mapped, lock-free memo of parsed DNS.* values keyed by
// (cache entry, type). Cache entries are immutable and replaced, never
// modified, when a record changes, so a slot holding a different *cache.Entry
// is simply a miss: nothing here ever needs invalidating. A collision
// overwrites the slot; losing a race to publish only costs a parse.
//
// Its memory is bounded in bytes (limit): each set is charged for its RRs
// (setBytes), a set that would take the memo past its bound is not kept (and
// the slot it would have taken is emptied, so that the memo makes room), and
// a set whose entry the collector has reclaimed is dropped when a look-up
// finds it. The entries themselves are the cache's, held weakly.
type rrMemo struct {
	slots [memoSlots]atomic.Pointer[parsedSet]
	limit int64
	bytes atomic.Int64
}

func (m *rrMemo) slot(e *cache.Entry, qt uint16) *atomic.Pointer[parsedSet] {
	h := uint64(uintptr(unsafe.Pointer(e)))>>4 ^ uint64(qt)*0x9E3779B97F4A7C15
	h ^= h >> 29
	return &m.slots[h%memoSlots]
}

func (m *rrMemo) get(e *cache.Entry, qt uint16) *parsedSet {
	sl := m.slot(e, qt)
	ps := sl.Load()
	if ps == nil {
		return nil
	}
	switch ps.e.Value() {
	case e:
		if ps.qt == qt {
			return ps
		}
	case nil: // its entry is gone: give its bytes back
		if sl.CompareAndSwap(ps, nil) {
			m.bytes.Add(-ps.bytes)
		}
	}
	return nil
}

// put keeps ps, parsed from e, in its slot if the memo's bound allows.
func (m *rrMemo) put(e *cache.Entry, ps *parsedSet) {
	sl := m.slot(e, ps.qt)
	old := sl.Load()
	var oldBytes int64
	if old != nil {
		oldBytes = old.bytes
	}
	delta := ps.bytes - oldBytes
	if m.bytes.Add(delta) > m.limit {
		m.bytes.Add(-delta)
		if old != nil && sl.CompareAndSwap(old, nil) {
			m.bytes.Add(-oldBytes)
		}
		return
	}
	if !sl.CompareAndSwap(old, ps) {
		m.bytes.Add(-delta) // another put took the slot first
	}
}

// Heap bytes of the parts of a parsed set (cache.AllocSize rounds each to its
// size class).
const (
	setStruct   = int64(unsafe.Sizeof(parsedSet{}))
	weakHandle  = 8 + 48 // the weak pointer's handle and the special record on the entry
	rrOverhead  = 96     // an RR's struct, header and owner name, beyond its RDATA
	rrInterface = 16
)

// setBytes is the heap ps holds: the set, its slices, and each RR at 5/4 of
// its wire length (its fields are strings and slices of their own, rounded up
// to size classes) plus rrOverhead. TestMemoAccounting checks it against the
// heap.
func setBytes(ps *parsedSet) int64 {
	n := cache.AllocSize(int(setStruct)) + weakHandle
	n += cache.AllocSize(cap(ps.rrs)*rrInterface) + cache.AllocSize(cap(ps.val)*int(unsafe.Sizeof(int(0))))
	for _, rr := range ps.rrs {
		l := int64(dns.Len(rr))
		n += l + l/4 + rrOverhead
	}
	return n
}
