package stats

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// CountSource hands over resolution counts accumulated in memory since the
// last call (cache.Counter satisfies it; the resolvers count into it on their
// hot path, and Service.Flush writes the counts to the store in batches).
type CountSource interface {
	// DrainPart calls fn with the counts of part i of parts (0 <= i < parts)
	// and resets them; draining each part once is one drain of everything.
	// A key may come more than once (its counts add up); fn must not keep
	// key after it returns.
	DrainPart(i, parts int, fn func(key string, n uint64))
}

// Resolution statistics in store.BucketStats, by UTC day, counts as uint64
// big-endian:
//
//	'i' <record storage key> 0x00 <YYYYMMDD>     resolutions of one identifier
//	'n' <namespace key prefix> 0x00 <YYYYMMDD>   resolutions in a namespace
//
// so one identifier's or namespace's days are one key range. Counts reach the
// bucket at each flush (Service.Flush) and are attributed to the day of the
// flush. Only identifiers of SNAA namespaces (full form, production or test
// prefix) are counted: those are the ones the stats routes can show.
//
// The entry of a key is its kind and record key or namespace key prefix
// (StatsEntry); cluster mode publishes the counts by entry and day
// (SplitStatsKey). These functions are the format's one encoder and decoder.
const (
	statsID     = 'i'
	statsNS     = 'n'
	statsDayLen = len("YYYYMMDD")
)

// StatsEntry returns the entry of the statistics keys of the identifier
// stored under key (namespace false) or of the namespace with key prefix key
// (namespace true): the part every one of its days' keys begins with.
func StatsEntry(namespace bool, key string) []byte {
	return appendStatsEntry(make([]byte, 0, 1+len(key)), namespace, key)
}

// appendStatsEntry appends the entry of key's statistics keys to dst.
func appendStatsEntry[T ~string | ~[]byte](dst []byte, namespace bool, key T) []byte {
	kind := byte(statsID)
	if namespace {
		kind = statsNS
	}
	return append(append(dst, kind), key...)
}

// appendStatsDay completes the key of an entry appended to dst with day
// (YYYYMMDD; "" for the prefix of every day's key).
func appendStatsDay(dst []byte, day string) []byte {
	return append(append(dst, 0), day...)
}

// statsKey is the key of the count on day of key's entry (see StatsEntry).
func statsKey[T ~string | ~[]byte](namespace bool, key T, day string) []byte {
	return appendStatsDay(appendStatsEntry(make([]byte, 0, 2+len(key)+len(day)), namespace, key), day)
}

// SplitStatsKey splits a statistics key into its entry and day (YYYYMMDD,
// aliasing k); ok is false for a key of another form.
func SplitStatsKey(k []byte) (entry, day []byte, ok bool) {
	if len(k) < 2+statsDayLen || k[len(k)-statsDayLen-1] != 0 {
		return nil, nil, false
	}
	return k[:len(k)-statsDayLen-1], k[len(k)-statsDayLen:], true
}

// NamespaceEntry reports whether entry (of StatsEntry or SplitStatsKey)
// counts a namespace's resolutions rather than an identifier's.
func NamespaceEntry(entry []byte) bool { return len(entry) > 0 && entry[0] == statsNS }

