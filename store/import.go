package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
)

// importRec is one parsed import line waiting for its chunk's transaction.
type importRec struct {
	line   int    // 1-based input line
	size   int    // bytes of JSON, for the chunk size bound
	handle string // display handle, for key
	key    []byte // storage key, set by Import
	// val is the record's stored encoding (appendStored) with version and times
	// still zero; the chunk's transaction fills them in. It points into the
	// batch's arena and is not modified by anything else.
	val []byte
	// rec holds the decoded values only when checkStorable refused the record
	// (val is nil then), so that Import can report the exact reason.
	rec handlev.Record
}

// Import reads JSON Lines, one Handle JSON record per line ({"handle":…,
// "values":[…]}, "responseCode" optional; see handlev.DecodeRecordJSON), and
// stores each under key(handle). Blank lines are skipped; lines may end in \r\n
// and be up to MaxImportLine bytes long.
//
// Values are stored exactly as read: order, indexes, timestamps, TTLs. A record
// whose key already exists is replaced: its Created time is kept and its Version
// bumped; a new record gets Version 1 and Created = Updated = the time its chunk's
// transaction started. Repeated handles within the input replace each other in order.
//
// Records are written in transactions of up to 50000 records or 64 MiB of JSON
// (one fsync each).
// On error Import returns an *ImportError naming the line, and n counts the
// records committed before it: earlier chunks stay committed, and nothing of the
// chunk holding the bad line is written. Import uses plain bbolt transactions,
// not Update's batching; it may run while the node serves, at the cost of
// holding the write lock for each chunk.
//
// JSON decoding and record encoding, the costly parts, run on GOMAXPROCS
// goroutines, and a chunk is written while the next one is decoded. key is
// called from the calling goroutine, in input order, so it need not be safe for
// concurrent use. r is not read after Import returns: on an error Import first
// waits for a Read in progress to return.
func (db *DB) Import(r io.Reader, key func(handle string) (string, error)) (int, error) {
	p := startImportParse(r)
	defer p.stop() // on every return: stop reading r and wait for the goroutines
	w := db.startImportWrite()
	lines, err := w.feed(p, key)
	// The chunks handed over before an error are committed all the same; a
	// commit error comes first in the input, so it wins.
	n, werr := w.finish()
	if werr != nil {
		err = werr
	}
	if err != nil {
		return n, err
	}
	db.log.Info("store import done", "records", n, "lines", lines)
	return n, nil
}

// feed keys the decoded records in input order and hands them to the writer in
// chunks. It returns the number of input lines read and the first error of the
// input (decoding, key, a record PutRecord would refuse); the chunk holding it
// is dropped.
func (w *importWrite) feed(p *importParse, key func(handle string) (string, error)) (lines int, err error) {
	var (
		chunk      []importRec
		chunkBytes int
	)
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
			ir.key = []byte(k)
			chunk = append(chunk, *ir)
			chunkBytes += ir.size
			if len(chunk) >= w.db.importChunkRecords || chunkBytes >= importChunkBytes {
				if !w.send(chunk) {
					return lines, nil // finish reports the commit error
				}
				chunk, chunkBytes = make([]importRec, 0, len(chunk)), 0
			}
		}
		if b.err != nil {
			// The records before the bad line in this chunk are dropped with it.
			return lines, b.err
		}
		lines = b.lastLine
	}
	if len(chunk) > 0 {
		w.send(chunk)
	}
	return lines, nil
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
	wg    sync.WaitGroup
}

