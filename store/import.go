package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
)

// importRec is one parsed import line waiting for its chunk's transaction.
type importRec struct {
	line int
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
func (db *DB) Import(r io.Reader, key func(handle string) (string, error)) (n int, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var (
		chunk      []importRec
		chunkBytes int
		lineNo     int
		buf        []byte
	)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := db.importChunk(chunk); err != nil {
			return err
		}
		n += len(chunk)
		db.log.Debug("store import chunk committed", "records", len(chunk), "total", n, "line", lineNo)
		clear(chunk)
		chunk, chunkBytes = chunk[:0], 0
		return nil
	}
	for {
		var line []byte
		line, buf, err = readLine(br, buf[:0])
		if err == io.EOF && len(line) == 0 {
			break
		}
		lineNo++
		if err != nil && err != io.EOF {
			return n, &ImportError{Line: lineNo, Err: err}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		handle, values, err := handlev.DecodeRecordJSON(line)
		if err != nil {
			return n, &ImportError{Line: lineNo, Err: err}
		}
		if handle == "" {
			return n, &ImportError{Line: lineNo, Err: ErrEmptyKey}
		}
		k, err := key(handle)
		if err != nil {
			return n, &ImportError{Line: lineNo, Err: fmt.Errorf("handle %q: %w", handle, err)}
		}
		if k == "" {
			return n, &ImportError{Line: lineNo, Err: fmt.Errorf("handle %q: %w", handle, ErrEmptyKey)}
		}
		chunk = append(chunk, importRec{line: lineNo, key: k, rec: handlev.Record{Handle: handle, Values: values}})
		chunkBytes += len(line)
		if len(chunk) >= importChunkRecords || chunkBytes >= importChunkBytes {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	db.log.Info("store import done", "records", n, "lines", lineNo)
	return n, nil
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
