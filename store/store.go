package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/internal/procfloor"
)

// SchemaVersion is the schema this binary writes and understands. A file with a
// higher version in its meta bucket is refused (ErrSchemaTooNew); a lower one would
// be migrated by Open (none exist yet: 1 is the first version).
const SchemaVersion uint32 = 1

// Bucket names. All are created by Open. Only records and meta are interpreted
// by this package; the others belong to the layers above (the registry, and
// cluster mode and the link checker for their parts), which reach them
// through Tx.Bolt.
var (
	BucketRecords      = []byte("records")      // storage key → encoded record (record.go)
	BucketSNAAs        = []byte("snaas")        // admin: SNAAs
	BucketApplications = []byte("applications") // admin: SNAA applications
	BucketKeys         = []byte("keys")         // admin: API keys by hash
	BucketAudit        = []byte("audit")        // admin: audit log
	BucketURLIndex     = []byte("urlindex")     // admin: URL → handles, reverse lookup
	BucketStats        = []byte("stats")        // admin: statistics counters
	BucketMeta         = []byte("meta")         // this package: schema version, applied etcd revision
	BucketIdempotency  = []byte("idempotency")  // admin: idempotency keys of write requests
	BucketSessions     = []byte("sessions")     // admin: console sessions by token hash
	BucketWebhooks     = []byte("webhooks")     // admin: webhook endpoints, cursors, delivery logs
	BucketLinkcheck    = []byte("linkcheck")    // admin: link check results (registry/linkcheck.go)
	BucketSearch       = []byte("search")       // admin: words and sort keys of records (registry/search.go)
	BucketPeople       = []byte("people")       // admin: people, their invitations and indexes (registry/people.go)
)

var allBuckets = [][]byte{
	BucketRecords, BucketSNAAs, BucketApplications, BucketKeys, BucketAudit,
	BucketURLIndex, BucketStats, BucketMeta, BucketIdempotency, BucketSessions,
	BucketWebhooks,
	BucketLinkcheck,
	BucketSearch,
	BucketPeople,
}

// metaSchemaKey is the key of the schema version (uint32 big-endian) in BucketMeta.
var metaSchemaKey = []byte("schema")

const (
	// lockTimeout bounds how long Open waits for bbolt's exclusive file lock.
	lockTimeout = time.Second
	// Batch tuning: Update callers wait at most batchDelay for company; a batch
	// holds at most batchSize calls. admin groups its concurrent writes itself
	// and calls Update with one group at a time (bbolt's timer cuts a stream of
	// writers into batches that queue on the writer lock), so the delay is
	// mostly added latency to a lone writer and is kept short, while
	// occasional concurrent writers (stats and last-used flushes, operator
	// routes) can still share.
	batchDelay = 500 * time.Microsecond
	batchSize  = 1000
)

// initialMmapSize reserves address space so that growing the file rarely
// needs a remap; a remap waits for every open read transaction (Backup,
// Export), which would stall writers. Address space only, not memory.
// A bigger file gets twice its size (mmapSize). A variable so that a test
// can make a small file grow through remaps.
var initialMmapSize = 1 << 30

// Config configures Open.
type Config struct {
	// Path is the bbolt file. Its directory is created (0700) if missing.
	Path string
	// NoSync skips fsync on commit. Tests and benchmarks only: a crash may lose
	// or corrupt acknowledged writes.
	NoSync bool
	// Logger receives open/close and import progress lines. Nil discards.
	Logger *slog.Logger
}

// DB is the pidnode database. It is safe for concurrent use.
type DB struct {
	// bdb is the open bbolt file; Replace swaps it. Use bolt().
	bdb atomic.Pointer[bbolt.DB]
	cfg Config
	log *slog.Logger
	// importFlushBytes is how much of the fresh file Import's page writer
	// fills before writing it out; importFlushBytes unless a test lowers it.
	importFlushBytes int

	// Freelist checkpoints (see freelistSyncIdle): dirty is set by every
	// commit that did not write the freelist, lastCommit is its time (unix ns).
	dirty         atomic.Bool
	freelistSyncs atomic.Uint64
	lastCommit    atomic.Int64
	syncIdle      time.Duration
	stop          chan struct{}
	stopped       chan struct{}
	closeOnce     sync.Once
	// sig are the commit signals (notify.go).
	sig signals
	// shared is the read transaction record reads share between commits
	// (sharedread.go).
	shared sharedReads
}

