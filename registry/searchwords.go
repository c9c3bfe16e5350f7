package registry

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"

	"go.etcd.io/bbolt"

	"pidnode/store"
)

// The word entries of the search index are blocks: the docIDs having one
// word, in order, cut into blocks where a docID starts one (startsBlock).
// A block's key is the word's prefix (wordPrefix: nsp 0 'w' word 0) for the
// docIDs before the word's first such docID, else the prefix and the docID
// that starts it; its value, its docIDs in order, each as a uvarint length
// and the docID. Where the blocks are cut depends on the docIDs alone, so
// the index is the same whatever order its writes came in (the rebuild's
// wordGroup cuts them as changeWord does), and filing a word for many
// records at once rewrites a block per wordBlockSpan records, not an entry
// per record.

// wordBlockSpan is how many docIDs a block holds on average: a docID starts
// a block when its checksum is a multiple of it.
const wordBlockSpan = 64

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// startsBlock reports whether did starts a block of every word it has.
func startsBlock(did []byte) bool {
	return crc32.Checksum(did, castagnoli)%wordBlockSpan == 0
}

// wordPrefix is nsp 0 'w' word 0: the key of the word's first block and
// the start of its others'.
func wordPrefix(nsp, w []byte) []byte {
	b := append(appendEntry(make([]byte, 0, len(nsp)+len(w)+3), nsp, 'w'), w...)
	return append(b, 0)
}

// appendBlockDoc appends did to block value b.
func appendBlockDoc(b, did []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(did))), did...)
}

// eachBlockDoc calls fn with each docID of block value v, in order, until
// fn returns false; it reports false if v is malformed (what it read
// before stays heard).
func eachBlockDoc(v []byte, fn func(did []byte) bool) bool {
	for len(v) > 0 {
		n, k := binary.Uvarint(v)
		if k <= 0 || n == 0 || n > uint64(len(v)-k) {
			return false
		}
		if !fn(v[k : k+int(n)]) {
			return true
		}
		v = v[k+int(n):]
	}
	return true
}

// wordGroup is the group function of a rebuild (store.DB.RebuildDerived)
// that files the word entries searchEntries emits, one per word and docID
// under wordPrefix and the docID, in blocks: it hears the keys in order and
// puts each under the block changeWord would. It keeps its own copies of
// what it remembers between calls. It is for one rebuild.
func wordGroup(bucket int) func(i int, k []byte) ([]byte, bool) {
	var pre, block []byte
	return func(i int, k []byte) ([]byte, bool) {
		if i != bucket {
			return nil, false
		}
		p, did, ok := splitWordEntry(k)
		if !ok {
			return nil, false
		}
		if !bytes.Equal(p, pre) {
			pre = append(pre[:0], p...)
			block = append(block[:0], p...)
		}
		if startsBlock(did) {
			block = append(block[:0], k...)
		}
		return block, true
	}
}

// splitWordEntry splits an entry of one word and docID (searchEntries)
// into the word's prefix and the docID; false if k is not one.
func splitWordEntry(k []byte) (pre, did []byte, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i < 1 || i+2 > len(k) || k[i+1] != 'w' {
		return nil, nil, false
	}
	j := bytes.IndexByte(k[i+2:], 0)
	if j < 1 {
		return nil, nil, false
	}
	end := i + 2 + j + 1
	if len(k)-end <= 8 {
		return nil, nil, false
	}
	return k[:end], k[end:], true
}

// wordChange is what one word's blocks are to gain and lose: docIDs,
// each list sorted and free of repeats, the two disjoint.
type wordChange struct {
	add, del [][]byte
}

// changeWords applies the changes of each word (by wordPrefix) to its
// blocks, the words in key order.
func (t Tx) changeWords(ch map[string]*wordChange) error {
	pres := make([]string, 0, len(ch))
	for p := range ch {
		pres = append(pres, p)
	}
	slices.Sort(pres)
	c := t.Bolt().Bucket(store.BucketSearch).Cursor()
	for _, p := range pres {
		if err := t.changeWord(c, []byte(p), ch[p]); err != nil {
			return err
		}
	}
	return nil
}

