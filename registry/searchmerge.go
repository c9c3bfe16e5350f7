package registry

import (
	"bytes"
	"context"
	"slices"
	"time"

	"pidnode/store"
)

// The write path files a record's sort entries, forward entry and counts
// in its own transaction, but leaves its words pending (fileSearch): a
// word only one record has would cost every create a page of its own, and
// the words of one create land on as many pages as it has words. Search
// checks the pending records one by one, so a search sees every committed
// write; MergeSearch files their words later, many records to a
// transaction, where records sharing a word share its pages.
//
// A pending record has the entry nsp 0 'p' docID, whose value lists the
// words filed under 'w' for it (those of an earlier version; none for a new
// record), and its namespace the marker pendingNSPrefix nsp. The 'w'
// entries are a superset hint between merges: Search checks each candidate
// against its forward entry, so a word an update removed finds nothing.

// MergeBatch is how many pending records one MergeSearch transaction files
// at most: large enough that records share pages, small enough that the
// writers it holds up wait tens of milliseconds at most.
const MergeBatch = 2000

// MergeSearch files the words of up to max pending records in one write
// transaction and returns how many it filed; without pending records it
// takes no writer lock. It may run beside the writers at any time.
func (r *Registry) MergeSearch(max int) (int, error) {
	var any bool
	if err := r.View(func(t Tx) error {
		k, _ := t.bucket(store.BucketSearch).Cursor().Seek(pendingNSPrefix)
		any = bytes.HasPrefix(k, pendingNSPrefix)
		return nil
	}); err != nil || !any || max <= 0 {
		return 0, err
	}
	n := 0
	err := r.db.UpdateAlone(func(tx *store.Tx) error {
		t := Tx{tx, r}
		b := t.bucket(store.BucketSearch)
		type item struct {
			nsp, did []byte
			filed    []string
		}
		var items []item
		var nss, done [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(pendingNSPrefix); bytes.HasPrefix(k, pendingNSPrefix); k, _ = c.Next() {
			nss = append(nss, bytes.Clone(k[len(pendingNSPrefix):]))
		}
		for _, nsp := range nss {
			if len(items) == max {
				break
			}
			pre := appendEntry(nil, nsp, 'p')
			more := false
			for k, v := c.Seek(pre); bytes.HasPrefix(k, pre); k, v = c.Next() {
				if len(items) == max {
					more = true
					break
				}
				items = append(items, item{nsp, bytes.Clone(k[len(pre):]), decodeWords(v)})
			}
			if !more {
				done = append(done, pendingNSKey(nsp))
			}
		}
		var gone, added [][]byte
		for _, it := range items {
			var want []string
			if d, ok := decodeDoc(b.Get(append(appendEntry(nil, it.nsp, 'f'), it.did...))); ok {
				want = d.filedWords(string(it.did[8:]))
			}
			gone = append(gone, pendingKey(it.nsp, it.did))
			filed := wordKeys(it.nsp, it.did, it.filed)
			for _, k := range wordKeys(it.nsp, it.did, want) {
				if i := slices.IndexFunc(filed, func(f []byte) bool { return bytes.Equal(f, k) }); i >= 0 {
					filed = slices.Delete(filed, i, i+1)
				} else {
					added = append(added, k)
				}
			}
			gone = append(gone, filed...)
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