// Open opens (creating if needed) the database at cfg.Path, creates every bucket
// and records the schema version. While open, the process's pid is in
// LockFile(cfg.Path). It fails with *LockedError (ErrLocked) if another process
// has the file open, and with *SchemaError (ErrSchemaTooNew) if the file is newer than
// this binary; in both cases the file is left untouched.
func Open(cfg Config) (*DB, error) {
	if cfg.Path == "" {
		return nil, cfgerr.Required("store", "Path", ErrConfig)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	opts := boltOptions(cfg)
	bdb, err := bbolt.Open(cfg.Path, 0o600, opts)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, &LockedError{Path: cfg.Path, PID: lockHolder(cfg.Path)}
		}
		return nil, fmt.Errorf("store: open %s: %w", cfg.Path, err)
	}
	// The flock is ours: say who holds it, for the next Open that finds it taken.
	if err := os.WriteFile(LockFile(cfg.Path), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		log.Warn("store: recording this process in the lock file; a second open will not name it", "err", err)
	}
	bdb.MaxBatchDelay = batchDelay
	bdb.MaxBatchSize = batchSize
	// An import's unfinished file: its process held this flock, so it is gone.
	if err := os.Remove(importFile(cfg.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("store: removing an unfinished import's file", "path", importFile(cfg.Path), "err", err)
	}

	var fileVersion uint32
	err = bdb.Update(func(tx *bbolt.Tx) error {
		// Check the schema before creating anything so a newer file stays untouched.
		if m := tx.Bucket(BucketMeta); m != nil {
			if v := m.Get(metaSchemaKey); v != nil {
				if len(v) != 4 || binary.BigEndian.Uint32(v) == 0 {
					return fmt.Errorf("%w: %x", ErrBadSchema, v)
				}
				fileVersion = binary.BigEndian.Uint32(v)
				if fileVersion > SchemaVersion {
					return &SchemaError{Path: cfg.Path, File: fileVersion, Binary: SchemaVersion}
				}
			}
		}
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("store: create bucket %s: %w", name, err)
			}
		}
		if fileVersion == SchemaVersion {
			return nil
		}
		// New file (or, one day, a migration from an older version).
		return tx.Bucket(BucketMeta).Put(metaSchemaKey, binary.BigEndian.AppendUint32(nil, SchemaVersion))
	})
	if err != nil {
		os.Remove(LockFile(cfg.Path))
		bdb.Close()
		return nil, err
	}
	log.Info("store opened", "path", cfg.Path, "schema", SchemaVersion, "nosync", cfg.NoSync)
	db := &DB{cfg: cfg, log: log, importFlushBytes: importFlushBytes,
		syncIdle: freelistSyncIdle, stop: make(chan struct{}), stopped: make(chan struct{})}
	db.bdb.Store(bdb)
	go db.checkpointFreelist()
	return db, nil
}

// boltOptions are the bbolt options of the file of cfg (Open, Replace).
func boltOptions(cfg Config) *bbolt.Options {
	opts := &bbolt.Options{
		Timeout: lockTimeout,
		NoSync:  cfg.NoSync,
		// Freelist as a hashmap: O(1) allocation in big files.
		FreelistType: bbolt.FreelistMapType,
		// The freelist is not written by every commit: writing it costs
		// O(F log F) CPU for F free pages (the hashmap freelist sorts every
		// free page id) plus F×8 bytes of I/O, per commit. After a large
		// import F runs to tens of thousands, and that CPU in every commit
		// would starve a resolver sharing the core with a single writer.
		// The freelist is derived data: it is
		// written by a checkpoint commit once writes pause for
		// freelistSyncIdle, and by Close, so that a restart reads it from
		// its pages. Only a crash during or within freelistSyncIdle of a
		// burst of writes leaves a file without it, and then Open rebuilds
		// it by walking every page of the file. Records
		// and their durability are untouched: each commit still fsyncs its
		// pages and then its meta.
		NoFreelistSync: true,
	}
	if bits.UintSize == 64 {
		opts.InitialMmapSize = mmapSize(cfg.Path)
	}
	return opts
}

// mmapSize is the address space Open reserves for the file at path: twice its
// size, at least initialMmapSize. bbolt maps the whole file and, past 1 GiB,
// grows the mapping in 1 GiB steps; each step is a remap that waits for every
// read transaction and blocks new ones (resolver cache misses, key lookups)
// while it unmaps and maps again. With only initialMmapSize reserved, a file
// just below a multiple of 1 GiB would be remapped soon after it starts to
// grow; with twice its size reserved it can grow by its own size first.
// Address space only, not memory.
func mmapSize(path string) int {
	n := int64(initialMmapSize)
	if fi, err := os.Stat(path); err == nil && 2*fi.Size() > n {
		n = 2 * fi.Size()
	}
	return int(n)
}

