// Package storetest opens the real bbolt store the packages above it test
// against: a fresh file in the test's temporary directory, without fsync,
// closed when the test ends, with a namer of production prefix 21.12345 and
// test prefix 21.T12345. Imported only by _test.go files.
package storetest

import (
	"path/filepath"
	"testing"

	"pidnode/handlev"
	"pidnode/store"
)

// Open returns a fresh store and the namer the tests' handles use.
func Open(t testing.TB) (*store.DB, *handlev.Namer) {
	t.Helper()
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	return db, namer
}
