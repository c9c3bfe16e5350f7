package registry

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pidnode/store"
)

// wordBlocksOf is what a word's blocks must be for docIDs dids: cut where
// a docID starts a block, as written out by hand here.
func wordBlocksOf(pre []byte, dids [][]byte) map[string]string {
	dids = slices.Clone(dids)
	slices.SortFunc(dids, bytes.Compare)
	out := map[string]string{}
	key := string(pre)
	for _, d := range dids {
		if startsBlock(d) {
			key = string(pre) + string(d)
		}
		out[key] += string(binary.AppendUvarint(nil, uint64(len(d)))) + string(d)
	}
	return out
}

// Whatever the order and the batches of its changes (docIDs added,
// removed, the first of a block among them, removed when absent, added
// when present), a word's blocks are those its docIDs cut into, and the
// other words' blocks are untouched.
func TestChangeWordsCutsBlocks(t *testing.T) {
	db, namer := openTest(t)
	reg, err := New(Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	did := func(i int) []byte { return appendDocID(nil, uint64(1_000+i/3), fmt.Sprintf("ID-%d", i)) }
	pres := [][]byte{wordPrefix([]byte("A/"), []byte("ab")), wordPrefix([]byte("A/"), []byte("abc")), wordPrefix([]byte("B/"), []byte("ab"))}
	have := make([]map[string]bool, len(pres))
	for i := range have {
		have[i] = map[string]bool{}
	}
	starts := 0
	for i := range 3000 {
		if startsBlock(did(i)) {
			starts++
		}
	}
	if starts < 10 {
		t.Fatalf("only %d of 3000 docIDs start a block", starts)
	}
	for round := range 60 {
		ch := map[string]*wordChange{}
		for w, pre := range pres {
			if rng.IntN(3) == 0 {
				continue
			}
			wc := &wordChange{}
			picked := map[int]bool{}
			n := 1 + rng.IntN(200)
			if round < 10 {
				n = 300 // fill first
			}
			for range n {
				i := rng.IntN(3000)
				if round < 10 {
					i = (round*300 + len(picked)) % 3000 // in order, as creates come
				}
				if picked[i] {
					continue
				}
				picked[i] = true
				d := did(i)
				if rng.IntN(3) == 0 && round >= 10 {
					wc.del = append(wc.del, d) // present or not
					delete(have[w], string(d))
				} else {
					wc.add = append(wc.add, d) // absent or not
					have[w][string(d)] = true
				}
			}
			slices.SortFunc(wc.add, bytes.Compare)
			slices.SortFunc(wc.del, bytes.Compare)
			ch[string(pre)] = wc
		}
		if err := reg.Update(func(tx Tx) error { return tx.changeWords(ch) }); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range dumpRaw(t, db) {
			got[e[0]] = e[1]
		}
		want := map[string]string{}
		for w, pre := range pres {
			var dids [][]byte
			for d := range have[w] {
				dids = append(dids, []byte(d))
			}
			for k, v := range wordBlocksOf(pre, dids) {
				want[k] = v
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d blocks, want %d", round, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("round %d: block %q = %x, want %x", round, k, got[k], v)
			}
		}
	}
}

// dumpRaw returns the search bucket's entries as key, value pairs.
func dumpRaw(t *testing.T, db *store.DB) [][2]string {
	t.Helper()
	var out [][2]string
	err := db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(store.BucketSearch).ForEach(func(k, v []byte) error {
			out = append(out, [2]string{string(k), string(v)})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A block value of any bytes reads without a panic, and the docIDs of one
// that reads whole, written again, read the same.
func FuzzWordBlock(f *testing.F) {
	f.Add(appendBlockDoc(appendBlockDoc(nil, []byte("12345678ID-1")), []byte("12345679ID-2")))
	f.Add([]byte{0x80})
	f.Add([]byte{5, 'a'})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, v []byte) {
		read := func(v []byte) ([][]byte, bool) {
			var dids [][]byte
			ok := eachBlockDoc(v, func(did []byte) bool {
				if len(did) == 0 {
					t.Fatalf("an empty docID from %x", v)
				}
				dids = append(dids, did)
				return true
			})
			return dids, ok
		}
		dids, ok := read(v)
		if !ok {
			return
		}
		var back []byte
		for _, d := range dids {
			back = appendBlockDoc(back, d)
		}
		again, ok := read(back)
		if !ok || !slices.EqualFunc(dids, again, bytes.Equal) {
			t.Fatalf("%x read as %q, written as %x, read again as %q", v, dids, back, again)
		}
	})
}
