package cache

// The admission rule (TinyLFU's doorkeeper, as ristretto and Caffeine put
// in front of their caches): while a shard has room, every loaded entry is
// added; once it is full, adding one means evicting another, and a key is
// added only if it was missed before within the shard's recent misses. A key
// missed once, as nearly every key is under uniform traffic over many more
// identifiers than the cache holds, is answered from an entry built for its
// callers and then dropped: no LRU insertion, no eviction, and the entries
// that are being reused stay.
//
// The doorkeeper is a Bloom filter of the keys missed since its last reset,
// two bits a key from the key's hash. It is reset (emptied, and resized to
// the shard's entries) after as many additions as a window: twice the
// entries the shard holds, so that a key must come back before the shard
// has seen twice its size in other one-off misses. It belongs to the shard
// and is guarded by the shard's mutex.
type doorkeeper struct {
	bits  []uint64
	mask  uint64 // len(bits)*64 - 1
	added int    // keys added since the reset
	limit int    // additions before the next reset
}

const (
	// minWindow is the smallest window, for a shard that holds few entries.
	minWindow = 64
	// dkBitsPerKey: 16 bits a key with two bit positions keep the chance that
	// a key never missed before passes for a second miss under 1.5 %, at 2 to
	// 4 bytes for each entry the shard holds.
	dkBitsPerKey = 16
)

// reset empties the filter and sizes it for a window of twice held keys.
func (d *doorkeeper) reset(held int) {
	window := max(2*held, minWindow)
	nbits := 64
	for nbits < dkBitsPerKey*window {
		nbits *= 2
	}
	if len(d.bits) == nbits/64 {
		clear(d.bits)
	} else {
		d.bits = make([]uint64, nbits/64)
	}
	d.mask = uint64(nbits - 1)
	d.added, d.limit = 0, window
}

// positions derives the filter's two bit positions from a key's hash. The
// low bits chose the shard, so they are left out.
func (d *doorkeeper) positions(h uint64) (uint64, uint64) {
	return (h >> 20) & d.mask, ((h >> 40) ^ (h * 0x9e3779b97f4a7c15 >> 24)) & d.mask
}

// admit reports whether the key with hash h was added since the last
// reset; if not, it adds it (resetting the filter first when the window is
// over) and reports false. held is the shard's entry count, for the size of
// the next window.
func (d *doorkeeper) admit(h uint64, held int) bool {
	if d.bits == nil {
		d.reset(held)
	}
	a, b := d.positions(h)
	if d.bits[a/64]&(1<<(a%64)) != 0 && d.bits[b/64]&(1<<(b%64)) != 0 {
		return true
	}
	if d.added >= d.limit {
		d.reset(held)
		a, b = d.positions(h)
	}
	d.bits[a/64] |= 1 << (a % 64)
	d.bits[b/64] |= 1 << (b % 64)
	d.added++
	return false
}

// bytes is the heap the filter's bits occupy.
func (d *doorkeeper) bytes() int64 { return AllocSize(8 * cap(d.bits)) }
