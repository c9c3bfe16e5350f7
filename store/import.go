package store

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
)

// importRec is one parsed import line on its way from a decode worker to the
// sorter.
type importRec struct {
	line   int    // 1-based input line
	handle string // display handle, for key
	// val is the record's stored encoding (appendStored) with version and times
	// still zero; mergeRecords fills them in. It points into the
	// batch's arena and is not modified by anything else.
	val []byte
	// rec holds the decoded values only when checkStorable refused the record
	// (val is nil then), so that Import can report the exact reason.
	rec handlev.Record
}

// sortedRec is one record of the sorted stream Import writes.
type sortedRec struct {
	key  []byte
	val  []byte
	line int
}

// importRunBytes bounds the records Import holds in memory (keys and encoded
// values); beyond it, sorted runs go to a temporary file and are merged.
// Writing and reading back runs is a sizeable share of an import's CPU, so the
// bound is set for an import of a million records to stay in memory, at the
// cost of a process peak of about twice the records held. A variable so that
// tests can make it small.
var importRunBytes = 2 << 30

// Import reads JSON Lines, one Handle JSON record per line ({"handle":…,
// "values":[…]}, "responseCode" optional; see handlev.DecodeRecordJSON), and
// stores each under key(handle). Blank lines are skipped; lines may end in \r\n
// and be up to MaxImportLine bytes long.
//
// Values are stored exactly as read: order, indexes, timestamps, TTLs. A record
// whose key already exists is replaced: its Created time is kept and its Version
// bumped; a new record gets Version 1 and Created = Updated = the time Import
// started writing. Repeated handles within the input replace each other in
// order (each one bumps the Version).
//
// Import is all or nothing. It validates the whole input before it writes
// anything: every line is decoded, keyed and checked as PutRecord would check
// it, and the records are sorted by key (repeated keys in input order), in
// memory up to importRunBytes and beyond that in sorted runs in an unlinked
// temporary file next to the database, merged afterwards. A bad line stops the
// import with an *ImportError naming it. Then it writes a new database into a
// fresh file beside the open one (importFile): the stored records merged with
// the imported ones in key order, written straight in bbolt's page format with
// full pages (pageWriter), and every other bucket copied. That file is not synced while it is
// written; once complete it must pass bbolt's consistency check, and it is
// synced and renamed over the database (Replace). Any error, and a crash or
// kill at any point before the rename, leaves the database as it was: n is
// then 0. The cost of the copy grows with the database, not with the input.
//
// Import must be the database's only writer while it runs: a write committed
// to the open file after Import began is lost when the new file replaces it.
// Readers may go on; see Replace.
//
// JSON decoding and record encoding, the costly parts of validation, run on
// GOMAXPROCS goroutines; while writing, the merge and the page building run on
// the calling goroutine and the file writes on another. key is called from the
// calling goroutine, in input order, so it need not be safe for concurrent
// use. r is not read after Import returns: on an error Import first waits for
// a Read in progress to return.
func (db *DB) Import(r io.Reader, key func(handle string) (string, error)) (int, error) {
	s := &importSort{dir: filepath.Dir(db.Path()), runBytes: importRunBytes, recycle: true}
	defer s.close()
	start := time.Now()
	lines, err := s.feedAll(r, key)
	if err != nil {
		return 0, err
	}
	src, err := s.sorted()
	if err != nil {
		return 0, err
	}
	db.log.Debug("store import checked and sorted", "lines", lines, "spilled runs", len(s.runs), "elapsed", time.Since(start))
	n, err := db.writeImport(src, s.total, s.close)
	if err != nil {
		return 0, err
	}
	db.log.Info("store import done", "records", n, "lines", lines, "spilled runs", len(s.runs), "elapsed", time.Since(start))
	return n, nil
}

// importSort collects the keyed records in runs sorted by (key, line).
type importSort struct {
	dir      string
	runBytes int
	// recycle says the records of the merge need not outlive the merge's
	// next steps (see fileRun): Import's do not, RebuildDerived's do.
	recycle bool

	run      []sortedRec // the run in memory
	bytes    int         // its size, as counted against runBytes
	total    int64       // keys and values of every record added
	keyArena []byte      // the run's keys, back to back
	lcp      int         // length of the prefix all keys of the run share
	order    []sortKey   // sortRun's scratch
	spare    []sortedRec // sortRun's scratch

	tmp  *os.File   // sorted runs spilled so far, one after another
	runs [][2]int64 // their offsets in tmp: [start, end)
	off  int64
}

