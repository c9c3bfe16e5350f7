package hdldns

import (
	"sync/atomic"
	"unsafe"

	"github.com/miekg/dns"

	"pidnode/cache"
)

// memoSlots is the size of the parsed-RR memo. It bounds the memory the memo
// pins: at most this many cache entries stay reachable after the cache drops
// them, until their slot is reused.
const memoSlots = 512

// parsedSet is what parseStored made of one entry's values of one type. It is
// immutable once published; the RRs are templates (owner ".") that answers copy.
type parsedSet struct {
	e   *cache.Entry
	qt  uint16
	rrs []dns.RR
	val []int // index in e.Public.Values of each RR, for its TTL
}

// rrMemo is a direct-mapped, lock-free memo of parsed DNS.* values keyed by
// (cache entry, type). Cache entries are immutable and replaced, never
// modified, when a record changes, so a slot holding a different *cache.Entry
// is simply a miss: nothing here ever needs invalidating. A collision
// overwrites the slot; losing a race to publish only costs a parse.
type rrMemo struct {
	slots [memoSlots]atomic.Pointer[parsedSet]
}

func (m *rrMemo) slot(e *cache.Entry, qt uint16) *atomic.Pointer[parsedSet] {
	h := uint64(uintptr(unsafe.Pointer(e)))>>4 ^ uint64(qt)*0x9E3779B97F4A7C15
	h ^= h >> 29
	return &m.slots[h%memoSlots]
}

func (m *rrMemo) get(e *cache.Entry, qt uint16) *parsedSet {
	if ps := m.slot(e, qt).Load(); ps != nil && ps.e == e && ps.qt == qt {
		return ps
	}
	return nil
}

func (m *rrMemo) put(ps *parsedSet) { m.slot(ps.e, ps.qt).Store(ps) }
