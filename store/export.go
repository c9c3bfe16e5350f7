package store

import (
	"bufio"
	"fmt"
	"io"

	"pidnode/handlev"
)

const (
	// MaxImportLine is the longest JSON line Import accepts (16 MiB): the
	// longest record text (handlev.MaxRecordJSON), so that every record the
	// writers are allowed to store can be exported and imported back.
	MaxImportLine = handlev.MaxRecordJSON
)

// Export writes every record as one JSON line, in key order:
//
//	{"handle":"<display handle>","values":[…]}
//
// with values in the Handle JSON API encoding (handlev.AppendValuesJSON), which
// Import reads back exactly. It runs in one read transaction, so the output is a
// consistent snapshot while writers keep going.
func (db *DB) Export(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	err := db.View(func(tx *Tx) error {
		return tx.ForEachRecord(func(_ string, s *Stored) error {
			line = appendExportLine(line[:0], &s.Record)
			_, err := bw.Write(line)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	return nil
}

// appendExportLine appends one export line, newline included.
func appendExportLine(dst []byte, r *handlev.Record) []byte {
	dst = append(dst, `{"handle":`...)
	dst = handlev.AppendJSONString(dst, r.Handle)
	dst = append(dst, `,"values":`...)
	dst = handlev.AppendValuesJSON(dst, r.Values)
	return append(dst, "}\n"...)
}