// A flush is a series of short steps rather than one long one. With
// GOMAXPROCS 1 a goroutine that keeps the processor busy delays every
// resolution: the resolvers' connections are polled only when the processor
// has nothing else to run (or every 10 ms by the runtime's monitor), so a
// single transaction of tens of thousands of Puts (Put, then a spill of every
// touched page at commit) would hold the resolvers back for hundreds of
// milliseconds. So the flush drains the counter in parts, sorts in runs, and
// writes in transactions of at most statsChunk keys (more only when a flush
// would otherwise take more than statsMaxTx transactions), and after each
// step rests statsRest times as long as the step took (statsPacer), so that
// it takes at most a quarter of the processor while it runs. Resting must be
// a sleep of that length: a goroutine woken by a timer or a channel send runs
// before the resolvers already waiting, and so does the batch goroutine of the
// next commit (its timer starts it), and a commit's fsync keeps the processor
// until the runtime's monitor hands it over (up to 10–20 ms).
// In key order each transaction touches its own few leaf pages, so a page is
// still written once per flush. The sizes weigh CPU bursts against the number
// of commits (fsyncs, and a commit's own CPU): on a node pinned to one CPU a
// commit's burst runs beside the resolvers only in the kernel's time slices
// (a second processor is held while it is in flight, internal/procfloor), so
// it shows in the resolvers' tail latency. Smaller transactions cost a little
// more CPU in all and make much shorter steps; BenchmarkStatsFlush reports
// both (cpu-ms/op and max-step-µs).
const (
	statsChunk   = 256
	statsMaxTx   = 128
	statsParts   = 16   // counter drained in this many parts
	statsSortRun = 2048 // keys sorted at a time before merging
	statsRest    = 3
	statsMaxRest = 100 * time.Millisecond
)

// statsPacer spaces a flush's steps (see statsRest).
type statsPacer struct{ since time.Time }

func newStatsPacer() *statsPacer { return &statsPacer{since: time.Now()} }

// statsStepSeen, if set (BenchmarkStatsFlush), is given the length of each
// step a pacer ends.
var statsStepSeen func(time.Duration)

// rest sleeps statsRest times as long as it has been since the last rest.
func (p *statsPacer) rest() {
	step := time.Since(p.since)
	if statsStepSeen != nil {
		statsStepSeen(step)
	}
	time.Sleep(min(statsRest*step, statsMaxRest))
	p.since = time.Now()
}

// statsEnt is one statistics key to add to: the key is statsBuf.keys[off:end].
type statsEnt struct {
	off, end uint32
	n        uint64
}

// statsBuf holds a flush's keys and values, kept for the next flush so that
// a flush allocates little (its garbage is what sets off GC cycles, and a GC
// cycle marks the whole warm cache on the resolvers' processor).
type statsBuf struct {
	keys []byte     // arena of statistics keys
	ents []statsEnt // keys to add to, sorted before writing
	tmp  []statsEnt // merge buffer
	vals []byte     // 8 bytes per ent; bbolt keeps Put's value until commit
	ns   map[string]int
	nse  []statsEnt // per namespace: off/end locate its key prefix in keys
}

// statsBufs keeps one statsBuf between flushes (flushes are rarely concurrent:
// Service.Run, and a last Flush at shutdown).
var statsBufs struct {
	sync.Mutex
	free *statsBuf
}

func getStatsBuf() *statsBuf {
	statsBufs.Lock()
	defer statsBufs.Unlock()
	if b := statsBufs.free; b != nil {
		statsBufs.free = nil
		return b
	}
	return &statsBuf{ns: map[string]int{}}
}

func putStatsBuf(b *statsBuf) {
	b.keys, b.ents, b.tmp, b.vals, b.nse = b.keys[:0], b.ents[:0], b.tmp[:0], b.vals[:0], b.nse[:0]
	clear(b.ns)
	statsBufs.Lock()
	statsBufs.free = b
	statsBufs.Unlock()
}

