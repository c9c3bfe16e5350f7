package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/internal/procfloor"
)

// Warm-up pacing: the file is brought in warmChunk bytes at a time, each in a
// read transaction of its own (a long one would keep bbolt from reusing the
// pages freed by commits meanwhile, and would hold off a remap), with
// warmPause between chunks, so that the requests served meanwhile get the
// processor and the disk first.
const (
	warmChunk = 4 << 20
	warmPause = 2 * time.Millisecond
)

// Warm brings the first maxBytes bytes of the database file (all of it if it
// is smaller) into memory, so that the first cache misses after a start do
// not each wait for a page of the B+tree to come from disk and be mapped: on
// Linux it populates bbolt's mapping of the file (madvise MADV_POPULATE_READ,
// page tables included), elsewhere, or on a kernel without it, it reads the
// file through the page cache. It is meant to run in a goroutine of its own
// after start-up; it stops when ctx is done, when the DB is closed, or after
// maxBytes, and returns how many bytes it brought in. The memory is page
// cache, which the kernel may reclaim, not heap: it is not charged to any
// budget, and maxBytes is what bounds it.
func (db *DB) Warm(ctx context.Context, maxBytes int64) (int64, error) {
	var (
		done   int64
		mapped = true
		f      *os.File
	)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	buf := []byte(nil)
	for done < maxBytes {
		if err := ctx.Err(); err != nil {
			return done, nil
		}
		var n int64
		err := db.retry(func(b *bbolt.DB) error {
			return b.View(func(tx *bbolt.Tx) error {
				size := min(tx.Size(), maxBytes)
				n = min(size-done, warmChunk)
				if n <= 0 {
					n = 0
					return nil
				}
				// Bringing in a chunk the page cache lacks waits for the
				// disk, in the kernel: the other goroutines keep a
				// processor meanwhile (procfloor).
				procfloor.Enter()
				defer procfloor.Exit()
				if mapped {
					// The transaction holds bbolt's mapping in place: a
					// remap waits for it to end.
					if populate(b.Info().Data, done, n) == nil {
						return nil
					}
					mapped = false
				}
				if f == nil {
					var err error
					if f, err = os.Open(b.Path()); err != nil {
						return err
					}
					buf = make([]byte, 256<<10)
				}
				for off := done; off < done+n; {
					m, err := f.ReadAt(buf[:min(int64(len(buf)), done+n-off)], off)
					off += int64(m)
					if err == io.EOF {
						n = off - done
						break
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			if db.closed() {
				return done, nil
			}
			return done, fmt.Errorf("store: warm: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
		select {
		case <-ctx.Done():
			return done, nil
		case <-time.After(warmPause):
		}
	}
	return done, nil
}

// closed reports whether Close has begun.
func (db *DB) closed() bool {
	select {
	case <-db.stop:
		return true
	default:
		return false
	}
}