// feedAll reads and decodes r and keys the records in input order. It returns
// the number of input lines read and the first error of the input (decoding,
// key, a record PutRecord would refuse, reading r) or of the temporary file.
func (s *importSort) feedAll(r io.Reader, key func(handle string) (string, error)) (lines int, err error) {
	p := startImportParse(r)
	defer p.stop() // on every return: stop reading r and wait for the goroutines
	for b := range p.order {
		<-b.done
		for i := range b.recs {
			ir := &b.recs[i]
			k, err := key(ir.handle)
			if err == nil && k == "" {
				err = ErrEmptyKey
			}
			if err != nil {
				return lines, &ImportError{Line: ir.line, Err: fmt.Errorf("handle %q: %w", ir.handle, err)}
			}
			if ir.val == nil || len(k) > handlev.MaxHandleLen {
				// Refused by the worker, or a key too long: the error PutRecord gives.
				ir.rec.Handle = ir.handle
				if err := checkStorable(k, &Stored{Record: ir.rec}); err != nil {
					return lines, &ImportError{Line: ir.line, Err: err}
				}
			}
			if err := s.add(k, ir.val, ir.line); err != nil {
				return lines, err
			}
		}
		p.recycle(b)
		if b.err != nil {
			return lines, b.err
		}
		lines = b.lastLine
	}
	return lines, nil
}

// sortedRecOverhead is what one record costs in a run beyond its key and value.
const sortedRecOverhead = 64

func (s *importSort) add(k string, val []byte, line int) error {
	if cap(s.keyArena)-len(s.keyArena) < len(k) {
		s.keyArena = make([]byte, 0, max(len(k), 64<<10))
	}
	off := len(s.keyArena)
	s.keyArena = append(s.keyArena, k...)
	key := s.keyArena[off:len(s.keyArena):len(s.keyArena)]
	if len(s.run) == 0 {
		s.lcp = len(key)
	} else {
		s.lcp = commonPrefix(s.run[0].key[:s.lcp], key)
	}
	s.run = append(s.run, sortedRec{key: key, val: val, line: line})
	s.bytes += len(k) + len(val) + sortedRecOverhead
	s.total += int64(len(k) + len(val))
	if s.bytes >= s.runBytes {
		return s.spill()
	}
	return nil
}

func cmpSortedRec(a, b sortedRec) int {
	// Lines are unique: sorting by (key, line) is the stable sort by key, and
	// pdqsort is several times faster than SortStableFunc's merging.
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return a.line - b.line
}

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// sortKey is a run record while sortRun sorts: the eight bytes of its key after
// the prefix all keys share (zero-padded, big-endian), and its place in the run.
type sortKey struct {
	pfx uint64
	i   int32
}

// sortRun sorts the run in memory by (key, line). Keys share long prefixes
// (prefix/namespace/): sorting 16-byte entries on the eight bytes that follow
// the shared prefix, and comparing whole keys only on ties, is several times
// cheaper than comparing whole keys and moving whole records.
func (s *importSort) sortRun() {
	run := s.run
	if len(run) < 2 {
		return
	}
	order := s.order[:0]
	if cap(order) < len(run) {
		order = make([]sortKey, 0, len(run))
	}
	for i := range run {
		var b [8]byte
		copy(b[:], run[i].key[s.lcp:])
		order = append(order, sortKey{pfx: binary.BigEndian.Uint64(b[:]), i: int32(i)})
	}
	skip := s.lcp + 8
	slices.SortFunc(order, func(a, b sortKey) int {
		if a.pfx != b.pfx {
			if a.pfx < b.pfx {
				return -1
			}
			return 1
		}
		ra, rb := &run[a.i], &run[b.i]
		if c := bytes.Compare(ra.key[min(skip, len(ra.key)):], rb.key[min(skip, len(rb.key)):]); c != 0 {
			return c
		}
		// Equal padded prefixes and equal tails: the shorter key, when one
		// ends inside the eight bytes, is the smaller.
		if c := len(ra.key) - len(rb.key); c != 0 {
			return c
		}
		return ra.line - rb.line
	})
	sorted := s.spare[:0]
	if cap(sorted) < len(run) {
		sorted = make([]sortedRec, 0, len(run))
	}
	for _, o := range order {
		sorted = append(sorted, run[o.i])
	}
	clear(run)
	s.run, s.spare, s.order = sorted, run[:0], order[:0]
}

