package store

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
)

// derivedRecord is a record with a RESOURCE value naming one representation
// variant, url.
func derivedRecord(handle, url string, version uint64) Stored {
	return Stored{Version: version, Record: handlev.Record{Handle: handle, Values: []handlev.Value{
		{Index: 1, Type: handlev.TypeURL, Data: []byte("https://landing.example.org/" + handle), TTL: 86400, Perm: handlev.PermDefault},
		{Index: 14, Type: handlev.TypeResource, Data: []byte(`{"label":"L","resource_category":"SAMPLE","representation_variants":[{"variant_url":"` + url + `","media_type":"text/turtle"}]}`), TTL: 86400, Perm: handlev.PermDefault},
	}}}
}

// plainEncoding is s in the layout written before the derived part: what a
// file or an etcd written by an older binary holds.
func plainEncoding(t testing.TB, s *Stored) []byte {
	t.Helper()
	b := appendStored(nil, s)
	hl := int(binary.BigEndian.Uint32(b[recordHeaderLen:]))
	at := recordHeaderLen + 4 + hl
	dl := int(binary.BigEndian.Uint32(b[at:]))
	plain := append(bytes.Clone(b[:at]), b[at+4+dl:]...)
	plain[0] = recordFormatPlain
	return plain
}

// checkStoredDerived asserts that key reads back with the derived part its
// values give, whose variant is url.
func checkStoredDerived(t *testing.T, db *DB, key, url string) {
	t.Helper()
	s, d, ok, err := db.GetDerived(key)
	if err != nil || !ok {
		t.Fatalf("GetDerived(%s) = %v, %v", key, ok, err)
	}
	if want := handlev.AppendDerived(nil, s.Record.Values); !bytes.Equal(d, want) {
		t.Fatalf("GetDerived(%s) derived %x, the values give %x", key, d, want)
	}
	r, ok, known := d.Resource(&s.Record.Values[1], nil)
	if !known || !ok || len(r.Variants) != 1 || string(r.Variants[0].URL) != url {
		t.Fatalf("GetDerived(%s): derived resource %+v, ok %v, known %v; want variant %s", key, r, ok, known, url)
	}
}

// TestDerivedWrittenByEveryWriter: PutRecord (create and update),
// PutRecordRaw (a cluster's apply, also of a plain record an older node
// sent) and Import store the derived part of the values they write.
func TestDerivedWrittenByEveryWriter(t *testing.T) {
	db := openTest(t, "", true)
	a := derivedRecord("21.T11148/A", "https://data.example.org/a1", 1)
	if err := db.Update(func(tx *Tx) error { return tx.PutRecord("A", &a) }); err != nil {
		t.Fatal(err)
	}
	checkStoredDerived(t, db, "A", "https://data.example.org/a1")
	a = derivedRecord("21.T11148/A", "https://data.example.org/a2", 2)
	if err := db.Update(func(tx *Tx) error { return tx.PutRecord("A", &a) }); err != nil {
		t.Fatal(err)
	}
	checkStoredDerived(t, db, "A", "https://data.example.org/a2")

	b := derivedRecord("21.T11148/B", "https://data.example.org/b", 1)
	raw, err := EncodeStored("B", &b)
	if err != nil {
		t.Fatal(err)
	}
	c := derivedRecord("21.T11148/C", "https://data.example.org/c", 1)
	err = db.UpdateAlone(func(tx *Tx) error {
		if err := tx.PutRecordRaw("B", raw); err != nil {
			return err
		}
		return tx.PutRecordRaw("C", plainEncoding(t, &c))
	})
	if err != nil {
		t.Fatal(err)
	}
	checkStoredDerived(t, db, "B", "https://data.example.org/b")
	checkStoredDerived(t, db, "C", "https://data.example.org/c")

	line := `{"handle":"21.T11148/D","values":[{"index":14,"type":"RESOURCE","data":{"format":"string","value":"{\"representation_variants\":[{\"variant_url\":\"https://data.example.org/d\"}]}"},"ttl":86400,"timestamp":"2024-05-17T09:30:00Z"},{"index":1,"type":"URL","data":{"format":"string","value":"https://landing.example.org/d"},"ttl":86400,"timestamp":"2024-05-17T09:30:00Z"}]}` + "\n"
	if _, err := db.Import(strings.NewReader(line), sampleKey); err != nil {
		t.Fatal(err)
	}
	s, d, ok, err := db.GetDerived("21.T11148/D")
	if err != nil || !ok {
		t.Fatalf("GetDerived(imported) = %v, %v", ok, err)
	}
	r, ok, known := d.Resource(&s.Record.Values[0], nil)
	if !known || !ok || len(r.Variants) != 1 || string(r.Variants[0].URL) != "https://data.example.org/d" {
		t.Fatalf("imported record: derived resource %+v, ok %v, known %v", r, ok, known)
	}
	// The records written before the import kept theirs.
	checkStoredDerived(t, db, "A", "https://data.example.org/a2")
}

// TestPlainRecordsRead: a record stored in the plain format (a file
// written before the derived part) reads as it was written, with no derived
// part, so that readers parse it.
func TestPlainRecordsRead(t *testing.T) {
	db := openTest(t, "", true)
	want := derivedRecord("21.T11148/OLD", "https://data.example.org/old", 3)
	err := db.Update(func(tx *Tx) error {
		return tx.Bolt().Bucket(BucketRecords).Put([]byte("OLD"), plainEncoding(t, &want))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, d, ok, err := db.GetDerived("OLD")
	if err != nil || !ok || d != nil {
		t.Fatalf("GetDerived(plain) = derived %x, %v, %v", d, ok, err)
	}
	if got.Version != 3 || got.Record.Handle != want.Record.Handle || len(got.Record.Values) != 2 ||
		!bytes.Equal(got.Record.Values[1].Data, want.Record.Values[1].Data) {
		t.Fatalf("GetDerived(plain) = %+v, want %+v", got, want)
	}
}

// TestImportUpgradesPlainRecords: an import, of an empty input too,
// rewrites the records stored in the plain format with their derived part,
// version and times kept: the way a file written before gets it.
func TestImportUpgradesPlainRecords(t *testing.T) {
	db := openTest(t, "", true)
	old := derivedRecord("21.T11148/OLD", "https://data.example.org/old", 3)
	old.Created = time.Date(2024, 5, 17, 9, 30, 0, 0, time.UTC)
	old.Updated = old.Created.Add(time.Hour)
	err := db.Update(func(tx *Tx) error {
		return tx.Bolt().Bucket(BucketRecords).Put([]byte("OLD"), plainEncoding(t, &old))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Import(strings.NewReader(""), sampleKey); err != nil {
		t.Fatal(err)
	}
	checkStoredDerived(t, db, "OLD", "https://data.example.org/old")
	got, ok, err := db.Get("OLD")
	if err != nil || !ok || got.Version != 3 || !got.Created.Equal(old.Created) || !got.Updated.Equal(old.Updated) {
		t.Fatalf("Get after the import = %+v, %v, %v; want version 3, created %v, updated %v", got, ok, err, old.Created, old.Updated)
	}
}