func startImportParse(r io.Reader) *importParse {
	workers := max(runtime.GOMAXPROCS(0), 1)
	p := &importParse{
		order: make(chan *parseBatch, 8*workers),
		quit:  make(chan struct{}),
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
				close(b.done)
			}
		}()
	}
	return p
}

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
	var (
		buf    []byte
		lineNo int
	)
	newBatch := func() *parseBatch { return &parseBatch{done: make(chan struct{})} }
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
		line, nb, err := readLine(br, buf[:0])
		buf = nb
		if err == io.EOF && len(line) == 0 {
			break
		}
		lineNo++
		b.lastLine = lineNo
		if err != nil && err != io.EOF {
			// A read error ends the input: the lines before it are decoded first,
			// then Import meets the error in order.
			if len(b.ends) > 0 && !send(true) {
				return
			}
			b.err = &ImportError{Line: lineNo, Err: err}
			send(false)
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		b.buf = append(b.buf, line...)
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
// decoded values are dropped once encoded: a chunk waiting for its transaction
// holds only the encodings, a few large allocations instead of many small ones.
func (b *parseBatch) decode() {
	b.recs = make([]importRec, 0, len(b.ends))
	var arena []byte
	start := 0
	for i, end := range b.ends {
		line := b.buf[start:end]
		start = end
		handle, values, err := handlev.DecodeRecordJSON(line)
		if err == nil && handle == "" {
			err = ErrEmptyKey
		}
		if err != nil {
			b.err = &ImportError{Line: b.lineNos[i], Err: err}
			break
		}
		ir := importRec{line: b.lineNos[i], size: len(line), handle: handle}
		s := Stored{Record: handlev.Record{Handle: handle, Values: values}}
		if checkStorable("", &s) != nil {
			ir.rec.Values = values // Import reports it with the key
		} else {
			size := encodedSize(&s)
			if cap(arena)-len(arena) < size {
				arena = make([]byte, 0, max(size, parseArenaBytes))
			}
			off := len(arena)
			arena = appendStored(arena, &s)
			ir.val = arena[off:len(arena):len(arena)]
		}
		b.recs = append(b.recs, ir)
	}
	b.buf, b.ends, b.lineNos = nil, nil, nil
}

// importWrite commits the chunks Import hands it, one transaction each, on its
// own goroutine, so that decoding goes on while a chunk is written.
type importWrite struct {
	db     *DB
	chunks chan []importRec
	failed chan struct{} // closed when a commit failed; no more chunks are written
	done   chan struct{} // closed when the goroutine has returned
	n      int           // records committed; read after done
	err    error         // first commit error; read after done
}

func (db *DB) startImportWrite() *importWrite {
	w := &importWrite{
		db:     db,
		chunks: make(chan []importRec, 1), // one chunk written, one waiting, one being filled
		failed: make(chan struct{}),
		done:   make(chan struct{}),
	}
	go w.run()
	return w
}

func (w *importWrite) run() {
	defer close(w.done)
	for chunk := range w.chunks {
		if err := w.db.importChunk(chunk); err != nil {
			w.err = err
			close(w.failed)
			for range w.chunks { // later chunks are dropped
			}
			return
		}
		w.n += len(chunk)
		w.db.log.Debug("store import chunk committed", "records", len(chunk), "total", w.n, "last line", slices.MaxFunc(chunk, func(a, b importRec) int { return a.line - b.line }).line)
	}
}

// send queues chunk for its transaction. It reports false if an earlier
// chunk's commit failed (the chunk is then not written).
func (w *importWrite) send(chunk []importRec) bool {
	select {
	case w.chunks <- chunk:
		return true
	case <-w.failed:
		return false
	}
}

// finish waits for the queued chunks to be committed and returns the number of
// records committed and the first commit error.
func (w *importWrite) finish() (int, error) {
	close(w.chunks)
	<-w.done
	return w.n, w.err
}

// importChunk writes recs in one transaction; an error rolls back all of them.
// recs is sorted by key first (repeated handles in input order), so that the
// transaction walks the B+tree in order and records that share a leaf page are
// written into it together.
func (db *DB) importChunk(recs []importRec) error {
	// Lines are unique: sorting by (key, line) is the stable sort by key, and
	// pdqsort is several times faster than SortStableFunc's merging.
	slices.SortFunc(recs, func(a, b importRec) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return a.line - b.line
	})
	err := db.bolt.Update(func(btx *bbolt.Tx) error {
		b := btx.Bucket(BucketRecords)
		if b == nil {
			return fmt.Errorf("store: bucket %s missing", BucketRecords)
		}
		// Keys after the last stored one are new: no lookup needed. If the whole
		// chunk lies there (an empty bucket, or input in key order), it only
		// appends, and full pages are what bbolt should leave behind.
		last, _ := b.Cursor().Last()
		last = bytes.Clone(last) // never keep bbolt memory across Puts
		if last == nil || bytes.Compare(recs[0].key, last) > 0 {
			b.FillPercent = importAppendFill
		}
		now := uint64(timeToNanos(time.Now().UTC()))
		for i := range recs {
			ir := &recs[i]
			version, created := uint64(1), now
			switch {
			case i > 0 && bytes.Equal(recs[i-1].key, ir.key):
				// Repeated within the chunk: replaces the one just put.
				version = binary.BigEndian.Uint64(recs[i-1].val[1:]) + 1
				created = binary.BigEndian.Uint64(recs[i-1].val[9:])
			case last != nil && bytes.Compare(ir.key, last) <= 0:
				if old := b.Get(ir.key); old != nil {
					if err := checkHeader(old); err != nil {
						setKey(err, string(ir.key))
						return &ImportError{Line: ir.line, Err: err}
					}
					version = binary.BigEndian.Uint64(old[1:]) + 1
					created = binary.BigEndian.Uint64(old[9:])
				}
			}
			binary.BigEndian.PutUint64(ir.val[1:], version)
			binary.BigEndian.PutUint64(ir.val[9:], created)
			binary.BigEndian.PutUint64(ir.val[17:], now)
			// bbolt keeps both slices until commit; nothing else writes to them.
			if err := b.Put(ir.key, ir.val); err != nil {
				return &ImportError{Line: ir.line, Err: fmt.Errorf("store: put %q: %w", ir.key, err)}
			}
		}
		return nil
	})
	if err != nil {
		var ie *ImportError
		if errors.As(err, &ie) {
			return err
		}
		// Commit failure: blame the chunk's first line.
		return &ImportError{Line: slices.MinFunc(recs, func(a, b importRec) int { return a.line - b.line }).line, Err: err}
	}
	return nil
}

// importAppendFill is the bucket fill percent of a chunk that only appends:
// pages left full, since nothing will be inserted between their keys.
const importAppendFill = 1.0

// checkHeader checks what Import reads of a record it replaces: the format byte
// and the header (version, created). The rest is overwritten unread.
func checkHeader(b []byte) error {
	if len(b) == 0 {
		return &FormatError{Err: fmt.Errorf("%w: empty value", ErrCorrupt)}
	}
	if b[0] != recordFormat {
		return &FormatError{Format: b[0], Err: ErrUnknownFormat}
	}
	if len(b) < recordHeaderLen+4 {
		return &FormatError{Format: b[0], Err: fmt.Errorf("%w: %d bytes, header needs %d", ErrCorrupt, len(b), recordHeaderLen+4)}
	}
	return nil
}

// readLine reads one line (without its '\n') into buf and returns it. The
// returned line aliases buf (returned as the second result for reuse). At end of
// input it returns the last unterminated line, if any, with io.EOF.
func readLine(br *bufio.Reader, buf []byte) (line, newBuf []byte, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxImportLine+1 { // +1: the '\n' itself
			return nil, buf, fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, MaxImportLine)
		}
		buf = append(buf, frag...)
		switch err {
		case nil:
			return buf[:len(buf)-1], buf, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, buf, err
		}
	}
}
