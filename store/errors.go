package store

import (
	"errors"
	"fmt"

	"pidnode/internal/cfgerr"
)

// Sentinel errors. Test for them with errors.Is; the typed errors below wrap them.
var (
	// ErrConfig is wrapped by every *ConfigError Open returns.
	ErrConfig = errors.New("store: invalid configuration")

	// ErrLocked: another process holds the database file open (bbolt takes an
	// exclusive flock). Open gives up after one second instead of hanging.
	// Returned wrapped in *LockedError.
	ErrLocked = errors.New("store: database locked by another process")

	// ErrSchemaTooNew: the file was written by a newer pidnode whose schema this
	// binary does not know. Returned wrapped in *SchemaError.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this binary")

	// ErrBadSchema: the meta bucket holds a schema version that is not a valid
	// uint32 or is zero.
	ErrBadSchema = errors.New("store: invalid schema version in meta bucket")

	// ErrUnknownFormat: a record starts with a format byte this binary does not
	// know. Returned wrapped in *FormatError.
	ErrUnknownFormat = errors.New("store: unknown record format")

	// ErrCorrupt: a stored record is truncated, has trailing bytes or a display
	// handle longer than handlev.MaxHandleLen.
	// Returned wrapped in *FormatError.
	ErrCorrupt = errors.New("store: corrupt record")

	// ErrEmptyKey: a record key or display handle is empty.
	ErrEmptyKey = errors.New("store: empty key or handle")

	// ErrNotStorable: PutRecord refused a record the binary encoding cannot hold
	// exactly (a length over handlev's limits, a timestamp outside uint32, …).
	ErrNotStorable = errors.New("store: record not storable")

	// ErrLineTooLong: an import line exceeds MaxImportLine bytes.
	// Returned wrapped in *ImportError.
	ErrLineTooLong = errors.New("store: import line too long")
)

// SchemaError reports a schema version mismatch between the file and the binary.
// It matches ErrSchemaTooNew with errors.Is.
type SchemaError struct {
	Path   string
	File   uint32 // version recorded in the file's meta bucket
	Binary uint32 // SchemaVersion of this binary
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("store: %s has schema version %d, this binary knows up to %d; upgrade pidnode",
		e.Path, e.File, e.Binary)
}

func (e *SchemaError) Unwrap() error { return ErrSchemaTooNew }

// LockedError reports a database file another process holds open. It
// matches ErrLocked with errors.Is.
type LockedError struct {
	Path string
	// PID is the holder's process id as it recorded it in the lock file
	// (LockFile), or 0 when that is unknown: no lock file, or it names no
	// running process (a holder that crashed left it, and the holder now is
	// something else).
	PID int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("store: %s is in use by another process (pid %d)", e.Path, e.PID)
	}
	return fmt.Sprintf("store: %s is in use by another process", e.Path)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// FormatError reports a record that cannot be decoded. Err is ErrUnknownFormat,
// ErrCorrupt or a handlev decode error.
type FormatError struct {
	Key    string // storage key, if known
	Format byte   // the record's first byte (0 when the record is empty)
	Err    error
}

func (e *FormatError) Error() string {
	if errors.Is(e.Err, ErrUnknownFormat) {
		return fmt.Sprintf("store: record %q: unknown format byte %d (this binary knows %d)",
			e.Key, e.Format, recordFormat)
	}
	return fmt.Sprintf("store: record %q: %v", e.Key, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ImportError names the line (1-based) of the import input that failed.
type ImportError struct {
	Line int
	Err  error
}

func (e *ImportError) Error() string {
	return fmt.Sprintf("store: import line %d: %v", e.Line, e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// ConfigError reports a Config field Open rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
