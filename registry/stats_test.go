package registry

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

// openTest opens a store in a temporary directory and a namer of prefix
// 21.12345 (test prefix 21.T12345).
func openTest(t *testing.T) (*store.DB, *handlev.Namer) {
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

// TestFlushStatsManyKeys: a flush of more keys than one sort run and one
// transaction (statsSortRun, statsChunk) writes every identifier's and
// namespace's count exactly, and the next flush adds to them.
func TestFlushStatsManyKeys(t *testing.T) {
	counter := cache.NewCounter(0)
	db, namer := openTest(t)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1,
		Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	const ids = 3*statsSortRun + 123
	want := map[string]uint64{}
	for round := range 3 {
		for i := range ids {
			ns := [...]string{"AAA", "BBB", "CCC"}[i%3]
			k, _, err := namer.Key(namer.Full("21.12345", ns, fmt.Sprintf("ID%05d", (i*7919+round*1000)%ids)))
			if err != nil {
				t.Fatal(err)
			}
			n := 1 + (i+round)%5
			for range n {
				counter.Count(k)
			}
			want[string(statsKey(statsID, []byte(k), "20261120"))] += uint64(n)
			want[string(statsKey(statsNS, nsKeyPrefix(namer, []byte(k)), "20261120"))] += uint64(n)
		}
		if _, err := r.FlushStats(counter); err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		err := db.View(func(tx *store.Tx) error {
			return tx.Bolt().Bucket(store.BucketStats).ForEach(func(k, v []byte) error {
				got[string(k)] = binary.BigEndian.Uint64(v)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d statistics keys, want %d", round, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("round %d: %q = %d, want %d", round, k, got[k], n)
			}
		}
	}
}
