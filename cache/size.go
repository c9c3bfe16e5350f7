package cache

import (
	"unsafe"

	"pidnode/handlev"
)

// What an entry is charged for (Entry.Bytes): every heap object it keeps
// alive, each rounded up to the allocator's size class, because that is what
// the heap really spends on it. TestAccountingMatchesHeap checks the sum
// against runtime.MemStats for caches of several record sizes.

// sizeClasses are the Go allocator's small-object size classes
// (runtime/sizeclasses.go); larger objects take whole 8 KiB pages.
var sizeClasses = [...]uint32{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
	1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528,
	6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768,
}

const pageSize = 8192

// AllocSize returns the heap bytes an allocation of n bytes occupies: n rounded
// up to its size class, or to whole pages above 32 KiB; 0 for n <= 0. Fronts
// that build parts of an entry's view use it for what they pass to
// Entry.Charge.
func AllocSize(n int) int64 {
	if n <= 0 {
		return 0
	}
	if n > int(sizeClasses[len(sizeClasses)-1]) {
		return int64((n + pageSize - 1) / pageSize * pageSize)
	}
	lo, hi := 0, len(sizeClasses)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if int(sizeClasses[mid]) < n {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int64(sizeClasses[lo])
}

// SliceSize returns the heap bytes of b's backing array as far as b can see
// it (its capacity), rounded to the size class.
func SliceSize(b []byte) int64 { return AllocSize(cap(b)) }

// Fixed per-entry costs outside the Entry struct:
//   - the LRU's list element (golang-lru internal.Entry: next, prev, list,
//     key, value, expiry time and bucket: 80 bytes, its own size class);
//   - the LRU's map slot (a string key and a pointer, 24 bytes, in a Swiss
//     table kept between 7/16 and 7/8 full, so about 40 bytes a slot on
//     average, with its control byte).
//   - the free slots the miss path's short-lived allocations leave in the
//     spans the entry's objects share: after a collection, HeapInuse exceeds
//     HeapAlloc by 60 to 170 bytes per entry in TestAccountingMatchesHeap.
const (
	spanSlack    = 64
	lruNodeBytes = 80
	mapSlotBytes = 40
	entryStruct  = int64(unsafe.Sizeof(Entry{}))
	valueStruct  = int64(unsafe.Sizeof(handlev.Value{}))
	refStruct    = int64(unsafe.Sizeof(handlev.Ref{}))
)

// valueHeader bounds the encoding bytes of one value that are not in its
// strings (index, lengths, TTL, timestamp, permissions; the value layout of
// docs/handle-protocol.md §3.4), used to tell a record decoded into one
// shared buffer from one whose parts were allocated separately.
const valueHeader = 40

// baseSize is what an entry costs when it is published: the entry itself, its
// keys, the LRU's bookkeeping, the record and the public view's own slice.
// The view (Config.Render) is charged by the front that built it.
func baseSize(key, lruKey string, rec *handlev.Record, derived handlev.Derived, pub *handlev.Public) int64 {
	n := AllocSize(int(entryStruct)) + lruNodeBytes + mapSlotBytes + spanSlack
	n += stringSize(lruKey)
	if key != lruKey {
		n += stringSize(key)
	}
	n += recordSize(rec, derived)
	if len(pub.Values) > 0 && unsafe.SliceData(pub.Values) != unsafe.SliceData(rec.Values) {
		n += AllocSize(cap(pub.Values) * int(valueStruct))
	}
	return n
}

func stringSize(s string) int64 { return AllocSize(len(s)) }

// recordSize is the heap a record keeps alive. A record the store decoded keeps
// its handle, derived part (Entry.Derived), data, reference handles and
// unusual type names in one buffer:
// when those lie in one span no larger than their lengths plus the values'
// encoding headers, that span is charged once; otherwise each part is charged
// on its own. Well-known type names are static strings (handlev.InternedTypes)
// and cost nothing.
func recordSize(r *handlev.Record, derived handlev.Derived) int64 {
	n := AllocSize(cap(r.Values) * int(valueStruct))
	var sp span
	var parts, typeLens int64
	sp.addString(r.Handle)
	parts += stringSize(r.Handle)
	if len(derived) > 0 {
		// The store keeps it between the handle and the values, with its
		// length before it.
		sp.add(unsafe.SliceData(derived), cap(derived))
		parts += AllocSize(cap(derived))
		typeLens += 4
	}
	for i := range r.Values {
		v := &r.Values[i]
		if cap(v.Refs) > 0 {
			n += AllocSize(cap(v.Refs) * int(refStruct))
		}
		sp.add(unsafe.SliceData(v.Data), cap(v.Data))
		parts += AllocSize(cap(v.Data))
		for j := range v.Refs {
			sp.addString(v.Refs[j].Handle)
			parts += stringSize(v.Refs[j].Handle)
		}
		typeLens += int64(len(v.Type))
	}
	width := int64(sp.hi - sp.lo)
	shared := sp.lo != 0 && width <= sp.sum+typeLens+int64(len(r.Values)+1)*valueHeader
	for i := range r.Values {
		t := r.Values[i].Type
		switch {
		case staticType(t):
		case shared && sp.covers(t):
		default:
			parts += stringSize(t)
			if shared {
				n += stringSize(t)
			}
		}
	}
	if shared {
		return n + AllocSize(int(width)+valueHeader) // + the last value's trailing fields
	}
	return n + parts
}

// staticType reports whether t is one of handlev.InternedTypes itself (not an
// equal copy): a static string the linker placed, not heap memory.
func staticType(t string) bool {
	p := unsafe.StringData(t)
	for _, s := range &handlev.InternedTypes {
		if p == unsafe.StringData(s) {
			return true
		}
	}
	return false
}

// span is the address range a record's strings and slices cover.
type span struct {
	lo, hi uintptr
	sum    int64
}

func (s *span) covers(str string) bool {
	a := uintptr(unsafe.Pointer(unsafe.StringData(str)))
	return a >= s.lo && a+uintptr(len(str)) <= s.hi
}

func (s *span) addString(str string) { s.add(unsafe.StringData(str), len(str)) }

func (s *span) add(p *byte, n int) {
	if n == 0 || p == nil {
		return
	}
	a := uintptr(unsafe.Pointer(p))
	if s.lo == 0 || a < s.lo {
		s.lo = a
	}
	if a+uintptr(n) > s.hi {
		s.hi = a + uintptr(n)
	}
	s.sum += int64(n)
}