// spill sorts the run in memory and appends it to the temporary file.
func (s *importSort) spill() error {
	s.sortRun()
	if s.tmp == nil {
		f, err := os.CreateTemp(s.dir, ".pidnode-import-*.tmp")
		if err != nil {
			return fmt.Errorf("store: import: temporary file: %w", err)
		}
		s.tmp = f
		// Unlinked at once where the system allows it (POSIX): nothing is
		// left behind, whatever happens to the process. close removes it
		// otherwise.
		os.Remove(f.Name())
	}
	bw := bufio.NewWriterSize(io.NewOffsetWriter(s.tmp, s.off), 1<<20)
	var hdr [3 * binary.MaxVarintLen64]byte
	n := int64(0)
	for i := range s.run {
		r := &s.run[i]
		h := binary.AppendUvarint(hdr[:0], uint64(r.line))
		h = binary.AppendUvarint(h, uint64(len(r.key)))
		h = binary.AppendUvarint(h, uint64(len(r.val)))
		bw.Write(h)
		bw.Write(r.key)
		bw.Write(r.val)
		n += int64(len(h) + len(r.key) + len(r.val))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("store: import: writing temporary file: %w", err)
	}
	s.runs = append(s.runs, [2]int64{s.off, s.off + n})
	s.off += n
	clear(s.run) // drop the references to the values and keys
	s.run, s.bytes, s.keyArena = s.run[:0], 0, nil
	return nil
}

// close removes the temporary file and lets go of the runs' memory. It may
// be called more than once.
func (s *importSort) close() {
	if s.tmp != nil {
		s.tmp.Close()
		os.Remove(s.tmp.Name()) // already gone where unlinking open files works
		s.tmp = nil
	}
	s.run, s.spare, s.order, s.keyArena = nil, nil, nil, nil
}

// sortedSource yields records in (key, line) order. It does not modify the
// records it returns; they stay valid for as long as its user needs them,
// unless importSort.recycle was set (see fileRun).
type sortedSource interface {
	next() (sortedRec, bool, error)
}

// sorted returns every record added, in (key, line) order.
func (s *importSort) sorted() (sortedSource, error) {
	s.sortRun()
	mem := &memRun{recs: s.run}
	if len(s.runs) == 0 {
		return mem, nil
	}
	m := &runMerge{}
	for _, r := range s.runs {
		c := &fileRun{r: bufio.NewReaderSize(io.NewSectionReader(s.tmp, r[0], r[1]-r[0]), 64<<10)}
		if s.recycle {
			c.bufs = make([][]byte, fileRunBufs)
		}
		if err := m.push(c); err != nil {
			return nil, err
		}
	}
	if err := m.push(mem); err != nil {
		return nil, err
	}
	return m, nil
}

// memRun is a sorted run in memory.
type memRun struct {
	recs []sortedRec
	i    int
}

func (m *memRun) next() (sortedRec, bool, error) {
	if m.i >= len(m.recs) {
		return sortedRec{}, false, nil
	}
	r := m.recs[m.i]
	m.recs[m.i] = sortedRec{} // written once handed over
	m.i++
	return r, true, nil
}

// fileRun reads one spilled run.
//
// Without bufs, records are read into arena blocks that are only appended
// to, never reused, and every record stays valid: RebuildDerived hands them
// to bbolt's Put, which keeps them until its transaction commits.
//
// With bufs (importSort.recycle), each record is read into the next of the
// fileRunBufs buffers in turn, so it stays valid only until the run has
// returned fileRunBufs-1 more. Import's merge needs two: runMerge reads a
// run's next record ahead while mergeRecords still holds the one before the
// record it was handed, and pageWriter.add copies what it is given. Spilled
// runs are most of a large import, and reading them into buffers that are
// used again spares a page fault on fresh memory for every page of them.
type fileRun struct {
	r     *bufio.Reader
	arena []byte
	bufs  [][]byte
	n     int // records read
}

// fileRunBufs is how many buffers a recycling fileRun reads into in turn.
const fileRunBufs = 4

