package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/handlev"
	"pidnode/internal/procfloor"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// openTest opens a fresh database in t.TempDir (or at path, if given).
func openTest(t testing.TB, path string, noSync bool) *DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "pidnode.db")
	}
	db, err := Open(Config{Path: path, NoSync: noSync})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sampleRecords covers every value kind: plain strings, binary data (base64 in
// JSON), HS_ADMIN, HS_VLIST, references, absolute and relative TTLs,
// non-default permissions, zero and non-zero timestamps, empty data, Unicode.
func sampleRecords() []Stored {
	ts := time.Date(2024, 5, 17, 9, 30, 0, 123456789, time.UTC)
	bin := make([]byte, 64)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	return []Stored{
		{
			Version: 1, Created: ts, Updated: ts,
			Record: handlev.Record{Handle: "21.T11148/svc/DS/ABCD-EFGH-1", Values: []handlev.Value{
				{Index: 1, Type: handlev.TypeURL, Data: []byte("https://example.org/a?b=c&d=<e>"), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermDefault},
				{Index: 2, Type: handlev.TypeStatus, Data: []byte("REGISTERED"), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermDefault},
				{Index: 100, Type: handlev.TypeAdmin, Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/21.T11148", Index: 200}), TTL: 86400, Timestamp: 1715938200, Perm: handlev.PermAdminRead | handlev.PermAdminWrite},
			}},
		},
		{
			Version: 7, Created: ts.Add(-time.Hour), Updated: ts,
			Record: handlev.Record{Handle: "21.T11148/BIN", Values: []handlev.Value{
				{Index: 1, Type: "HS_PUBKEY", Data: bin, TTLType: handlev.TTLAbsolute, TTL: 1893456000, Timestamp: 0, Perm: handlev.PermDefault},
				{Index: 2, Type: "EMPTY", Data: []byte{}, TTL: 0, Perm: handlev.PermPublicRead},
				{Index: 3, Type: "DESC", Data: []byte("naïve — ünïcödé ✓"), TTL: -1, Timestamp: 1, Perm: handlev.PermDefault | handlev.PermPublicWrite},
			}},
		},
		{
			// Zero times: imported legacy records may have none.
			Version: 1,
			Record: handlev.Record{Handle: "21.T11148/VLIST", Values: []handlev.Value{
				{Index: 1, Type: handlev.TypeVList, Data: handlev.AppendVList(nil, []handlev.Ref{{Handle: "21.T11148/A", Index: 1}, {Handle: "21.T11148/B", Index: 300}}), TTL: 3600, Perm: handlev.PermDefault},
				{Index: 2, Type: handlev.TypeRelated, Data: []byte("see refs"), TTL: 3600, Timestamp: 1700000000, Perm: handlev.PermDefault,
					Refs: []handlev.Ref{{Handle: "21.T11148/svc/DS/ABCD-EFGH-1", Index: 1}, {Handle: "0.NA/21.T11148", Index: 200}}},
			}},
		},
	}
}

// normalize makes nil and empty slices compare equal.
func normalize(s Stored) Stored {
	vs := make([]handlev.Value, len(s.Record.Values))
	for i, v := range s.Record.Values {
		if len(v.Data) == 0 {
			v.Data = nil
		}
		if len(v.Refs) == 0 {
			v.Refs = nil
		}
		vs[i] = v
	}
	if len(vs) == 0 {
		vs = nil
	}
	s.Record.Values = vs
	return s
}

func sampleKey(handle string) (string, error) { return strings.ToUpper(handle), nil }

func putAll(t testing.TB, db *DB, recs []Stored) {
	t.Helper()
	err := db.Update(func(tx *Tx) error {
		for i := range recs {
			k, _ := sampleKey(recs[i].Record.Handle)
			if err := tx.PutRecord(k, &recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rt.db")
	db, err := Open(Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	recs := sampleRecords()
	putAll(t, db, recs)
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db = openTest(t, path, false)
	for _, want := range recs {
		key, _ := sampleKey(want.Record.Handle)
		got, ok, err := db.Get(key)
		if err != nil || !ok {
			t.Fatalf("Get(%q) = _, %v, %v; want found", key, ok, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("Get(%q) =\n%+v\nwant\n%+v", key, got, want)
		}
		rec, ok, err := db.Load(key)
		if err != nil || !ok || !reflect.DeepEqual(normalize(Stored{Record: rec}), normalize(Stored{Record: want.Record})) {
			t.Errorf("Load(%q) = %+v, %v, %v", key, rec, ok, err)
		}
	}
	if _, ok, err := db.Load("21.T11148/NOPE"); ok || err != nil {
		t.Errorf("Load(missing) = _, %v, %v; want false, nil", ok, err)
	}
	// ForEachRecord visits in key order and hands out owned records.
	var keys []string
	var kept []*Stored
	err = db.View(func(tx *Tx) error {
		return tx.ForEachRecord(func(k string, s *Stored) error {
			keys = append(keys, k)
			kept = append(kept, s)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"21.T11148/BIN", "21.T11148/SVC/DS/ABCD-EFGH-1", "21.T11148/VLIST"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("ForEachRecord keys = %q, want %q", keys, want)
	}
	if kept[0].Record.Handle != "21.T11148/BIN" || kept[0].Version != 7 {
		t.Errorf("kept record after View = %+v", kept[0])
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, s := range sampleRecords() {
		t.Run(s.Record.Handle, func(t *testing.T) {
			b := appendStored(nil, &s)
			if n := encodedSize(&s); n != len(b) {
				t.Errorf("encodedSize = %d, encoded %d bytes", n, len(b))
			}
			got, err := decodeStored(b)
			if err != nil {
				t.Fatalf("decodeStored: %v", err)
			}
			if !reflect.DeepEqual(normalize(got), normalize(s)) {
				t.Errorf("decodeStored(appendStored(s)) = %+v, want %+v", got, s)
			}
			// Decoded memory must not alias the input.
			for i := range b {
				b[i] = 0xEE
			}
			if !reflect.DeepEqual(normalize(got), normalize(s)) {
				t.Errorf("decoded record changed when the input was overwritten")
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	good := appendStored(nil, &sampleRecords()[0])
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"unknown format", append([]byte{recordFormat + 1}, good[1:]...), ErrUnknownFormat},
		{"format zero", append([]byte{0}, good[1:]...), ErrUnknownFormat},
		{"short header", good[:20], ErrCorrupt},
		{"handle length past end", func() []byte {
			b := bytes.Clone(good[:recordHeaderLen+4])
			binary.BigEndian.PutUint32(b[recordHeaderLen:], 1000)
			return b
		}(), ErrCorrupt},
		{"handle length huge", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[recordHeaderLen:], 0xFFFFFFFF)
			return b
		}(), ErrCorrupt},
		{"trailing bytes", append(bytes.Clone(good), 0), ErrCorrupt},
		{"truncated values", good[:len(good)-3], handlev.ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStored(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("decodeStored(%s) error = %v, want %v", tt.name, err, tt.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
		})
	}
}

func TestUnknownFormatStored(t *testing.T) {
	db := openTest(t, "", true)
	err := db.Update(func(tx *Tx) error {
		return tx.Bolt().Bucket(BucketRecords).Put([]byte("21.T11148/FUTURE"), []byte{9, 0, 0, 0})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = db.Get("21.T11148/FUTURE")
	var fe *FormatError
	if !errors.Is(err, ErrUnknownFormat) || !errors.As(err, &fe) || fe.Key != "21.T11148/FUTURE" || fe.Format != 9 {
		t.Fatalf("Get(unknown format) error = %#v, want *FormatError{Key, Format 9} wrapping ErrUnknownFormat", err)
	}
	if !strings.Contains(err.Error(), "unknown format byte 9") {
		t.Errorf("error text %q does not name the format byte", err)
	}
	// Export refuses it too rather than skip it silently.
	if err := db.Export(&bytes.Buffer{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Export error = %v, want ErrUnknownFormat", err)
	}
}

func TestOpenBuckets(t *testing.T) {
	db := openTest(t, "", true)
	err := db.View(func(tx *Tx) error {
		for _, name := range allBuckets {
			if tx.Bolt().Bucket(name) == nil {
				return fmt.Errorf("bucket %s missing", name)
			}
		}
		v := tx.Bolt().Bucket(BucketMeta).Get(metaSchemaKey)
		if len(v) != 4 || binary.BigEndian.Uint32(v) != SchemaVersion {
			return fmt.Errorf("schema = %x, want %d", v, SchemaVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if db.Path() == "" {
		t.Error("Path() is empty")
	}
}

func TestSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := Open(Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *Tx) error {
		return tx.Bolt().Bucket(BucketMeta).Put(metaSchemaKey, binary.BigEndian.AppendUint32(nil, 99))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	_, err = Open(Config{Path: path})
	var se *SchemaError
	if !errors.Is(err, ErrSchemaTooNew) || !errors.As(err, &se) || se.File != 99 || se.Binary != SchemaVersion {
		t.Fatalf("Open(schema 99) error = %v, want *SchemaError{File: 99, Binary: %d}", err, SchemaVersion)
	}
	if !strings.Contains(err.Error(), "99") || !strings.Contains(err.Error(), fmt.Sprint(SchemaVersion)) {
		t.Errorf("error %q does not name both versions", err)
	}
	// The file is left as it was, and the lock released.
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	bdb.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(BucketMeta).Get(metaSchemaKey); binary.BigEndian.Uint32(v) != 99 {
			t.Errorf("schema after refused open = %x, want 99", v)
		}
		return nil
	})
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	openTest(t, path, true)
	start := time.Now()
	_, err := Open(Config{Path: path})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open error = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %v", d)
	}
}

func TestPutRecordErrors(t *testing.T) {
	db := openTest(t, "", true)
	big := make([]byte, handlev.MaxLength+1)
	tests := []struct {
		name string
		key  string
		s    Stored
		want error
	}{
		{"empty key", "", Stored{Record: handlev.Record{Handle: "X/Y"}}, ErrEmptyKey},
		{"empty handle", "X/Y", Stored{}, ErrEmptyKey},
		{"data too long", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", Data: big}}}}, handlev.ErrTooLong},
		{"key too long", strings.Repeat("K", handlev.MaxHandleLen+1), Stored{Record: handlev.Record{Handle: "X/Y"}}, handlev.ErrTooLong},
		{"too many refs", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", Refs: make([]handlev.Ref, handlev.MaxRefs+1)}}}}, handlev.ErrTooLong},
		{"negative timestamp", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", Timestamp: -1}}}}, ErrNotStorable},
		{"timestamp beyond uint32", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", Timestamp: 1 << 32}}}}, ErrNotStorable},
		{"high permission bits", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", Perm: 0x1E}}}}, ErrNotStorable},
		{"bad ttl type", "X/Y", Stored{Record: handlev.Record{Handle: "X/Y", Values: []handlev.Value{{Index: 1, Type: "URL", TTLType: 2}}}}, ErrNotStorable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.Update(func(tx *Tx) error { return tx.PutRecord(tt.key, &tt.s) })
			if !errors.Is(err, tt.want) {
				t.Fatalf("PutRecord error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestConcurrentUpdate: 64 goroutines write through Update; every acknowledged
// write survives a reopen, a failing caller does not take its batch partners
// down, and the writes share far fewer commits than there are writes.
func TestConcurrentUpdate(t *testing.T) {
	const (
		workers = 64
		each    = 20
		failer  = 13 // worker whose 5th write fails on purpose
	)
	path := filepath.Join(t.TempDir(), "conc.db")
	db, err := Open(Config{Path: path}) // with fsync: the real thing
	if err != nil {
		t.Fatal(err)
	}
	txids := make([]int, workers*each)
	errFail := errors.New("deliberate failure")
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("21.T11148/W%02d-%03d", w, i)
				err := db.Update(func(tx *Tx) error {
					txids[w*each+i] = tx.Bolt().ID()
					s := Stored{Version: 1, Record: handlev.Record{Handle: key, Values: []handlev.Value{{Index: 1, Type: "URL", Data: []byte("https://example.org/" + key)}}}}
					if err := tx.PutRecord(key, &s); err != nil {
						return err
					}
					if w == failer && i == 5 {
						return errFail
					}
					return nil
				})
				if w == failer && i == 5 {
					if !errors.Is(err, errFail) {
						t.Errorf("failing Update returned %v", err)
					}
					txids[w*each+i] = -1
					continue
				}
				if err != nil {
					t.Errorf("Update(%s): %v", key, err)
				}
			}
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	commits := map[int]bool{}
	for _, id := range txids {
		if id >= 0 {
			commits[id] = true
		}
	}
	writes := workers*each - 1
	t.Logf("%d writes from %d goroutines shared %d commits (%.1f writes/commit)",
		writes, workers, len(commits), float64(writes)/float64(len(commits)))
	if len(commits) > writes/4 {
		t.Errorf("%d writes took %d commits; want them batched (≤ %d)", writes, len(commits), writes/4)
	}

	db = openTest(t, path, false)
	for w := range workers {
		for i := range each {
			key := fmt.Sprintf("21.T11148/W%02d-%03d", w, i)
			_, ok, err := db.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			if want := !(w == failer && i == 5); ok != want {
				t.Errorf("after reopen, %s present = %v, want %v", key, ok, want)
			}
		}
	}
}

// slowWriter makes a backup take long enough for many commits to land during it.
type slowWriter struct{ w io.Writer }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.w.Write(p)
}

// TestBackupDuringWrites takes backups while a writer commits records 0,1,2…,
// 20 per transaction, with a counter in the same transaction; each backup must
// be a valid bbolt file holding exactly records 0..count-1.
func TestBackupDuringWrites(t *testing.T) {
	const perTx = 20
	dir := t.TempDir()
	db := openTest(t, filepath.Join(dir, "live.db"), true)
	stop := make(chan struct{})
	type result struct {
		written int
		err     error
	}
	done := make(chan result, 1)
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- result{written: i}
				return
			default:
			}
			err := db.Update(func(tx *Tx) error {
				for j := i; j < i+perTx; j++ {
					key := fmt.Sprintf("21.T11148/B%07d", j)
					s := Stored{Version: 1, Record: handlev.Record{Handle: key, Values: []handlev.Value{{Index: 1, Type: "URL", Data: bytes.Repeat([]byte("x"), 200)}}}}
					if err := tx.PutRecord(key, &s); err != nil {
						return err
					}
				}
				return tx.Bolt().Bucket(BucketStats).Put([]byte("count"), binary.BigEndian.AppendUint64(nil, uint64(i+perTx)))
			})
			if err != nil {
				done <- result{written: i, err: err}
				return
			}
			i += perTx
		}
	}()
	// Let the file grow to a few MB, then back up while writing continues.
	for db.count(t) < 5000 {
		time.Sleep(time.Millisecond)
	}
	backupPath := filepath.Join(dir, "backup.db")
	if err := copyFile(db, backupPath); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	before := db.count(t)
	n, err := db.Backup(slowWriter{&buf})
	after := db.count(t)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Backup = %d, %v (buffer %d)", n, err, buf.Len())
	}
	close(stop)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	t.Logf("slow backup of %d bytes: %d records committed while it ran", n, after-before)
	if after == before {
		t.Errorf("no write committed during the slow backup; the test proves nothing")
	}
	path2 := filepath.Join(dir, "backup2.db")
	if err := os.WriteFile(path2, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	checkBackup(t, backupPath, 5000, before)
	if got := checkBackup(t, path2, before, res.written); got >= after {
		t.Errorf("slow backup holds %d records, want the snapshot from its start (%d..%d)", got, before, after-1)
	}
}

func (db *DB) count(t *testing.T) int {
	var n int
	db.View(func(tx *Tx) error {
		if v := tx.Bolt().Bucket(BucketStats).Get([]byte("count")); v != nil {
			n = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return n
}

// checkBackup runs bbolt's consistency check on the backup at path and verifies
// it holds records 0..count-1 exactly, with min ≤ count ≤ max. It returns count.
func checkBackup(t *testing.T, path string, min, max int) int {
	t.Helper()
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("open backup %s: %v", path, err)
	}
	err = bdb.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("backup %s: check: %v", path, err)
		}
		return nil
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	db := openTest(t, path, true)
	count := db.count(t)
	var keys []string
	err = db.View(func(tx *Tx) error {
		return tx.ForEachRecord(func(k string, _ *Stored) error {
			keys = append(keys, k)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < min || count > max || len(keys) != count {
		t.Fatalf("backup %s: counter %d, %d records; want %d..%d", path, count, len(keys), min, max)
	}
	for i, k := range keys {
		if want := fmt.Sprintf("21.T11148/B%07d", i); k != want {
			t.Fatalf("backup %s: record %d is %s, want %s (not a prefix)", path, i, k, want)
		}
	}
	t.Logf("backup %s: %d records, consistent", filepath.Base(path), count)
	return count
}

// Commits do not write the freelist (NoFreelistSync); Close writes it once, so
// that the next open reads it instead of walking the tree. A file left without
// a synced freelist (a crash, a Backup taken while writing) opens all the same.
func TestFreelistWrittenAtClose(t *testing.T) {
	defer func(d time.Duration) { freelistSyncIdle = d }(freelistSyncIdle)
	freelistSyncIdle = time.Hour // no checkpoint during the test
	dir := t.TempDir()
	path := filepath.Join(dir, "pidnode.db")
	db := openTest(t, path, true)
	for i := range 50 {
		s := Stored{Record: handlev.Record{Handle: fmt.Sprintf("21.T1/R%d", i),
			Values: []handlev.Value{{Index: 1, Type: "URL", Data: bytes.Repeat([]byte("x"), 3000)}}}, Version: 1}
		if err := db.Update(func(tx *Tx) error { return tx.PutRecord(s.Record.Handle, &s) }); err != nil {
			t.Fatal(err)
		}
	}
	// A copy taken now has no synced freelist, like a file after a crash.
	crashed := filepath.Join(dir, "crashed.db")
	if err := copyFile(db, crashed); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if committedAtOpen(t, path) {
		t.Error("after Close the file has no synced freelist")
	}
	if !committedAtOpen(t, filepath.Join(dir, "crashed.db")) {
		t.Error("a copy taken while open has a synced freelist: commits write it")
	}

	// Without a synced freelist Open rebuilds it; the records are all there
	// and writes go on.
	if err := copyFile(db2(t, path), crashed); err != nil {
		t.Fatal(err)
	}
	c := openTest(t, crashed, true)
	n := 0
	if err := c.View(func(tx *Tx) error {
		return tx.ForEachRecord(func(string, *Stored) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if n != 50 {
		t.Fatalf("%d records after reopening, want 50", n)
	}
	s := Stored{Record: handlev.Record{Handle: "21.T1/NEW"}, Version: 1}
	if err := c.Update(func(tx *Tx) error { return tx.PutRecord("21.T1/NEW", &s) }); err != nil {
		t.Fatal(err)
	}
}

// db2 opens path for the test (closed at cleanup) and writes to it once, so
// that its meta has no synced freelist.
func db2(t *testing.T, path string) *DB {
	t.Helper()
	db := openTest(t, path, true)
	s := Stored{Record: handlev.Record{Handle: "21.T1/R0"}, Version: 2}
	if err := db.Update(func(tx *Tx) error { return tx.PutRecord("21.T1/R0", &s) }); err != nil {
		t.Fatal(err)
	}
	return db
}

// Open reserves twice the file's size, at least initialMmapSize.
func TestMmapSize(t *testing.T) {
	dir := t.TempDir()
	if got := mmapSize(filepath.Join(dir, "missing.db")); got != initialMmapSize {
		t.Errorf("mmapSize(missing) = %d, want %d", got, initialMmapSize)
	}
	big := filepath.Join(dir, "big.db")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 29); err != nil { // 1.5 GiB, sparse
		t.Fatal(err)
	}
	f.Close()
	if got := mmapSize(big); got != 3<<30 {
		t.Errorf("mmapSize(1.5 GiB file) = %d, want %d", got, 3<<30)
	}
}

// Once writes pause for freelistSyncIdle, a checkpoint commit writes the
// freelist, so that a crash then leaves a file that opens without a tree walk.
func TestFreelistCheckpoint(t *testing.T) {
	defer func(d time.Duration) { freelistSyncIdle = d }(freelistSyncIdle)
	freelistSyncIdle = 20 * time.Millisecond
	dir := t.TempDir()
	db := openTest(t, filepath.Join(dir, "pidnode.db"), true)
	s := Stored{Record: handlev.Record{Handle: "21.T1/A"}, Version: 1}
	if err := db.Update(func(tx *Tx) error { return tx.PutRecord("21.T1/A", &s) }); err != nil {
		t.Fatal(err)
	}
	// hasFreelist copies db as a crash would leave it and reports whether a
	// default bbolt Open of the copy (which writes a missing freelist) commits.
	cp := filepath.Join(dir, "copy.db")
	hasFreelist := func() bool {
		t.Helper()
		if err := copyFile(db, cp); err != nil {
			t.Fatal(err)
		}
		return !committedAtOpen(t, cp)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !hasFreelist() {
		if time.Now().After(deadline) {
			t.Fatal("no freelist checkpoint 10s after the last write")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if db.FreelistSyncs() == 0 {
		t.Error("FreelistSyncs is 0 after a checkpoint wrote the freelist")
	}
}

// committedAtOpen reports whether a default bbolt Open of the file at path
// had to commit, which it does when the file has no synced freelist (it
// writes one).
func committedAtOpen(t *testing.T, path string) bool {
	t.Helper()
	txid := func(opts *bbolt.Options) int {
		bdb, err := bbolt.Open(path, 0o600, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer bdb.Close()
		var id int
		bdb.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	before := txid(&bbolt.Options{ReadOnly: true})
	return txid(nil) != before
}

// On one processor, a write transaction runs with a second one held
// (internal/procfloor), so that readers keep running while its commit waits
// for fsync; the freelist checkpoint too.
func TestWritesHoldASecondProcessor(t *testing.T) {
	onOneProcessor(t)
	db := openTest(t, "", false)
	var during int
	if err := db.Update(func(tx *Tx) error {
		during = runtime.GOMAXPROCS(0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if during != 2 || !procfloor.Raised() {
		t.Fatalf("inside Update: GOMAXPROCS %d, raised %v; want 2, true", during, procfloor.Raised())
	}
	// The checkpoint's commit runs the same way.
	waitDropped(t)
	runtime.GOMAXPROCS(1)
	if err := db.syncFreelist(); err != nil {
		t.Fatal(err)
	}
	if !procfloor.Raised() {
		t.Fatal("after the freelist checkpoint: no second processor held for the linger")
	}
}

// onOneProcessor runs the rest of the test with GOMAXPROCS 1, as on a node
// pinned to one CPU, and skips it when the environment sets GOMAXPROCS
// (procfloor leaves that alone). At the end it waits for procfloor to drop
// the second processor, then puts the runtime's default back.
func onOneProcessor(t *testing.T) {
	t.Helper()
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment: procfloor leaves it alone")
	}
	runtime.GOMAXPROCS(1)
	t.Cleanup(func() {
		waitDropped(t)
		runtime.SetDefaultGOMAXPROCS()
	})
}

// waitDropped waits until procfloor has let go of the second processor.
func waitDropped(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); procfloor.Raised(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second processor was never dropped")
		}
	}
}

// copyFile writes a consistent snapshot of src to path (mode 0600), the way
// Backup does. It writes to path+".tmp", syncs it and renames it over path, so
// path is either the old file or a complete new snapshot.
func copyFile(src *DB, path string) (err error) {
	procfloor.Enter() // writing and syncing a whole file blocks (see Update)
	defer procfloor.Exit()
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = src.Backup(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}
