package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/internal/unsafeconv"
)

// A value in BucketRecords is, big-endian:
//
//	format   byte    recordFormat, or recordFormatPlain (anything else: ErrUnknownFormat)
//	version  uint64  bumped by every write, starts at 1
//	created  int64   unix nanoseconds, 0 = unknown
//	updated  int64   unix nanoseconds, 0 = unknown
//	handle   int4 length + UTF-8 bytes: the display handle
//	derived  int4 length + handlev.AppendDerived of the values (recordFormat only)
//	values   handlev.AppendValues: int4 count + RFC 3651 values
//
// so the values are in the same bytes the native Handle protocol sends, and
// what a reader would parse out of them on every cache miss (handlev.Derived)
// was parsed once by the writer. Every writer encodes through
// appendStoredWith (PutRecord, EncodeStored for a cluster's etcd, Import);
// PutRecordRaw re-encodes a record of the plain format it is handed.
// A file written before the derived part existed keeps its records in the
// plain format until each is written again; readers then parse (Derived
// is nil).

// recordFormat is the first byte of every value the current writers store;
// recordFormatPlain the layout without the derived part, still read. A new
// layout gets a new byte; decodeStored refuses bytes it does not know.
const (
	recordFormat      byte = 2
	recordFormatPlain byte = 1
)

// recordHeaderLen is format + version + created + updated.
const recordHeaderLen = 1 + 8 + 8 + 8

// Stored is a record with its bookkeeping.
type Stored struct {
	Record handlev.Record
	// Version starts at 1 and is bumped by the writer on every change (the
	// caller of PutRecord chooses it; Import bumps it).
	Version uint64
	// Created and Updated are stored as unix nanoseconds; the zero time is stored
	// as 0 and read back as the zero time. Decoded times are in UTC.
	Created, Updated time.Time
}

// appendStored appends the encoding of s (see recordFormat) to dst.
func appendStored(dst []byte, s *Stored) []byte {
	return appendStoredWith(dst, s, handlev.AppendDerived(nil, s.Record.Values))
}

// encodeStored returns the encoding of s in memory of its own, deriving once.
func encodeStored(s *Stored) []byte {
	d := handlev.AppendDerived(make([]byte, 0, 256), s.Record.Values)
	return appendStoredWith(make([]byte, 0, plainSize(s)+4+len(d)), s, d)
}

// appendStoredWith appends the encoding of s with d, the values' derived
// part (handlev.AppendDerived), to dst.
func appendStoredWith(dst []byte, s *Stored, d []byte) []byte {
	dst = append(dst, recordFormat)
	dst = binary.BigEndian.AppendUint64(dst, s.Version)
	dst = binary.BigEndian.AppendUint64(dst, uint64(timeToNanos(s.Created)))
	dst = binary.BigEndian.AppendUint64(dst, uint64(timeToNanos(s.Updated)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.Record.Handle)))
	dst = append(dst, s.Record.Handle...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(d)))
	dst = append(dst, d...)
	return handlev.AppendValues(dst, s.Record.Values)
}

// decodeStored decodes an encoded record. The result owns its memory: b may be
// bbolt's mmap and is not referenced after return. The strings and byte slices
// of the result share one allocation and must never be modified (records are
// immutable once loaded; the cache publishes them to every reader).
func decodeStored(b []byte) (Stored, error) {
	s, _, err := decodeStoredDerived(b)
	return s, err
}

