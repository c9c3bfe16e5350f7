package registry

import (
	"path/filepath"
	"testing"

	"pidnode/handlev"
	"pidnode/store"
)

// openTest opens a store in a temporary directory and a namer of prefix
// 21.12345 (test prefix 21.T12345).
func openTest(t testing.TB) (*store.DB, *handlev.Namer) {
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