func (f *fileRun) next() (sortedRec, bool, error) {
	line, err := binary.ReadUvarint(f.r)
	if err == io.EOF {
		return sortedRec{}, false, nil
	}
	var kl, vl uint64
	if err == nil {
		kl, err = binary.ReadUvarint(f.r)
	}
	if err == nil {
		vl, err = binary.ReadUvarint(f.r)
	}
	if err == nil && kl+vl > 1<<31 {
		err = errors.New("corrupt run")
	}
	if err != nil {
		return sortedRec{}, false, fmt.Errorf("store: import: reading temporary file: %w", err)
	}
	n := int(kl + vl)
	var a []byte
	off := 0
	if f.bufs != nil {
		b := &f.bufs[f.n%len(f.bufs)]
		if cap(*b) < n {
			*b = make([]byte, n)
		}
		a = (*b)[:n]
	} else {
		a = f.arena
		if cap(a)-len(a) < n {
			a = make([]byte, 0, max(n, 4<<20))
		}
		off = len(a)
		a = a[:off+n]
		f.arena = a
	}
	f.n++
	if _, err := io.ReadFull(f.r, a[off:]); err != nil {
		return sortedRec{}, false, fmt.Errorf("store: import: reading temporary file: %w", err)
	}
	k := off + int(kl)
	return sortedRec{key: a[off:k:k], val: a[k : off+n : off+n], line: int(line)}, true, nil
}

// runMerge merges sorted runs.
type runMerge struct {
	h mergeHeap
}

type mergeCursor struct {
	src sortedSource
	cur sortedRec
}

type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return cmpSortedRec(h[i].cur, h[j].cur) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeCursor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

func (m *runMerge) push(src sortedSource) error {
	c := &mergeCursor{src: src}
	r, ok, err := src.next()
	if err != nil || !ok {
		return err
	}
	c.cur = r
	heap.Push(&m.h, c)
	return nil
}

