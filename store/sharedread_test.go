package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/handlev"
)

// sharedRecord is record i at version v, with pad bytes of data so that a
// few hundred writes grow the file.
func sharedRecord(i int, v uint64, pad int) Stored {
	s := benchRecord(i)
	s.Version = v
	s.Record.Values = append(s.Record.Values, handlev.Value{Index: 5, Type: "PAD",
		Data: bytes.Repeat([]byte{byte('a' + v%26)}, pad), TTL: 86400, Perm: handlev.PermDefault})
	return s
}

// TestSharedReadSeesEveryCommit: a read that begins after an Update returned
// sees that Update's write, whether the read before it installed a shared
// transaction or not.
func TestSharedReadSeesEveryCommit(t *testing.T) {
	db := openTest(t, "", true)
	s := sharedRecord(1, 1, 10)
	key, _ := sampleKey(s.Record.Handle)
	for v := uint64(1); v <= 50; v++ {
		s = sharedRecord(1, v, 10)
		update := db.Update
		if v%2 == 0 {
			update = db.UpdateAlone
		}
		if err := update(func(tx *Tx) error { return tx.PutRecord(key, &s) }); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the first read may begin the shared transaction, the second uses it
			got, ok, err := db.Get(key)
			if err != nil || !ok || got.Version != v {
				t.Fatalf("Get after the write of version %d = version %d, %v, %v", v, got.Version, ok, err)
			}
		}
	}
}

// TestSharedReadWhileFileGrows: readers in a tight loop keep a shared read
// transaction busy while a writer grows a file mapped small through many
// remaps (each waits for the read transactions of the old mapping). Neither
// side may stall, and every read finds the version its writer had
// committed when the read began, or a later one.
func TestSharedReadWhileFileGrows(t *testing.T) {
	defer func(n int) { initialMmapSize = n }(initialMmapSize)
	initialMmapSize = 32 << 10
	db := openTest(t, filepath.Join(t.TempDir(), "grow.db"), true)
	const records = 32
	keys := make([]string, records)
	var committed [records]atomic.Uint64
	err := db.Update(func(tx *Tx) error {
		for i := range keys {
			s := sharedRecord(i, 1, 100)
			keys[i], _ = sampleKey(s.Record.Handle)
			if err := tx.PutRecord(keys[i], &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range committed {
		committed[i].Store(1)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var reads atomic.Int64
	for r := range 3 {
		wg.Go(func() {
			for n := r; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := n % records
				floor := committed[i].Load()
				got, ok, err := db.Get(keys[i])
				if err != nil || !ok || got.Version < floor {
					errs <- fmt.Errorf("Get(%s) = version %d, %v, %v; committed before the read: %d", keys[i], got.Version, ok, err, floor)
					return
				}
				reads.Add(1)
			}
		})
	}
	done := make(chan error, 1)
	go func() {
		// Each round rewrites every record larger than before: freed pages
		// cannot hold them, so the file grows past mapping after mapping.
		for round := uint64(2); round <= 9; round++ {
			for i := range keys {
				s := sharedRecord(i, round, int(round)*1500)
				if err := db.Update(func(tx *Tx) error { return tx.PutRecord(keys[i], &s) }); err != nil {
					done <- err
					return
				}
				committed[i].Store(round)
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatal("writes stalled for 60 s with readers in a shared read transaction")
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if reads.Load() == 0 {
		t.Fatal("no read ran during the writes")
	}
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 16*int64(initialMmapSize) {
		t.Fatalf("file of %d bytes: the writes did not grow it through remaps", fi.Size())
	}
}

// TestSharedReadAcrossReplaceAndClose: Replace and Close do not wait for
// the shared read transaction, and reads after Replace see the new file.
func TestSharedReadAcrossReplaceAndClose(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, filepath.Join(dir, "pidnode.db"), true)
	old := sharedRecord(1, 1, 10)
	key, _ := sampleKey(old.Record.Handle)
	if err := db.Update(func(tx *Tx) error { return tx.PutRecord(key, &old) }); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.Get(key); err != nil || !ok || got.Version != 1 {
		t.Fatalf("Get = version %d, %v, %v", got.Version, ok, err)
	}
	fresh := filepath.Join(dir, "fresh.db")
	fdb, err := Open(Config{Path: fresh, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	nw := sharedRecord(1, 7, 10)
	if err := fdb.Update(func(tx *Tx) error { return tx.PutRecord(key, &nw) }); err != nil {
		t.Fatal(err)
	}
	if err := fdb.Close(); err != nil {
		t.Fatal(err)
	}
	replaced := make(chan error, 1)
	go func() { replaced <- db.Replace(fresh) }()
	select {
	case err := <-replaced:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Replace waits on the shared read transaction")
	}
	if got, ok, err := db.Get(key); err != nil || !ok || got.Version != 7 {
		t.Fatalf("Get after Replace = version %d, %v, %v; want 7", got.Version, ok, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits on the shared read transaction")
	}
	if _, _, err := db.Get(key); err == nil {
		t.Fatal("Get after Close succeeded")
	}
}