// Close closes the database. It waits for open transactions to finish.
//
// Before closing it commits once more with the freelist written (bbolt
// NoFreelistSync is off for that commit only), so that the next Open reads the
// freelist instead of rebuilding it by walking every page.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.stop)
		<-db.stopped
	})
	if err := db.syncFreelist(); err != nil && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		db.log.Warn("store: writing the freelist at close; the next open rebuilds it", "err", err)
	}
	// While the flock is still held, so that the file of the next holder is
	// never the one removed.
	if err := os.Remove(LockFile(db.cfg.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		db.log.Warn("store: removing the lock file", "err", err)
	}
	db.closeShared()
	if err := db.bolt().Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	db.log.Info("store closed", "path", db.cfg.Path)
	return nil
}

// LockFile is the file beside the database at path in which the process that
// holds the database open records its pid (decimal, one line). It is only a
// label: bbolt's flock on the database file alone decides who may open it, so
// a lock file left by a process that crashed blocks nothing; the next Open
// overwrites it, and Close removes it.
func LockFile(path string) string { return path + ".lock" }

// lockHolder returns the pid recorded in the lock file of path if that
// process is running, else 0.
func lockHolder(path string) int {
	b, err := os.ReadFile(LockFile(path))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0
	}
	defer p.Release()
	// Signal 0 checks that the process exists without disturbing it; EPERM
	// means it exists but belongs to another user.
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	return pid
}

// syncFreelist commits an empty transaction that writes the freelist.
//
// bbolt reads DB.NoFreelistSync in Commit, under its writer lock, so the flag
// is only ever written inside a write transaction: off here, and on again at
// the start of every Update. (A write transaction opened on the
// bbolt handle directly may find it off and then writes
// the freelist too: slower, never wrong.)
func (db *DB) syncFreelist() error {
	if db.bolt().IsReadOnly() {
		return nil
	}
	procfloor.Enter()
	defer procfloor.Exit()
	db.beginWrite()
	defer db.endWrite()
	err := db.retry(func(b *bbolt.DB) error {
		return b.Update(func(tx *bbolt.Tx) error {
			b.NoFreelistSync = false
			return nil
		})
	})
	if err == nil {
		db.freelistSyncs.Add(1)
	}
	return err
}

// FreelistSyncs is the number of commits that only wrote the freelist (the
// checkpoints of checkpointFreelist and the one of Close): the transaction ids
// those commits took belong to no write of a caller.
func (db *DB) FreelistSyncs() uint64 { return db.freelistSyncs.Load() }

// Path returns the database file name.
func (db *DB) Path() string { return db.cfg.Path }

// Stats returns bbolt's statistics (a passthrough of bbolt.DB.Stats).
func (db *DB) Stats() bbolt.Stats { return db.bolt().Stats() }

// View runs fn in a read-only transaction. Nothing obtained from tx.Bolt() may be
// used after fn returns; Tx.Record and Tx.ForEachRecord return owned memory.
func (db *DB) View(fn func(tx *Tx) error) error {
	return db.retry(func(b *bbolt.DB) error {
		return b.View(func(btx *bbolt.Tx) error { return fn(&Tx{tx: btx, db: db}) })
	})
}

// bolt is the open bbolt file.
func (db *DB) bolt() *bbolt.DB { return db.bdb.Load() }

// retry runs op on the open bbolt file, and once more on the new one when
// Replace closed the file op got between its load and its transaction (a
// closed file refuses to begin one, so op did nothing).
func (db *DB) retry(op func(b *bbolt.DB) error) error {
	for {
		b := db.bolt()
		err := op(b)
		if errors.Is(err, berrors.ErrDatabaseNotOpen) && db.bolt() != b {
			continue
		}
		return err
	}
}

