package store

import (
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"pidnode/internal/unsafeconv"
)

// Record reads (Get, Load) share one bbolt read transaction between
// commits, as etcd's backend does, instead of each beginning and rolling
// back its own: a cache miss then pays a reference count for the
// transaction and none of bbolt's begin (locks, the meta page copy, the
// root bucket) or the records bucket's look-up.
//
// A read transaction holds bbolt's mmap lock, and a commit that grows the
// file remaps under that lock's writer side; a shared transaction kept
// across a commit would deadlock it. So every write (Update, UpdateAlone,
// the freelist checkpoint, Replace, Close) retires the shared transaction
// before it starts (readers already in it finish; the last one rolls it
// back) and, while any write is in flight, readers begin their own
// transactions as before. The first read after the last write ends begins
// the next shared one, which therefore sees every commit whose Update has
// returned: a cache invalidated after an Update never refills from an
// older snapshot. With no writes the transaction stays open, which pins
// nothing: pages are freed only by commits.

// sharedRead is one shared read transaction and its records bucket.
type sharedRead struct {
	tx      *bbolt.Tx
	records *bbolt.Bucket
	// refs counts the readers in the transaction plus one for the DB's own
	// reference, dropped by retire; whoever takes it to zero rolls back.
	refs atomic.Int64
	// cursors are records' cursors between reads: a cursor keeps the
	// stack of its last search, which Bucket.Get would allocate anew.
	cursors sync.Pool
}

// get returns the value stored under key in the records bucket, nil if
// none. Like Bucket.Get, it neither modifies nor keeps key's bytes, and the
// value lives in the mmap: valid until the caller's release.
func (r *sharedRead) get(key string) []byte {
	c, _ := r.cursors.Get().(*bbolt.Cursor)
	if c == nil {
		c = r.records.Cursor()
	}
	k, v := c.Seek(unsafeconv.Bytes(key))
	r.cursors.Put(c)
	if string(k) != key {
		return nil
	}
	return v
}

// acquire takes a reference unless the transaction is already rolled back.
func (r *sharedRead) acquire() bool {
	for {
		n := r.refs.Load()
		if n == 0 {
			return false
		}
		if r.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference, rolling the transaction back with the last.
func (r *sharedRead) release() {
	if r.refs.Add(-1) == 0 {
		_ = r.tx.Rollback() // a read transaction's rollback only releases it
	}
}

// sharedReads is the DB's part: the current transaction and the writes in
// flight.
type sharedReads struct {
	cur atomic.Pointer[sharedRead]
	mu  sync.Mutex // guards writers, closed and installing cur
	// writers counts the writes in flight; no shared transaction is begun
	// while it is above zero.
	writers int
	closed  bool
}

// sharedRead returns the current shared transaction with a reference taken,
// beginning one if no write is in flight; nil when the caller must begin its
// own (a write in flight, the DB closed, or bbolt refused).
func (db *DB) sharedRead() *sharedRead {
	s := &db.shared
	if r := s.cur.Load(); r != nil && r.acquire() {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writers > 0 || s.closed {
		return nil
	}
	if r := s.cur.Load(); r != nil && r.acquire() {
		return r
	}
	tx, err := db.bolt().Begin(false)
	if err != nil {
		return nil
	}
	records := tx.Bucket(BucketRecords)
	if records == nil {
		_ = tx.Rollback()
		return nil
	}
	r := &sharedRead{tx: tx, records: records}
	r.refs.Store(2) // the DB's reference and the caller's
	s.cur.Store(r)
	return r
}

// beginWrite retires the shared transaction and keeps new ones from
// beginning until endWrite; every write to the bbolt file runs between the
// two.
func (db *DB) beginWrite() {
	s := &db.shared
	s.mu.Lock()
	s.writers++
	r := s.cur.Swap(nil)
	s.mu.Unlock()
	if r != nil {
		r.release()
	}
}

func (db *DB) endWrite() {
	s := &db.shared
	s.mu.Lock()
	s.writers--
	s.mu.Unlock()
}

// closeShared retires the shared transaction for good (Close).
func (db *DB) closeShared() {
	s := &db.shared
	s.mu.Lock()
	s.closed = true
	r := s.cur.Swap(nil)
	s.mu.Unlock()
	if r != nil {
		r.release()
	}
}
