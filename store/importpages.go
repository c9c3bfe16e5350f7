package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
)

// bbolt's file format (version 2), as far as pageWriter writes it. A page is
// a 16-byte header (id uint64, flags uint16, count uint16, overflow uint32)
// followed by count elements and then their keys and values; a page of
// overflow+1 pages holds one node too big for one. Integers are in the
// machine's byte order, as bbolt writes its structs.
const (
	boltPageHeader  = 16
	boltElemSize    = 16 // leaf (flags, pos, ksize, vsize) and branch (pos, ksize, pgid) elements alike
	boltBranchPage  = 0x01
	boltLeafPage    = 0x02
	boltMetaPage    = 0x04
	boltFreelist    = 0x10
	boltBucketLeaf  = 0x01 // leaf element flag: the value is a bucket header
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltMetaSumSize = 56 // the meta fields before the checksum
	boltMaxCount    = 0xFFFF
	// boltFirstPage is the first page of the records tree: pages 0 and 1 are
	// the meta pages, 2 the (empty) freelist, 3 the root bucket's leaf.
	boltFirstPage = 4
)

var boltOrder = binary.NativeEndian

// importFlushBytes is how many bytes of pages pageWriter fills before it
// hands them to its flusher; importFlushBuffers such buffers circulate. The
// flusher writes them importWriteBytes at a time: the page cache sizes its
// folios by the write, and filling large fresh folios costs several times
// more kernel time per byte than small ones (markedly so in a virtual
// machine, where fresh guest memory is backed on first touch).
const (
	importFlushBytes   = 8 << 20
	importFlushBuffers = 3
	importWriteBytes   = 64 << 10
)

// pageWriter writes a bbolt file whose root bucket holds BucketRecords alone,
// straight in bbolt's page format, from records that arrive in strictly
// increasing key order: leaf pages filled one after another, then the branch
// levels above them, then the meta pages. bbolt then opens the file like any
// other (writeImport copies the other buckets into it and checks it whole).
//
// Filled pages go to a goroutine of its own that writes them to the file, so
// that the kernel's copy into the page cache runs beside the page building.
// add copies the key and value it is given, so their memory may be reused
// once it returns: the records written so far can be collected, or their
// buffers filled again, and an import holds its records in memory only up to
// the run bound, whatever its size. A pageWriter is used from one goroutine.
type pageWriter struct {
	f       *os.File
	ps      int    // page size
	next    uint64 // id of the next page
	buf     []byte // pages from bufPage on, not yet handed to the flusher
	bufPage uint64
	flushAt int

	leaf     [][2]int  // the leaf being filled: key and value length of each record
	leafData []byte    // its keys and values, back to back, as the page holds them
	leafSize int       // its size in bytes, header included
	refs     []pageRef // first key and id of every leaf written
	keys     []byte    // the block refs' keys are copied into
	last     []byte    // a copy of the last key added (keys are never empty)

	bufs    int // buffers made so far
	full    chan flushBuf
	stopped bool // full is closed
	free    chan []byte
	failed  chan struct{} // closed on a write error
	done    chan struct{} // closed when the flusher has returned
	errOnce sync.Once
	err     error // the first write error; read after failed or done
}

// pageRef is one child of a branch page: its first key and its page id.
type pageRef struct {
	key  []byte
	page uint64
}

type flushBuf struct {
	b   []byte
	off int64
}