// collect drains counts into b: one 'i' key per identifier of an SNAA
// namespace and one 'n' key per namespace, sorted.
func (b *statsBuf) collect(counts CountSource, namer *handlev.Namer, day string, p *statsPacer) {
	add := func(k string, n uint64) {
		off := len(b.keys)
		b.keys = appendStatsEntry(b.keys, false, k)
		nsp := namer.NamespaceOf(b.keys[len(b.keys)-len(k):])
		if nsp == nil {
			b.keys = b.keys[:off]
			return
		}
		i, ok := b.ns[string(nsp)]
		if !ok {
			i = len(b.nse)
			b.ns[string(nsp)] = i
			nso := len(b.keys) - len(k)
			b.nse = append(b.nse, statsEnt{off: uint32(nso), end: uint32(nso + len(nsp))})
		}
		b.nse[i].n += n
		b.keys = appendStatsDay(b.keys, day)
		b.ents = append(b.ents, statsEnt{off: uint32(off), end: uint32(len(b.keys)), n: n})
	}
	for i := range statsParts {
		before := len(b.ents)
		counts.DrainPart(i, statsParts, add)
		if len(b.ents)-before > statsSortRun/2 {
			p.rest()
		}
	}
	for _, e := range b.nse {
		off := len(b.keys)
		b.keys = appendStatsEntry(b.keys, true, b.keys[e.off:e.end])
		b.keys = appendStatsDay(b.keys, day)
		b.ents = append(b.ents, statsEnt{off: uint32(off), end: uint32(len(b.keys)), n: e.n})
	}
	b.sort(p)
	// A key the counter handed over more than once (cache.Counter.CountOnce)
	// becomes one entry with the sum, so that it is written and published
	// once.
	j := 0
	for _, e := range b.ents {
		if j > 0 && b.cmp(b.ents[j-1], e) == 0 {
			b.ents[j-1].n += e.n
			continue
		}
		b.ents[j] = e
		j++
	}
	b.ents = b.ents[:j]
	b.vals = slices.Grow(b.vals[:0], 8*len(b.ents))[:8*len(b.ents)]
}

func (b *statsBuf) cmp(x, y statsEnt) int {
	return bytes.Compare(b.keys[x.off:x.end], b.keys[y.off:y.end])
}

// sort sorts b.ents by key: runs of statsSortRun, then merges of pairs of
// runs, resting between steps.
func (b *statsBuf) sort(p *statsPacer) {
	n := len(b.ents)
	if n <= statsSortRun {
		slices.SortFunc(b.ents, b.cmp)
		return
	}
	for lo := 0; lo < n; lo += statsSortRun {
		slices.SortFunc(b.ents[lo:min(lo+statsSortRun, n)], b.cmp)
		p.rest()
	}
	src, dst := b.ents, slices.Grow(b.tmp[:0], n)[:n]
	for width := statsSortRun; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			for i, j, k := lo, mid, lo; k < hi; k++ {
				if j == hi || (i < mid && b.cmp(src[i], src[j]) <= 0) {
					dst[k] = src[i]
					i++
				} else {
					dst[k] = src[j]
					j++
				}
				if (k-lo+1)%statsSortRun == 0 {
					p.rest()
				}
			}
		}
		src, dst = dst, src
	}
	b.ents, b.tmp = src, dst
}