// Update runs fn in a read-write transaction that may be shared with concurrent
// Update calls (bbolt DB.Batch): they commit together, with one fsync, and Update
// returns only after the commit is on disk (unless Config.NoSync).
//
// fn may be called more than once (when a batch partner fails, bbolt rolls the
// shared transaction back and re-runs the others), so fn must be idempotent: all
// its effects go through tx, and anything it does outside tx (counters, channel
// sends, cache invalidation) must happen after Update returns nil. If fn returns an
// error, its changes are rolled back and Update returns that error.
//
// A batch waits up to batchDelay for company, so Update is for concurrent request
// handlers; a single goroutine doing many writes should group them in one Update.
//
// While a commit waits for the disk, a process on one processor keeps a
// second one (internal/procfloor), so that readers are not stopped by fsync.
func (db *DB) Update(fn func(tx *Tx) error) error {
	procfloor.Enter()
	defer procfloor.Exit()
	db.beginWrite()
	defer db.endWrite()
	err := db.retry(func(b *bbolt.DB) error {
		return b.Batch(func(btx *bbolt.Tx) error {
			b.NoFreelistSync = true // see syncFreelist
			return fn(&Tx{tx: btx, db: db})
		})
	})
	db.noteCommit()
	return err
}

// UpdateAlone is Update without the batch window, for a single goroutine
// that groups its own writes (a cluster node's applier, the registry's group
// commit): it commits at once instead of waiting for company that never
// comes. fn runs once.
func (db *DB) UpdateAlone(fn func(tx *Tx) error) error {
	procfloor.Enter()
	defer procfloor.Exit()
	db.beginWrite()
	defer db.endWrite()
	err := db.retry(func(b *bbolt.DB) error {
		return b.Update(func(btx *bbolt.Tx) error {
			b.NoFreelistSync = true // see syncFreelist
			return fn(&Tx{tx: btx, db: db})
		})
	})
	db.noteCommit()
	return err
}

// freelistSyncIdle is how long writes must pause before a checkpoint commit
// writes the freelist (checkpointFreelist). A burst of writes pays nothing for
// the freelist; a node that is mostly read, as a resolver is, has its
// freelist on disk nearly all the time, so that even a crash rarely leaves
// Open a tree walk to do.
// A variable for tests; Open copies it into the DB.
var freelistSyncIdle = time.Second

// noteCommit records a write transaction (committed or not: a spare
// checkpoint is harmless) for checkpointFreelist.
func (db *DB) noteCommit() {
	db.lastCommit.Store(time.Now().UnixNano())
	db.dirty.Store(true)
}

// checkpointFreelist writes the freelist once writes have paused for
// freelistSyncIdle. It runs from Open until Close.
func (db *DB) checkpointFreelist() {
	defer close(db.stopped)
	t := time.NewTicker(db.syncIdle / 2)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		if !db.dirty.Load() || time.Since(time.Unix(0, db.lastCommit.Load())) < db.syncIdle {
			continue
		}
		db.dirty.Store(false) // a commit from now on sets it again
		if err := db.syncFreelist(); err != nil {
			db.dirty.Store(true)
			db.log.Warn("store: writing the freelist", "err", err)
		}
	}
}

// Load returns the record stored under key. It implements cache.Source. The
// returned record owns its memory.
func (db *DB) Load(key string) (handlev.Record, bool, error) {
	s, ok, err := db.Get(key)
	return s.Record, ok, err
}

// Get returns the record stored under key with its version and times.
func (db *DB) Get(key string) (Stored, bool, error) {
	s, _, ok, err := db.GetDerived(key)
	return s, ok, err
}

// LoadDerived is Load with the record's derived part (handlev.Derived; nil
// for a record stored before it existed), which shares the record's memory.
// It implements cache.DerivedSource.
func (db *DB) LoadDerived(key string) (handlev.Record, handlev.Derived, bool, error) {
	s, d, ok, err := db.GetDerived(key)
	return s.Record, d, ok, err
}

// GetDerived is Get with the record's derived part.
func (db *DB) GetDerived(key string) (Stored, handlev.Derived, bool, error) {
	if r := db.sharedRead(); r != nil {
		s, d, ok, err := readRecord(r.get(key), key)
		r.release()
		return s, d, ok, err
	}
	var (
		s  Stored
		d  handlev.Derived
		ok bool
	)
	err := db.retry(func(b *bbolt.DB) error {
		return b.View(func(btx *bbolt.Tx) error {
			var err error
			s, d, ok, err = getRecordDerived(btx, key)
			return err
		})
	})
	return s, d, ok, err
}

// Backup writes a consistent snapshot of the whole database file to w and returns
// the number of bytes written. It runs in one read transaction, so writers keep
// going; the snapshot is the state as of the start of the call.
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	err := db.retry(func(b *bbolt.DB) error {
		return b.View(func(btx *bbolt.Tx) error {
			var err error
			n, err = btx.WriteTo(w)
			return err
		})
	})
	if err != nil {
		return n, fmt.Errorf("store: backup: %w", err)
	}
	return n, nil
}
