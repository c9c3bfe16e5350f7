package cluster

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/internal/etcdtest"
	"pidnode/store"
)

// The accepting node applies its own writes from the values it sent, not
// from what etcd sends back, and forgets them once applied; the database it
// ends with is byte for byte the one of a node that decoded the same writes
// from etcd.
func TestOwnWritesApplied(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	a := newTestNode(t, c, "a", filepath.Join(dir, "a.db"))
	b := newTestNode(t, c, "b", filepath.Join(dir, "b.db"))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprintf("21.T12345/OWN/%d", i)
			if err := a.create(k, "https://example.org/"+k); err != nil {
				t.Errorf("create %s: %v", k, err)
			}
			// Read-your-writes on the accepting node.
			if _, ok, err := a.db.Get(k); err != nil || !ok {
				t.Errorf("%s after its create on a: found %v, %v", k, ok, err)
			}
		}()
	}
	wg.Wait()
	if n := a.shard.ownApplied.Load(); n == 0 {
		t.Error("a applied none of its own writes from the values it sent")
	}
	if n := b.shard.ownApplied.Load(); n != 0 {
		t.Errorf("b applied %d values as its own; it wrote none", n)
	}
	a.shard.ownMu.Lock()
	kept := len(a.shard.own)
	a.shard.ownMu.Unlock()
	if kept != 0 {
		t.Errorf("a still keeps the values of %d transactions", kept)
	}
	if err := b.WaitApplied(t.Context(), a.applied.Load()); err != nil {
		t.Fatal(err)
	}
	for _, bucket := range [][]byte{store.BucketRecords, store.BucketAudit, store.BucketURLIndex} {
		if da, db := dump(t, a.db, bucket), dump(t, b.db, bucket); !bytes.Equal(da, db) {
			t.Errorf("bucket %s differs between the accepting node and the other:\n%q\n%q", bucket, da, db)
		}
	}
}

// dump is every key and value of bucket, in order.
func dump(t *testing.T, db *store.DB, bucket []byte) []byte {
	t.Helper()
	var out []byte
	err := db.View(func(tx *store.Tx) error {
		return tx.Bolt().Bucket(bucket).ForEach(func(k, v []byte) error {
			out = append(append(append(out, k...), '='), v...)
			out = append(out, '\n')
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The watch holds a batch back for the node's own transactions: one that
// succeeded at a revision the batch lacks is waited for, one sent and not
// answered for at most ownWait, and none when every own revision is in.
func TestAwaitOwn(t *testing.T) {
	at := func(rev int64) clientv3.WatchResponse {
		return clientv3.WatchResponse{Events: []*clientv3.Event{{Kv: &mvccpb.KeyValue{ModRevision: rev}}}}
	}
	n := &shard{}
	wch := make(chan clientv3.WatchResponse, 4)
	n.keepOwn(nil)
	n.answered(&clientv3.TxnResponse{Succeeded: true, Header: &etcdserverpb.ResponseHeader{Revision: 11}}, nil)
	wch <- at(11)
	wch <- at(12)
	batch, closed := n.awaitOwn(wch, []clientv3.WatchResponse{at(10)})
	if closed || len(batch) != 2 || deliveredRev(batch) != 11 {
		t.Errorf("awaitOwn took %d responses up to revision %d (closed %v); want 2 up to 11", len(batch), deliveredRev(batch), closed)
	}
	if len(wch) != 1 {
		t.Errorf("awaitOwn left %d responses in the channel, want 1", len(wch))
	}
	<-wch

	n.keepOwn(nil) // sent, never answered
	start := time.Now()
	batch, _ = n.awaitOwn(wch, []clientv3.WatchResponse{at(12)})
	if len(batch) != 1 || time.Since(start) < ownWait {
		t.Errorf("awaitOwn for an unanswered transaction: %d responses after %v; want 1 after %v", len(batch), time.Since(start), ownWait)
	}
}