func (m *runMerge) next() (sortedRec, bool, error) {
	if len(m.h) == 0 {
		return sortedRec{}, false, nil
	}
	c := m.h[0]
	r := c.cur
	next, ok, err := c.src.next()
	if err != nil {
		return sortedRec{}, false, err
	}
	if ok {
		c.cur = next
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	return r, true, nil
}

// Import parsing pipeline: one goroutine reads lines into batches, workers decode
// batches in parallel, and Import consumes the batches in input order from
// p.order, waiting on each batch's done channel.
const (
	parseBatchLines = 256
	parseBatchBytes = 1 << 20
	// parseArenaBytes is the size of the blocks a batch encodes its records into.
	parseArenaBytes = 256 << 10
)

type parseBatch struct {
	buf      []byte // the batch's lines, back to back
	ends     []int  // end offset of each line in buf
	lineNos  []int
	lastLine int // number of the last input line read into this batch (blank lines included)

	recs []importRec // decoded records, in order, up to the first error
	err  error       // *ImportError of the first bad line (decode or read error)
	done chan struct{}
}

type importParse struct {
	order chan *parseBatch
	quit  chan struct{}
	free  chan []byte // line buffers of decoded batches, for the reader to reuse
	wg    sync.WaitGroup
}

func startImportParse(r io.Reader) *importParse {
	workers := max(runtime.GOMAXPROCS(0), 1)
	p := &importParse{
		order: make(chan *parseBatch, 8*workers),
		quit:  make(chan struct{}),
		free:  make(chan []byte, 16*workers+2), // every batch that can be in flight
	}
	jobs := make(chan *parseBatch, 8*workers)
	p.wg.Add(1 + workers)
	go func() {
		defer p.wg.Done()
		defer close(jobs)
		defer close(p.order)
		p.read(r, jobs)
	}()
	for range workers {
		go func() {
			defer p.wg.Done()
			for b := range jobs {
				b.decode()
				// Nothing decoded points into the lines (see decode).
				select {
				case p.free <- b.buf[:0]:
				default:
				}
				b.buf = nil
				close(b.done)
			}
		}()
	}
	return p
}

// recycle lets go of a batch Import has consumed.
func (p *importParse) recycle(b *parseBatch) { b.recs = nil }

// stop makes the reader stop and waits until no goroutine touches r any more.
func (p *importParse) stop() {
	close(p.quit)
	for b := range p.order { // unblock the reader; let workers finish what they hold
		_ = b
	}
	p.wg.Wait()
}

// read splits r into batches and hands each to the workers and to Import.
func (p *importParse) read(r io.Reader, jobs chan<- *parseBatch) {
	br := bufio.NewReaderSize(r, 256<<10)
	lineNo := 0
	newBatch := func() *parseBatch {
		b := &parseBatch{done: make(chan struct{})}
		select {
		case b.buf = <-p.free:
		default:
			b.buf = make([]byte, 0, parseBatchBytes+64<<10)
		}
		return b
	}
	b := newBatch()
	send := func(toWorkers bool) bool {
		if toWorkers {
			select {
			case jobs <- b:
			case <-p.quit:
				return false
			}
		} else {
			close(b.done)
		}
		select {
		case p.order <- b:
		case <-p.quit:
			return false
		}
		b = newBatch()
		return true
	}
	for {
		start := len(b.buf)
		var err error
		b.buf, err = readLine(br, b.buf)
		line := b.buf[start:]
		if err == io.EOF && len(line) == 0 {
			break
		}
		lineNo++
		b.lastLine = lineNo
		if err != nil && err != io.EOF {
			// A read error ends the input: the lines before it are decoded first,
			// then Import meets the error in order.
			b.buf = b.buf[:start]
			if len(b.ends) > 0 && !send(true) {
				return
			}
			b.err = &ImportError{Line: lineNo, Err: err}
			send(false)
			return
		}
		// The line stays where readLine put it, trimmed in place.
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && &trimmed[0] != &line[0] { // leading space
			copy(line, trimmed)
		}
		b.buf = b.buf[:start+len(trimmed)]
		if len(trimmed) == 0 {
			continue
		}
		b.ends = append(b.ends, len(b.buf))
		b.lineNos = append(b.lineNos, lineNo)
		if len(b.ends) >= parseBatchLines || len(b.buf) >= parseBatchBytes {
			if !send(true) {
				return
			}
		}
	}
	if len(b.ends) > 0 {
		send(true)
	}
}

// decode decodes and encodes the batch's lines until the first error. The
// decoded values are dropped once encoded: a run waiting to be written holds
// only the encodings, a few large allocations instead of many small ones.
// Nothing it keeps points into b.buf.
func (b *parseBatch) decode() {
	b.recs = make([]importRec, 0, len(b.ends))
	var (
		arena   []byte
		derived []byte                // the line's derived part, reused
		dec     handlev.RecordDecoder // values valid until the next line's
	)
	start := 0
	for i, end := range b.ends {
		line := b.buf[start:end]
		start = end
		handle, values, err := dec.Decode(line)
		if err == nil && handle == "" {
			err = ErrEmptyKey
		}
		if err != nil {
			b.err = &ImportError{Line: b.lineNos[i], Err: err}
			break
		}
		ir := importRec{line: b.lineNos[i], handle: handle}
		s := Stored{Record: handlev.Record{Handle: handle, Values: values}}
		if checkStorable("", &s) != nil {
			ir.rec.Values = cloneValues(values) // Import reports it with the key
		} else {
			derived = handlev.AppendDerived(derived[:0], values)
			size := plainSize(&s) + 4 + len(derived)
			if cap(arena)-len(arena) < size {
				arena = make([]byte, 0, max(size, parseArenaBytes))
			}
			off := len(arena)
			arena = appendStoredWith(arena, &s, derived)
			ir.val = arena[off:len(arena):len(arena)]
		}
		b.recs = append(b.recs, ir)
	}
	b.ends, b.lineNos = nil, nil
}

// cloneValues copies vs out of a RecordDecoder's memory.
func cloneValues(vs []handlev.Value) []handlev.Value {
	out := slices.Clone(vs)
	for i := range out {
		out[i].Data = bytes.Clone(out[i].Data)
	}
	return out
}

// importFile is the file beside the database at path that Import writes the
// new database into before renaming it over path. Open removes one that an
// import killed before its rename left behind.
func importFile(path string) string { return path + ".import" }

// writeImport writes the database Import leaves into a fresh file beside the
// open one: its records bucket written straight in bbolt's page format from
// the open file's records merged with src (pageWriter), then every other
// bucket of the open file copied into it through bbolt. The fresh file is
// written without a sync; once complete it passes bbolt's consistency check,
// is synced, and Replace renames it over the database. On any error before
// the rename the fresh file is removed and the open file has not been written
// to. importBytes is the size of src's keys and values, for sizing the fresh
// file's mapping. consumed is called once src has been read to its end (the
// sorter's memory and temporary file can go). n is the number of records
// taken from src.
func (db *DB) writeImport(src sortedSource, importBytes int64, consumed func()) (n int, err error) {
	path := importFile(db.cfg.Path)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("store: import: %w", err)
	}
	// The old file is read in one transaction, which also keeps the memory of
	// the records copied from it valid until the fresh file is written.
	old, err := db.bolt().Begin(false)
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	defer old.Rollback() // a no-op once rolled back below
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	if n, err = writeRecordPages(path, old.Bucket(BucketRecords), src, db.importFlushBytes); err != nil {
		return 0, err
	}
	consumed()
	// The check below reads every page of the fresh file, best from the
	// page cache: the records' memory, garbage by now, goes back to the
	// system first, so that the cache can keep more of the file.
	debug.FreeOSMemory()
	fresh, err := bbolt.Open(path, 0o600, freshOptions(old.Size()+importBytes))
	if err != nil {
		return 0, fmt.Errorf("store: import: open %s: %w", path, err)
	}
	open := true
	defer func() {
		if open {
			fresh.Close()
		}
	}()
	if err := copyBuckets(fresh, old); err != nil {
		return 0, err
	}
	// One commit with the freelist written, so that Open reads it instead of
	// walking every page of the file.
	if err := fresh.Update(func(*bbolt.Tx) error { fresh.NoFreelistSync = false; return nil }); err != nil {
		return 0, fmt.Errorf("store: import: %w", err)
	}
	db.log.Debug("store import written", "records", n, "file", path)
	// The check reads the pages from memory while the sync waits for the disk.
	syncErr := make(chan error, 1)
	go func() {
		if db.cfg.NoSync {
			syncErr <- nil
			return
		}
		syncErr <- fresh.Sync()
	}()
	cerr := checkFile(fresh)
	serr := <-syncErr
	if cerr != nil {
		return 0, fmt.Errorf("store: import: %s: %w", path, cerr)
	}
	if serr != nil {
		return 0, fmt.Errorf("store: import: sync %s: %w", path, serr)
	}
	open = false
	if err := fresh.Close(); err != nil {
		return 0, fmt.Errorf("store: import: close %s: %w", path, err)
	}
	db.log.Debug("store import checked and synced", "file", path)
	old.Rollback() // Replace waits for the old file's transactions to end
	if err := db.Replace(path); err != nil {
		return 0, err
	}
	return n, nil
}