// write adds ents[lo:hi] to their keys in one transaction.
func (b *statsBuf) write(db *store.DB, lo, hi int) error {
	return db.Update(func(tx *store.Tx) error {
		bk := tx.Bolt().Bucket(store.BucketStats)
		c := bk.Cursor()
		for i := lo; i < hi; i++ {
			e := b.ents[i]
			k := b.keys[e.off:e.end]
			n := e.n
			if ck, v := c.Seek(k); len(v) == 8 && bytes.Equal(ck, k) {
				n += binary.BigEndian.Uint64(v)
			}
			// Update may run this function again (store.Update): the value
			// slot is the ent's own, so a rerun overwrites it.
			v := b.vals[8*i : 8*i+8 : 8*i+8]
			binary.BigEndian.PutUint64(v, n)
			if err := bk.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// flush writes the counts accumulated in counts since the last flush,
// attributed to today (UTC), in key order, in a series of short transactions
// (see statsChunk), and tells published (if set) the keys written and their
// new totals. If one of them fails, the others are still written and the
// first error is returned. wrote reports whether there was anything to write.
func flush(db *store.DB, namer *handlev.Namer, today time.Time, counts CountSource, published func(keys [][]byte, totals []uint64)) (wrote bool, err error) {
	b := getStatsBuf()
	defer putStatsBuf(b)
	p := newStatsPacer()
	b.collect(counts, namer, today.UTC().Format("20060102"), p)
	if len(b.ents) == 0 {
		return false, nil
	}
	chunk := max(statsChunk, (len(b.ents)+statsMaxTx-1)/statsMaxTx)
	var first error
	var keys [][]byte
	var totals []uint64
	for lo := 0; lo < len(b.ents); lo += chunk {
		p.rest()
		hi := min(lo+chunk, len(b.ents))
		if err := b.write(db, lo, hi); err != nil {
			if first == nil {
				first = err
			}
		} else if published != nil {
			for i := lo; i < hi; i++ {
				e := b.ents[i]
				keys = append(keys, b.keys[e.off:e.end])
				totals = append(totals, binary.BigEndian.Uint64(b.vals[8*i:]))
			}
		}
	}
	if len(keys) > 0 {
		published(keys, totals)
	}
	return true, first
}

// days calls fn for each UTC day from from to to (inclusive) with
// resolutions of the identifier stored under key (namespace false) or of the
// namespace whose key prefix is key (namespace true), in date order; date is
// YYYY-MM-DD.
func days(tx *store.Tx, namespace bool, key string, from, to time.Time, fn func(date string, n uint64)) {
	entry := StatsEntry(namespace, key)
	lo := statsKey(namespace, key, from.Format("20060102"))
	hi := statsKey(namespace, key, to.Format("20060102"))
	c := tx.Bolt().Bucket(store.BucketStats).Cursor()
	for k, v := c.Seek(lo); k != nil && bytes.Compare(k, hi) <= 0 && len(v) == 8; k, v = c.Next() {
		e, d, ok := SplitStatsKey(k)
		if !ok || !bytes.Equal(e, entry) {
			continue
		}
		fn(string(d[:4])+"-"+string(d[4:6])+"-"+string(d[6:]), binary.BigEndian.Uint64(v))
	}
}

// Retention of per-identifier counts (docs/product.md §10 Statistics): the
// 'i' keys of days before a cut-off are deleted; the 'n' keys are small (one
// per namespace and day) and kept. The bucket is ordered by record key first,
// so the expired days are found by a scan of every 'i' key. expire scans
// in read transactions of at most statsScanKeys keys and deletes in write
// transactions of at most statsExpireBatch keys, through store.Update as a
// flush writes (so resolvers and writers wait for no long transaction), and
// rests between steps as a flush does (statsPacer): it takes about a quarter
// of a processor while it runs. BenchmarkStatsExpire measures it at 1,000,000
// keys (docs/product.md §10 has the figures).
const (
	statsScanKeys    = 1 << 16
	statsExpireBatch = 8192
)

// expire deletes the per-identifier counts of days before from (UTC)
// from the stats bucket, and returns how many it deleted. It stops early,
// with ctx's error, when ctx ends; what it deleted by then stays deleted.
func expire(ctx context.Context, db *store.DB, from time.Time) (deleted int, err error) {
	cut := []byte(from.UTC().Format("20060102"))
	p := newStatsPacer()
	next := StatsEntry(false, "")
	var batch [][]byte
	for next != nil {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		p.rest()
		batch = batch[:0]
		err := db.View(func(tx *store.Tx) error {
			c := tx.Bolt().Bucket(store.BucketStats).Cursor()
			k, _ := c.Seek(next)
			next = nil
			for n := 0; k != nil && k[0] == statsID; k, _ = c.Next() {
				if n == statsScanKeys || len(batch) == statsExpireBatch {
					next = bytes.Clone(k)
					return nil
				}
				n++
				if _, day, ok := SplitStatsKey(k); ok && bytes.Compare(day, cut) < 0 {
					batch = append(batch, bytes.Clone(k))
				}
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
		if len(batch) == 0 {
			continue
		}
		p.rest()
		err = db.Update(func(tx *store.Tx) error {
			b := tx.Bolt().Bucket(store.BucketStats)
			for _, k := range batch {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
		deleted += len(batch)
	}
	return deleted, nil
}