func newPageWriter(f *os.File, flushAt int) *pageWriter {
	w := &pageWriter{
		f:        f,
		ps:       os.Getpagesize(),
		next:     boltFirstPage,
		bufPage:  boltFirstPage,
		flushAt:  flushAt,
		leafSize: boltPageHeader,
		full:     make(chan flushBuf, importFlushBuffers-1),
		free:     make(chan []byte, importFlushBuffers),
		failed:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	w.buf = w.newBuf()
	go w.flusher(w.full)
	return w
}

func (w *pageWriter) newBuf() []byte {
	w.bufs++
	return make([]byte, 0, w.flushAt+w.ps)
}

func (w *pageWriter) flusher(full <-chan flushBuf) {
	defer close(w.done)
	for fb := range full {
		select {
		case <-w.failed: // later buffers are dropped
			continue
		default:
		}
		var err error
		for o := 0; o < len(fb.b) && err == nil; o += importWriteBytes {
			_, err = w.f.WriteAt(fb.b[o:min(o+importWriteBytes, len(fb.b))], fb.off+int64(o))
		}
		if err != nil {
			w.fail(err)
			continue
		}
		w.free <- fb.b[:0]
	}
}

func (w *pageWriter) fail(err error) {
	w.errOnce.Do(func() {
		w.err = fmt.Errorf("store: import: writing %s: %w", w.f.Name(), err)
		close(w.failed)
	})
}

// add appends a record. Keys must be non-empty and strictly increasing.
func (w *pageWriter) add(k, v []byte) error {
	if len(k) == 0 || (len(w.last) > 0 && bytes.Compare(w.last, k) >= 0) {
		return fmt.Errorf("%w: %q after %q", errPageOrder, k, w.last)
	}
	w.last = append(w.last[:0], k...)
	size := boltElemSize + len(k) + len(v)
	if len(w.leaf) > 0 && (w.leafSize+size > w.ps || len(w.leaf) == boltMaxCount) {
		if err := w.writeLeaf(); err != nil {
			return err
		}
	}
	w.leaf = append(w.leaf, [2]int{len(k), len(v)})
	w.leafData = append(append(w.leafData, k...), v...)
	w.leafSize += size
	return nil
}

// writeLeaf writes the leaf being filled (possibly empty: the one page of an
// empty tree).
func (w *pageWriter) writeLeaf() error {
	p, err := w.page(w.leafSize)
	if err != nil {
		return err
	}
	id := w.putHeader(p, boltLeafPage, len(w.leaf))
	var first []byte
	if len(w.leaf) > 0 {
		k := w.leafData[:w.leaf[0][0]]
		if cap(w.keys)-len(w.keys) < len(k) {
			w.keys = make([]byte, 0, max(len(k), 1<<20))
		}
		off := len(w.keys)
		w.keys = append(w.keys, k...)
		first = w.keys[off:len(w.keys):len(w.keys)]
	}
	w.refs = append(w.refs, pageRef{key: first, page: id})
	start := boltPageHeader + boltElemSize*len(w.leaf)
	data := start
	for i, kv := range w.leaf {
		e := p[boltPageHeader+boltElemSize*i:]
		boltOrder.PutUint32(e[0:], 0)
		boltOrder.PutUint32(e[4:], uint32(data-(boltPageHeader+boltElemSize*i)))
		boltOrder.PutUint32(e[8:], uint32(kv[0]))
		boltOrder.PutUint32(e[12:], uint32(kv[1]))
		data += kv[0] + kv[1]
	}
	clear(p[start+copy(p[start:], w.leafData):])
	w.leaf, w.leafData, w.leafSize = w.leaf[:0], w.leafData[:0], boltPageHeader
	return nil
}

// writeBranches writes the branch pages over children and returns theirs.
// Every branch page gets at least two children (bbolt's minimum), one too big
// for a page overflowing it.
func (w *pageWriter) writeBranches(children []pageRef) ([]pageRef, error) {
	var starts []int // where each page's children start
	for i := 0; i < len(children); {
		starts = append(starts, i)
		start, size := i, boltPageHeader
		for i < len(children) && i-start < boltMaxCount &&
			(i-start < 2 || size+boltElemSize+len(children[i].key) <= w.ps) {
			size += boltElemSize + len(children[i].key)
			i++
		}
	}
	if n := len(starts); n > 1 && starts[n-1] == len(children)-1 {
		// A lone last child joins the page before it, or takes one of its
		// children if that page is full.
		if starts[n-1]-starts[n-2] < boltMaxCount {
			starts = starts[:n-1]
		} else {
			starts[n-1]--
		}
	}
	groups := make([][]pageRef, len(starts))
	for i, s := range starts {
		end := len(children)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		groups[i] = children[s:end]
	}
	var parents []pageRef
	for _, g := range groups {
		size := boltPageHeader
		for _, c := range g {
			size += boltElemSize + len(c.key)
		}
		p, err := w.page(size)
		if err != nil {
			return nil, err
		}
		id := w.putHeader(p, boltBranchPage, len(g))
		parents = append(parents, pageRef{key: g[0].key, page: id})
		data := boltPageHeader + boltElemSize*len(g)
		for i, c := range g {
			e := p[boltPageHeader+boltElemSize*i:]
			boltOrder.PutUint32(e[0:], uint32(data-(boltPageHeader+boltElemSize*i)))
			boltOrder.PutUint32(e[4:], uint32(len(c.key)))
			boltOrder.PutUint64(e[8:], c.page)
			data += copy(p[data:], c.key)
		}
		clear(p[data:])
	}
	return parents, nil
}

// page returns the next whole pages that size bytes need, in the buffer.
func (w *pageWriter) page(size int) ([]byte, error) {
	n := (size + w.ps - 1) / w.ps * w.ps
	if cap(w.buf)-len(w.buf) < n {
		if err := w.flush(); err != nil {
			return nil, err
		}
		if cap(w.buf) < n {
			w.buf = make([]byte, 0, n)
		}
	}
	off := len(w.buf)
	w.buf = w.buf[:off+n]
	return w.buf[off : off+n], nil
}

// putHeader writes the header of the page p starts and returns its id.
func (w *pageWriter) putHeader(p []byte, flags uint16, count int) uint64 {
	id := w.next
	pages := len(p) / w.ps
	boltOrder.PutUint64(p[0:], id)
	boltOrder.PutUint16(p[8:], flags)
	boltOrder.PutUint16(p[10:], uint16(count))
	boltOrder.PutUint32(p[12:], uint32(pages-1))
	w.next += uint64(pages)
	return id
}

// flush hands the filled pages to the flusher and takes a free buffer.
func (w *pageWriter) flush() error {
	if len(w.buf) > 0 {
		select {
		case w.full <- flushBuf{b: w.buf, off: int64(w.bufPage) * int64(w.ps)}:
		case <-w.failed:
			return w.err
		}
		w.buf = nil
	}
	w.bufPage = w.next
	if w.buf != nil {
		return nil
	}
	if w.bufs < importFlushBuffers {
		w.buf = w.newBuf()
		return nil
	}
	select {
	case w.buf = <-w.free:
		return nil
	case <-w.failed:
		return w.err
	}
}

// finish writes the last leaf, the branch pages and the file's first pages
// (meta, freelist, root bucket with BucketRecords and its sequence seq), and
// waits until everything is written. The file is not synced.
func (w *pageWriter) finish(seq uint64) error {
	err := w.build(seq)
	w.stop()
	if err == nil && w.err != nil {
		err = w.err
	}
	return err
}

// stop ends the flusher and waits for it.
func (w *pageWriter) stop() {
	if !w.stopped {
		close(w.full)
		w.stopped = true
	}
	<-w.done
}

func (w *pageWriter) build(seq uint64) error {
	if len(w.leaf) > 0 || len(w.refs) == 0 {
		if err := w.writeLeaf(); err != nil {
			return err
		}
	}
	level := w.refs
	for len(level) > 1 {
		var err error
		if level, err = w.writeBranches(level); err != nil {
			return err
		}
	}
	root := level[0].page
	if err := w.flush(); err != nil {
		return err
	}
	head := make([]byte, boltFirstPage*w.ps)
	for i := range 2 {
		putMeta(head[i*w.ps:], w.ps, uint64(i), w.next)
	}
	free := head[2*w.ps:]
	boltOrder.PutUint64(free[0:], 2)
	boltOrder.PutUint16(free[8:], boltFreelist)
	// The root bucket's leaf: one element, BucketRecords, whose value is its
	// bucket header (root page, sequence).
	rootLeaf := head[3*w.ps:]
	boltOrder.PutUint64(rootLeaf[0:], 3)
	boltOrder.PutUint16(rootLeaf[8:], boltLeafPage)
	boltOrder.PutUint16(rootLeaf[10:], 1)
	e := rootLeaf[boltPageHeader:]
	boltOrder.PutUint32(e[0:], boltBucketLeaf)
	boltOrder.PutUint32(e[4:], boltElemSize)
	boltOrder.PutUint32(e[8:], uint32(len(BucketRecords)))
	boltOrder.PutUint32(e[12:], 16)
	kv := e[boltElemSize:]
	n := copy(kv, BucketRecords)
	boltOrder.PutUint64(kv[n:], root)
	boltOrder.PutUint64(kv[n+8:], seq)
	select {
	case w.full <- flushBuf{b: head, off: 0}:
	case <-w.failed:
		return w.err
	}
	return nil
}

// putMeta writes meta page txid (0 or 1, as bbolt numbers a new file's) into
// p: root bucket at page 3, freelist at page 2, hwm pages in the file.
func putMeta(p []byte, pageSize int, txid, hwm uint64) {
	boltOrder.PutUint64(p[0:], txid)
	boltOrder.PutUint16(p[8:], boltMetaPage)
	m := p[boltPageHeader:]
	boltOrder.PutUint32(m[0:], boltMagic)
	boltOrder.PutUint32(m[4:], boltVersion)
	boltOrder.PutUint32(m[8:], uint32(pageSize))
	boltOrder.PutUint32(m[12:], 0)   // flags
	boltOrder.PutUint64(m[16:], 3)   // root bucket: root page
	boltOrder.PutUint64(m[24:], 0)   // root bucket: sequence
	boltOrder.PutUint64(m[32:], 2)   // freelist page
	boltOrder.PutUint64(m[40:], hwm) // high water mark
	boltOrder.PutUint64(m[48:], txid)
	h := fnv.New64a()
	h.Write(m[:boltMetaSumSize])
	boltOrder.PutUint64(m[boltMetaSumSize:], h.Sum64())
}

// errPageOrder is a bug guard: pageWriter got an empty key or keys out of
// order.
var errPageOrder = errors.New("store: import: keys out of order")
