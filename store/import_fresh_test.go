package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// dumpFile is every bucket of db, nested ones included, with its sequence,
// keys and values, as text.
func dumpFile(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	var walk func(path string, bk *bbolt.Bucket)
	walk = func(path string, bk *bbolt.Bucket) {
		fmt.Fprintf(&b, "bucket %s seq %d\n", path, bk.Sequence())
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				walk(path+"/"+string(k), bk.Bucket(k))
				continue
			}
			fmt.Fprintf(&b, "%s %q %x\n", path, k, v)
		}
	}
	err := db.bolt().View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
			walk(string(name), bk)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkBolt runs bbolt's consistency check over db's file.
func checkBolt(t *testing.T, db *DB) {
	t.Helper()
	if err := checkFile(db.bolt()); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
}

func importLine(handle, url string) string {
	return fmt.Sprintf(`{"handle":%q,"values":[{"index":1,"type":"URL","data":%q}]}`+"\n", handle, url)
}

// A write that fails after several flushes' worth of records (here a stored
// record it would replace is corrupt) leaves the database exactly as it
// was: no record written, none replaced, nothing left beside the file.
func TestImportWriteErrorLeavesDatabase(t *testing.T) {
	db := openTest(t, "", true)
	db.importFlushBytes = 16 << 10 // the corrupt record comes several flushes in
	var in strings.Builder
	for i := range 1000 {
		in.WriteString(importLine(fmt.Sprintf("21.T11148/R%04d", i), fmt.Sprintf("https://example.org/%d", i)))
	}
	if _, err := db.Import(strings.NewReader(in.String()), sampleKey); err != nil {
		t.Fatal(err)
	}
	const bad = "21.T11148/R0700"
	err := db.bolt().Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(BucketRecords).Put([]byte(bad), []byte{recordFormat, 1, 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	before := dumpFile(t, db)

	in.Reset()
	for i := range 1000 {
		in.WriteString(importLine(fmt.Sprintf("21.T11148/R%04d", i), fmt.Sprintf("https://example.org/new/%d", i)))
	}
	in.WriteString(importLine("21.T11148/S0001", "https://example.org/s"))
	n, err := db.Import(strings.NewReader(in.String()), sampleKey)
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != 701 || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Import = %d, %v; want an *ImportError on line 701 naming %s and wrapping ErrCorrupt", n, err, bad)
	}
	if n != 0 {
		t.Errorf("Import n = %d, want 0", n)
	}
	if after := dumpFile(t, db); after != before {
		t.Errorf("the database changed although the import failed")
	}
	checkNoTempFiles(t, db)
}

// An import into a database that holds other data copies every other bucket
// as it was (keys, nested buckets, sequences), merges the records, and leaves
// a file that passes bbolt's check, with nothing beside it.
func TestImportKeepsOtherBuckets(t *testing.T) {
	db := openTest(t, "", true)
	db.importFlushBytes = 16 << 10
	var in strings.Builder
	for i := 0; i < 400; i += 2 {
		in.WriteString(importLine(fmt.Sprintf("21.T11148/R%04d", i), "https://example.org/old"))
	}
	if _, err := db.Import(strings.NewReader(in.String()), sampleKey); err != nil {
		t.Fatal(err)
	}
	err := db.bolt().Update(func(tx *bbolt.Tx) error {
		for i, name := range [][]byte{BucketAudit, BucketSNAAs, BucketStats} {
			b := tx.Bucket(name)
			for j := range 300 * (i + 1) {
				if err := b.Put(fmt.Appendf(nil, "k%05d", j), bytes.Repeat([]byte{byte(j)}, j%700)); err != nil {
					return err
				}
			}
			if err := b.SetSequence(uint64(1000 + i)); err != nil {
				return err
			}
		}
		nested, err := tx.Bucket(BucketMeta).CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		if err := nested.SetSequence(7); err != nil {
			return err
		}
		return nested.Put([]byte("a"), []byte("b"))
	})
	if err != nil {
		t.Fatal(err)
	}
	others := func() string {
		var keep []string
		for _, l := range strings.Split(dumpFile(t, db), "\n") {
			if !strings.HasPrefix(l, string(BucketRecords)+" ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	before := others()

	in.Reset()
	for i := 0; i < 400; i += 3 { // replaces every sixth, adds the rest
		in.WriteString(importLine(fmt.Sprintf("21.T11148/R%04d", i), "https://example.org/new"))
	}
	in.WriteString(importLine("21.T11148/R0003", "https://example.org/again")) // repeated in the input
	n, err := db.Import(strings.NewReader(in.String()), sampleKey)
	if err != nil || n != 135 {
		t.Fatalf("Import = %d, %v; want 135, nil", n, err)
	}
	if after := others(); after != before {
		t.Errorf("other buckets changed:\n%s\nwant\n%s", after, before)
	}
	checkBolt(t, db)
	checkNoTempFiles(t, db)
	for i := range 400 {
		h := fmt.Sprintf("21.T11148/R%04d", i)
		s, ok, err := db.Get(strings.ToUpper(h))
		var wantVersion uint64
		url := ""
		switch {
		case i == 3:
			wantVersion, url = 2, "https://example.org/again"
		case i%6 == 0:
			wantVersion, url = 2, "https://example.org/new"
		case i%3 == 0:
			wantVersion, url = 1, "https://example.org/new"
		case i%2 == 0:
			wantVersion, url = 1, "https://example.org/old"
		}
		if url == "" {
			if ok {
				t.Errorf("%s stored, want absent", h)
			}
			continue
		}
		if err != nil || !ok || s.Version != wantVersion || string(s.Record.Values[0].Data) != url {
			t.Errorf("%s = version %d %v, %v, %v; want version %d %q", h, s.Version, s.Record.Values, ok, err, wantVersion, url)
		}
		if i%6 == 0 && !s.Created.Before(s.Updated) {
			t.Errorf("%s replaced: created %v, updated %v; want the first import's created kept", h, s.Created, s.Updated)
		}
	}
}

// Open removes the file an import killed before its rename left behind.
func TestOpenRemovesUnfinishedImport(t *testing.T) {
	db := openTest(t, "", true)
	path := db.Path()
	db.Close()
	if err := os.WriteFile(importFile(path), []byte("half a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, path, true)
	if _, err := os.Stat(importFile(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Open, %s: %v; want it gone", importFile(path), err)
	}
	checkNoTempFiles(t, db)
}