// writeRecordPages creates the file at path holding only BucketRecords, with
// the records of old (nil if the open file has none) merged with src and old's
// sequence (mergeRecords), written by a pageWriter that flushes every
// flushBytes. It returns the number of records taken from src.
func writeRecordPages(path string, old *bbolt.Bucket, src sortedSource, flushBytes int) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("store: import: %w", err)
	}
	defer f.Close() // for the error returns; closed below otherwise
	w := newPageWriter(f, flushBytes)
	n, err := mergeRecords(w, old, src)
	if err != nil {
		w.stop()
		return 0, err
	}
	var seq uint64
	if old != nil {
		seq = old.Sequence()
	}
	if err := w.finish(seq); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("store: import: close %s: %w", path, err)
	}
	return n, nil
}

// freshOptions are the bbolt options of the file Import writes. Nothing is
// synced while it is written: until it is renamed over the database it is
// nobody's data, and writeImport syncs it once, whole, before the rename.
func freshOptions(size int64) *bbolt.Options {
	opts := &bbolt.Options{
		Timeout:        lockTimeout,
		NoSync:         true,
		NoGrowSync:     true,
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	}
	if bits.UintSize == 64 {
		// Mapped once for all it will hold: no remap while it grows.
		opts.InitialMmapSize = int(max(2*size, int64(initialMmapSize)))
	}
	return opts
}