// decodeStoredDerived is decodeStored that also returns the record's
// derived part (nil in the plain format), which shares the record's memory.
func decodeStoredDerived(b []byte) (s Stored, d handlev.Derived, err error) {
	if err := checkHeader(b); err != nil {
		return s, nil, err
	}
	s.Version = binary.BigEndian.Uint64(b[1:])
	s.Created = nanosToTime(storedCreated(b))
	s.Updated = nanosToTime(int64(binary.BigEndian.Uint64(b[17:])))
	hl := uint64(binary.BigEndian.Uint32(b[recordHeaderLen:]))
	off := recordHeaderLen + 4
	if hl > handlev.MaxHandleLen {
		return s, nil, &FormatError{Format: b[0], Err: fmt.Errorf("%w: handle length %d over %d", ErrCorrupt, hl, handlev.MaxHandleLen)}
	}
	if hl > uint64(len(b)-off) {
		return s, nil, &FormatError{Format: b[0], Err: fmt.Errorf("%w: handle length %d exceeds record", ErrCorrupt, hl)}
	}
	// The record keeps the handle and the values' data, type names and
	// reference handles: they all alias one copy of the rest of b (handle and
	// value encodings, made without zeroing), so that a loaded record is two
	// objects, that copy (which holds no pointers) and the []Value, however
	// many values and strings it has: less work for the allocator on every
	// cache miss and for the garbage collector while the record is cached.
	own := bytes.Clone(b[off:])
	if hl > 0 {
		s.Record.Handle = unsafeconv.String(own[:hl])
	}
	off += int(hl)
	rest := own[hl:]
	if b[0] == recordFormat {
		if len(rest) < 4 || uint64(binary.BigEndian.Uint32(rest)) > uint64(len(rest)-4) {
			return Stored{}, nil, &FormatError{Format: b[0], Err: fmt.Errorf("%w: derived part at offset %d exceeds record", ErrCorrupt, off)}
		}
		dl := int(binary.BigEndian.Uint32(rest))
		if dl > 0 {
			d = handlev.Derived(rest[4 : 4+dl : 4+dl])
		}
		rest = rest[4+dl:]
		off += 4 + dl
	}
	vs, n, err := handlev.DecodeValuesShared(rest)
	if err != nil {
		return Stored{}, nil, &FormatError{Format: b[0], Err: fmt.Errorf("values at offset %d: %w", off, err)}
	}
	if off+n != len(b) {
		return Stored{}, nil, &FormatError{Format: b[0], Err: fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(b)-off-n)}
	}
	s.Record.Values = vs
	return s, d, nil
}

// checkHeader checks the format byte and the header (version, created,
// updated, handle length) of a stored record b: what may be read of b
// without decoding the rest (Import, Tx.RecordCreated) and what decoding
// reads first.
func checkHeader(b []byte) error {
	if len(b) == 0 {
		return &FormatError{Err: fmt.Errorf("%w: empty value", ErrCorrupt)}
	}
	if b[0] != recordFormat && b[0] != recordFormatPlain {
		return &FormatError{Format: b[0], Err: ErrUnknownFormat}
	}
	if len(b) < recordHeaderLen+4 {
		return &FormatError{Format: b[0], Err: fmt.Errorf("%w: %d bytes, header needs %d", ErrCorrupt, len(b), recordHeaderLen+4)}
	}
	return nil
}

// storedCreated is the created time in stored record b's header (unix
// nanoseconds); b has passed checkHeader.
func storedCreated(b []byte) int64 { return int64(binary.BigEndian.Uint64(b[9:])) }

func timeToNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano() // outside 1678..2262 this saturates or wraps; see doc.go
}

func nanosToTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// getRecord reads key from BucketRecords of btx into owned memory.
func getRecord(btx *bbolt.Tx, key string) (Stored, bool, error) {
	s, _, ok, err := getRecordDerived(btx, key)
	return s, ok, err
}

// getRecordDerived is getRecord with the record's derived part.
func getRecordDerived(btx *bbolt.Tx, key string) (Stored, handlev.Derived, bool, error) {
	b := btx.Bucket(BucketRecords)
	if b == nil {
		return Stored{}, nil, false, fmt.Errorf("store: bucket %s missing", BucketRecords)
	}
	// bbolt's Get neither modifies nor retains the key, so it may view key's
	// bytes; never do this for Put.
	return readRecord(b.Get(unsafeconv.Bytes(key)), key)
}

// readRecord decodes v, the value stored under key (nil: none), into owned
// memory, with the record's derived part.
func readRecord(v []byte, key string) (Stored, handlev.Derived, bool, error) {
	if v == nil {
		return Stored{}, nil, false, nil
	}
	s, d, err := decodeStoredDerived(v)
	if err != nil {
		setKey(err, key)
		return Stored{}, nil, false, err
	}
	return s, d, true, nil
}

// setKey fills in the key of a *FormatError returned by decodeStored.
func setKey(err error, key string) {
	if fe, ok := err.(*FormatError); ok {
		fe.Key = key
	}
}