// changeWord brings the blocks of the word of prefix pre to hold ch.add and
// not ch.del. It reads the blocks those docIDs fall in (and the one before
// a block whose first docID goes, which takes its others), applies the
// change to their docIDs and cuts them into blocks again, writing only the
// blocks that differ.
func (t Tx) changeWord(c *bbolt.Cursor, pre []byte, ch *wordChange) error {
	// loaded: the blocks read, by key (a missing first block reads as
	// empty); their docIDs, all of them, in order, are in docs.
	loaded := map[string][]byte{}
	var keys []string
	load := func(k, v []byte) {
		if _, ok := loaded[string(k)]; !ok {
			loaded[string(k)] = v
			keys = append(keys, string(k))
		}
	}
	// blockOf loads the block did falls in; the cursor ends past it, and
	// the start of the block after it (nil: none) is returned, so that the
	// next docIDs before it need no seek.
	seekKey := make([]byte, 0, len(pre)+64)
	blockOf := func(did []byte) (next []byte) {
		seekKey = append(append(seekKey[:0], pre...), did...)
		k, v := c.Seek(seekKey)
		if k != nil && bytes.Equal(k, seekKey) {
			load(k, v)
		} else {
			if k != nil && bytes.HasPrefix(k, pre) {
				next = k
			}
			if k != nil {
				k, v = c.Prev()
			} else {
				k, v = c.Last()
			}
			if k != nil && bytes.HasPrefix(k, pre) {
				load(k, v)
			} else {
				load(pre, nil)
			}
			return next
		}
		if k, _ := c.Next(); k != nil && bytes.HasPrefix(k, pre) {
			next = k
		}
		return next
	}
	// Both lists are sorted: one walk over their merge, seeking only past
	// the block the last seek found.
	var next []byte
	seeked := false
	for i, j := 0, 0; i < len(ch.add) || j < len(ch.del); {
		var did []byte
		if j == len(ch.del) || i < len(ch.add) && bytes.Compare(ch.add[i], ch.del[j]) < 0 {
			did, i = ch.add[i], i+1
		} else {
			did, j = ch.del[j], j+1
		}
		if !seeked || next != nil && bytes.Compare(did, next[len(pre):]) >= 0 {
			next, seeked = blockOf(did), true
		}
	}
	// A block whose first docID goes gives its others to the block before
	// it: read that one too (and so on, should its first go as well).
	var dels map[string]bool
	if len(ch.del) > 0 {
		dels = make(map[string]bool, len(ch.del))
		for _, d := range ch.del {
			dels[string(d)] = true
		}
		for n := 0; n < len(keys); n++ {
			k := keys[n]
			if len(k) == len(pre) || !dels[k[len(pre):]] {
				continue
			}
			c.Seek([]byte(k))
			if pk, pv := c.Prev(); pk != nil && bytes.HasPrefix(pk, pre) {
				load(pk, pv)
			} else {
				load(pre, nil)
			}
		}
	}
	slices.Sort(keys)
	var docs [][]byte
	for _, k := range keys {
		eachBlockDoc(loaded[k], func(did []byte) bool {
			docs = append(docs, did)
			return true
		})
	}
	// Sorted already, unless a block is malformed.
	if !slices.IsSortedFunc(docs, bytes.Compare) {
		slices.SortFunc(docs, bytes.Compare)
	}
	// Cut docs − del + add, in order, each once, into blocks: the first
	// is the word's first block, or one whose first docID is among them.
	type block struct{ key, val []byte }
	var blocks []block
	keep := func(d []byte) {
		if dels[string(d)] {
			return
		}
		if n := len(blocks); n > 0 && !startsBlock(d) {
			blocks[n-1].val = appendBlockDoc(blocks[n-1].val, d)
			return
		}
		key := pre
		if startsBlock(d) {
			key = append(slices.Clip(pre), d...)
		}
		blocks = append(blocks, block{key, appendBlockDoc(nil, d)})
	}
	var last []byte
	for i, j := 0, 0; i < len(docs) || j < len(ch.add); {
		var d []byte
		if j == len(ch.add) || i < len(docs) && bytes.Compare(docs[i], ch.add[j]) <= 0 {
			d, i = docs[i], i+1
		} else {
			d, j = ch.add[j], j+1
		}
		if last == nil || !bytes.Equal(d, last) {
			keep(d)
		}
		last = d
	}
	// Write what differs, in key order; drop the blocks read that are
	// cut no more.
	kept := make(map[string]bool, len(blocks))
	for _, b := range blocks {
		kept[string(b.key)] = true
	}
	for _, k := range keys {
		if !kept[k] && loaded[k] != nil {
			if err := t.PutDerived(store.BucketSearch, []byte(k), nil); err != nil {
				return err
			}
		}
	}
	for _, b := range blocks {
		if old, ok := loaded[string(b.key)]; ok && bytes.Equal(old, b.val) {
			continue
		}
		if err := t.PutDerived(store.BucketSearch, b.key, b.val); err != nil {
			return err
		}
	}
	return nil
}