// checkFile runs bbolt's consistency check over the whole file.
func checkFile(b *bbolt.DB) error {
	return b.View(func(tx *bbolt.Tx) error {
		// bbolt maps the file for random access, so each page the check
		// faults in that the page cache has not kept (a large import's
		// early pages) would be a read of its own: it visits most pages
		// in file order (that in which pageWriter wrote them), so it asks
		// for reads ahead instead. Without that advice it is only slower.
		_ = adviseSequential(b.Info().Data, tx.Size())
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// copyBuckets copies every top-level bucket of old but BucketRecords (which
// writeRecordPages wrote) into fresh, one transaction per bucket, with their
// sequences.
func copyBuckets(fresh *bbolt.DB, old *bbolt.Tx) error {
	return old.ForEach(func(name []byte, ob *bbolt.Bucket) error {
		if bytes.Equal(name, BucketRecords) {
			return nil
		}
		err := fresh.Update(func(tx *bbolt.Tx) error {
			nb, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			return copyBucket(nb, ob)
		})
		if err != nil {
			return fmt.Errorf("store: import: copying bucket %s: %w", name, err)
		}
		return nil
	})
}

// copyBucket copies ob's keys, nested buckets and sequence into nb. The
// values are ob's memory, which must stay valid until nb's transaction commits.
func copyBucket(nb, ob *bbolt.Bucket) error {
	if err := nb.SetSequence(ob.Sequence()); err != nil {
		return err
	}
	c := ob.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			if err := nb.Put(k, v); err != nil {
				return err
			}
			continue
		}
		sub, err := nb.CreateBucket(k)
		if err != nil {
			return err
		}
		if err := copyBucket(sub, ob.Bucket(k)); err != nil {
			return err
		}
	}
	return nil
}

// mergeRecords hands w the records of old (nil if the open file has none)
// and of src, in key order, and returns the number of records taken from src. Records of src replace those of old under the
// same key, and later ones of src earlier ones: the record written is the
// last of src under its key, with Version the stored one's plus one per record
// of src under the key (1 for the first if none was stored), Created the
// stored one's or now, and Updated now.
func mergeRecords(w *pageWriter, old *bbolt.Bucket, src sortedSource) (int, error) {
	var (
		ok, ov []byte
		oc     *bbolt.Cursor
		n      int
	)
	if old != nil {
		oc = old.Cursor()
		ok, ov = oc.First()
	}
	now := uint64(timeToNanos(time.Now().UTC()))
	r, more, err := src.next()
	for err == nil {
		if ok != nil && (!more || bytes.Compare(ok, r.key) < 0) {
			// A stored record no input record replaces: copied as it is,
			// or re-encoded with its derived part if stored without one.
			val, err := upgradeRecord(ok, ov)
			if err != nil {
				return n, &ImportError{Line: r.line, Err: err}
			}
			if err := w.add(ok, val); err != nil {
				return n, err
			}
			ok, ov = oc.Next()
			continue
		}
		if !more {
			break
		}
		version, created := uint64(1), now
		if ok != nil && bytes.Equal(ok, r.key) {
			if err := checkHeader(ov); err != nil {
				setKey(err, string(ok))
				return n, &ImportError{Line: r.line, Err: err}
			}
			version = binary.BigEndian.Uint64(ov[1:]) + 1
			created = uint64(storedCreated(ov))
			ok, ov = oc.Next()
		}
		last := r
		n++
		for {
			r, more, err = src.next()
			if err != nil || !more || !bytes.Equal(r.key, last.key) {
				break
			}
			last = r
			version++
			n++
		}
		binary.BigEndian.PutUint64(last.val[1:], version)
		binary.BigEndian.PutUint64(last.val[9:], created)
		binary.BigEndian.PutUint64(last.val[17:], now)
		if err := w.add(last.key, last.val); err != nil {
			return n, err
		}
	}
	return n, err
}

// upgradeRecord returns val, the stored record under key, in the current
// format: val itself, or its re-encoding when it is in the plain format
// (version and times kept), so that an import leaves every record with its
// derived part.
func upgradeRecord(key, val []byte) ([]byte, error) {
	if len(val) == 0 || val[0] != recordFormatPlain {
		return val, nil
	}
	s, err := decodeStored(val)
	if err != nil {
		setKey(err, string(key))
		return nil, err
	}
	return encodeStored(&s), nil
}

// readLine appends one line (without its '\n') to dst. At end of input it
// appends the last unterminated line, if any, and returns io.EOF. On any other
// error what it appended is undefined.
func readLine(br *bufio.Reader, dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		frag, err := br.ReadSlice('\n')
		if len(dst)-start+len(frag) > MaxImportLine+1 { // +1: the '\n' itself
			return dst, fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, MaxImportLine)
		}
		dst = append(dst, frag...)
		switch err {
		case nil:
			return dst[:len(dst)-1], nil
		case bufio.ErrBufferFull:
			continue
		default:
			return dst, err
		}
	}
}
