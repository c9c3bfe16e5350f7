package registry

import (
	"testing"

	"pidnode/handlev"
	"pidnode/internal/storetest"
	"pidnode/store"
)

// openTest opens a fresh store and the tests' namer (internal/storetest).
func openTest(t testing.TB) (*store.DB, *handlev.Namer) { return storetest.Open(t) }
