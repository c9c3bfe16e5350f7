package registry

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"time"

	"pidnode/store"
)

// The write path files a record's forward entry, changed order entry and
// counts in its own transaction, but leaves its words pending (fileSearch),
// and a new record's label order entry too: a word only one record has
// would cost every create a page of its own, the words of one create land
// on as many pages as it has words, and its label anywhere in the order. Search
// checks the pending records one by one, so a search sees every committed
// write; MergeSearch files their words later, many records to a
// transaction, where records sharing a word share its pages.
//
// A pending record has the entry nsp 0 'p' docID, whose value lists the
// words filed under 'w' for it (those of an earlier version; none for a new
// record) after a flag saying whether its label order entry waits too
// (pendingLabel; walkOrder reads those beside the order), and its
// namespace the marker pendingNSPrefix nsp. The 'w'
// entries are a superset hint between merges: Search checks each candidate
// against its forward entry, so a word an update removed finds nothing.

// MergeBatch is how many pending records one MergeSearch transaction files
// at most: large enough that records share pages, small enough that the
// writers it holds up wait tens of milliseconds at most.
const MergeBatch = 2000

// MergeSearch files the words of up to limit pending records in one write
// transaction and returns how many it filed; without pending records it
// takes no writer lock. It may run beside the writers at any time.
func (r *Registry) MergeSearch(limit int) (int, error) {
	var any bool
	if err := r.View(func(t Tx) error {
		k, _ := t.bucket(store.BucketSearch).Cursor().Seek(pendingNSPrefix)
		any = bytes.HasPrefix(k, pendingNSPrefix)
		return nil
	}); err != nil || !any || limit <= 0 {
		return 0, err
	}
	n := 0
	err := r.db.UpdateAlone(func(tx *store.Tx) error {
		t := Tx{tx, r}
		b := t.bucket(store.BucketSearch)
		type item struct {
			nsp, did []byte
			filed    []byte // the pending entry's value (encodePending)
		}
		var items []item
		var nss, done [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(pendingNSPrefix); bytes.HasPrefix(k, pendingNSPrefix); k, _ = c.Next() {
			nss = append(nss, bytes.Clone(k[len(pendingNSPrefix):]))
		}
		for _, nsp := range nss {
			if len(items) == limit {
				break
			}
			pre := appendEntry(nil, nsp, 'p')
			more := false
			for k, v := c.Seek(pre); bytes.HasPrefix(k, pre); k, v = c.Next() {
				if len(items) == limit {
					more = true
					break
				}
				items = append(items, item{nsp, bytes.Clone(k[len(pre):]), bytes.Clone(v)})
			}
			if !more {
				done = append(done, pendingNSKey(nsp))
			}
		}
		// gone and added: the pending and label order entries to drop and
		// file; ch: the words' changes.
		var gone, added [][]byte
		ch := map[string]*wordChange{}
		change := func(nsp, w []byte) *wordChange {
			pre := wordPrefix(nsp, w)
			wc := ch[string(pre)]
			if wc == nil {
				wc = &wordChange{}
				ch[string(pre)] = wc
			}
			return wc
		}
		var filed, want [][]byte
		for _, it := range items {
			id := it.did[8:]
			var flags byte
			if len(it.filed) > 0 {
				flags = it.filed[0]
				filed, _ = splitWords(filed[:0], it.filed[1:])
			} else {
				filed = filed[:0]
			}
			want = want[:0]
			fwd := b.Get(append(appendEntry(nil, it.nsp, 'f'), it.did...))
			if flags&pendingLabel != 0 {
				if lk := labelKeyOf(it.nsp, it.did, fwd); lk != nil && b.Get(lk) == nil {
					added = append(added, lk)
				}
			}
			if tail, ok := docWordsTail(fwd); ok {
				all, _ := splitWords(nil, bytes.Clone(tail))
				for _, w := range all {
					if !idCovers(string(id), string(w)) {
						want = append(want, w)
					}
				}
			}
			gone = append(gone, pendingKey(it.nsp, it.did))
			// Both sorted: one walk finds what goes and what comes. The
			// items come in docID order, so each word's lists do too.
			diffSorted(filed, want,
				func(w []byte) error { wc := change(it.nsp, w); wc.del = append(wc.del, it.did); return nil },
				func(w []byte) error { wc := change(it.nsp, w); wc.add = append(wc.add, it.did); return nil })
		}
		if err := t.changeWords(ch); err != nil {
			return err
		}
		gone = append(gone, done...)
		// In key order: neighbouring Puts find their page where the last
		// one left the cursor's path.
		slices.SortFunc(gone, bytes.Compare)
		slices.SortFunc(added, bytes.Compare)
		for _, k := range gone {
			if err := t.PutDerived(store.BucketSearch, k, nil); err != nil {
				return err
			}
		}
		for _, k := range added {
			if err := t.PutDerived(store.BucketSearch, k, []byte{}); err != nil {
				return err
			}
		}
		n = len(items)
		return nil
	})
	return n, err
}

// RunSearchMerge calls MergeSearch every interval, and again at once while
// a call files a full batch, until ctx ends. onErr, if set, hears of a
// failed call (the records stay pending; the next tick retries).
func (r *Registry) RunSearchMerge(ctx context.Context, every time.Duration, onErr func(error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			n, err := r.MergeSearch(MergeBatch)
			if err != nil && onErr != nil {
				onErr(err)
			}
			if err != nil || n < MergeBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// docWordsTail returns the words of forward entry b (encodeDoc), encoded.
func docWordsTail(b []byte) ([]byte, bool) {
	for range 2 { // the label, the status
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		b = b[k+int(n):]
	}
	if len(b) < 16 {
		return nil, false
	}
	return b[16:], true
}
