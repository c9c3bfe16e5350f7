package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
)

// importRec is one parsed import line waiting for its chunk's transaction.
type importRec struct {
	line int // 1-based input line
	size int // bytes of JSON, for the chunk size bound
	key  string
	rec  handlev.Record
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
// Records are written in transactions of up to 10000 records (one fsync each).
// On error Import returns an *ImportError naming the line, and n counts the
// records committed before it: earlier chunks stay committed, and nothing of the
// chunk holding the bad line is written. Import uses plain bbolt transactions,
// not Update's batching; it may run while the node serves, at the cost of
// holding the write lock for each chunk.
//
// JSON decoding, the costly part, runs on GOMAXPROCS goroutines; key is called
// from the calling goroutine, in input order, so it need not be safe for
// concurrent use. r is not read after Import returns: on an error Import first
// waits for a Read in progress to return.
func (db *DB) Import(r io.Reader, key func(handle string) (string, error)) (n int, err error) {
	var (
		chunk      []importRec
		chunkBytes int
	)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := db.importChunk(chunk); err != nil {
			return err
		}
		n += len(chunk)
		db.log.Debug("store import chunk committed", "records", len(chunk), "total", n, "line", chunk[len(chunk)-1].line)
		clear(chunk)
		chunk, chunkBytes = chunk[:0], 0
		return nil
	}

	p := startImportParse(r)
	defer p.stop() // on every return: stop reading r and wait for the goroutines
	lines := 0
	for b := range p.order {
		<-b.done
		for i := range b.recs {
			ir := &b.recs[i]
			k, err := key(ir.rec.Handle)
			if err == nil && k == "" {
				err = ErrEmptyKey
			}
			if err != nil {
				return n, &ImportError{Line: ir.line, Err: fmt.Errorf("handle %q: %w", ir.rec.Handle, err)}
			}
			ir.key = k
			chunk = append(chunk, *ir)
			chunkBytes += ir.size
			if len(chunk) >= importChunkRecords || chunkBytes >= importChunkBytes {
				if err := flush(); err != nil {
					return n, err
				}
			}
		}
		if b.err != nil {
			// The records before the bad line in this chunk are dropped with it.
			return n, b.err
		}
		lines = b.lastLine
	}
	if err := flush(); err != nil {
		return n, err
	}
	db.log.Info("store import done", "records", n, "lines", lines)
	return n, nil
}

// Import parsing pipeline: one goroutine reads lines into batches, workers decode
// batches in parallel, and Import consumes the batches in input order from
// p.order, waiting on each batch's done channel.
const (
	parseBatchLines = 256
	parseBatchBytes = 1 << 20
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
		order: make(chan *parseBatch, 4*workers),
		quit:  make(chan struct{}),
	}
	jobs := make(chan *parseBatch, 4*workers)
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

// decode decodes the batch's lines until the first error.
func (b *parseBatch) decode() {
	b.recs = make([]importRec, 0, len(b.ends))
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
		b.recs = append(b.recs, importRec{line: b.lineNos[i], size: len(line), rec: handlev.Record{Handle: handle, Values: values}})
	}
	b.buf, b.ends, b.lineNos = nil, nil, nil
}

// importChunk writes recs in one transaction; an error rolls back all of them.
func (db *DB) importChunk(recs []importRec) error {
	err := db.bolt.Update(func(btx *bbolt.Tx) error {
		tx := &Tx{tx: btx}
		now := time.Now().UTC()
		for i := range recs {
			ir := &recs[i]
			s := Stored{Record: ir.rec, Version: 1, Created: now, Updated: now}
			old, ok, err := tx.Record(ir.key)
			if err != nil {
				return &ImportError{Line: ir.line, Err: err}
			}
			if ok {
				s.Version = old.Version + 1
				s.Created = old.Created
			}
			if err := tx.PutRecord(ir.key, &s); err != nil {
				return &ImportError{Line: ir.line, Err: err}
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
		return &ImportError{Line: recs[0].line, Err: err}
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
