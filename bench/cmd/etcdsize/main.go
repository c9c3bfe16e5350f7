// Command etcdsize reports how much of etcd's file a cluster prefix takes,
// for `make bench-cluster` (bench/cluster-catchup.sh): it prints one JSON
// object with every member's DbSize (the file, which etcd's quota bounds) and
// DbSizeInUse (its pages in use), the revision, and the number of keys under
// the prefix and under its records bucket (docs/product.md §10 key layout).
//
// Before it reads the sizes it can, in this order, rewrite every key under
// the prefix once with its own value in transactions of -batch puts (-touch:
// one update per record; etcd keeps the old revision of each key until a
// compaction), compact the history at the current revision (-compact), and
// defragment every member (-defrag: gives the free pages back to the file
// system, so DbSize falls to about DbSizeInUse). -buckets adds, per bucket
// of the prefix, its keys and the bytes of their keys and values.
//
//	go run ./bench/cmd/etcdsize -endpoints http://127.0.0.1:2379 -prefix /pidnode/ -defrag
//
// Part of bench/, imported by nothing. Run it against a cluster no node is
// writing to: -touch reads at one revision and writes what it read.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

type member struct {
	Endpoint    string `json:"endpoint"`
	DbSize      int64  `json:"db_size"`
	DbSizeInUse int64  `json:"db_size_in_use"`
}

// bucket is what etcd holds under one bucket of the prefix (the path
// segment after it): keys, and the bytes of their keys and values.
type bucket struct {
	Name       string `json:"name"`
	Keys       int64  `json:"keys"`
	KeyBytes   int64  `json:"key_bytes"`
	ValueBytes int64  `json:"value_bytes"`
}

type report struct {
	Members     []member `json:"members"`
	Revision    int64    `json:"revision"`
	Buckets     []bucket `json:"buckets,omitempty"`
	Keys        int64    `json:"keys"`
	RecordKeys  int64    `json:"record_keys"`
	Touched     int64    `json:"touched,omitempty"`
	TouchS      float64  `json:"touch_s,omitempty"`
	CompactedAt int64    `json:"compacted_at,omitempty"`
	DefragS     float64  `json:"defrag_s,omitempty"`
}

func main() {
	var (
		endpoints = flag.String("endpoints", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
		prefix    = flag.String("prefix", "/pidnode/", "the cluster's key prefix (pidnode's --etcd-prefix)")
		touch     = flag.Bool("touch", false, "rewrite every key under the prefix once with its own value first")
		batch     = flag.Int("batch", 1000, "puts per transaction of -touch (within etcd's --max-txn-ops and --max-request-bytes)")
		compact   = flag.Bool("compact", false, "compact etcd's history at the current revision (after -touch)")
		defrag    = flag.Bool("defrag", false, "defragment every member before reading the sizes (after -compact)")
		buckets   = flag.Bool("buckets", false, "read every key under the prefix and report keys, key bytes and value bytes per bucket")
		timeout   = flag.Duration("timeout", 30*time.Minute, "give up after this long")
	)
	flag.Parse()
	if *batch < 1 {
		fail(errors.New("-batch must be at least 1"))
	}
	eps := strings.Split(*endpoints, ",")
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second,
		MaxCallSendMsgSize: 16 << 20, MaxCallRecvMsgSize: 64 << 20})
	if err != nil {
		fail(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var r report
	if *touch {
		t0 := time.Now()
		if r.Touched, err = rewrite(ctx, cli, *prefix, *batch); err != nil {
			fail(fmt.Errorf("touch: %w", err))
		}
		r.TouchS = time.Since(t0).Seconds()
	}
	if *compact {
		g, err := cli.Get(ctx, "\x00", clientv3.WithCountOnly())
		if err != nil {
			fail(err)
		}
		if _, err := cli.Compact(ctx, g.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
			fail(fmt.Errorf("compact: %w", err))
		}
		r.CompactedAt = g.Header.Revision
	}
	if *defrag {
		t0 := time.Now()
		for _, ep := range eps {
			if _, err := cli.Defragment(ctx, ep); err != nil {
				fail(fmt.Errorf("defragment %s: %w", ep, err))
			}
		}
		r.DefragS = time.Since(t0).Seconds()
	}
	for _, ep := range eps {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			fail(fmt.Errorf("status of %s: %w", ep, err))
		}
		r.Members = append(r.Members, member{Endpoint: ep, DbSize: st.DbSize, DbSizeInUse: st.DbSizeInUse})
	}
	all, err := cli.Get(ctx, *prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		fail(err)
	}
	rec, err := cli.Get(ctx, *prefix+"records/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		fail(err)
	}
	r.Revision, r.Keys, r.RecordKeys = all.Header.Revision, all.Count, rec.Count
	if *buckets {
		if r.Buckets, err = perBucket(ctx, cli, *prefix, *batch); err != nil {
			fail(fmt.Errorf("buckets: %w", err))
		}
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// rewrite puts every key under prefix, as of one revision, again with the
// value it had, batch keys per transaction, and returns how many it put.
func rewrite(ctx context.Context, cli *clientv3.Client, prefix string, batch int) (int64, error) {
	first, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	rev := first.Header.Revision
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	var n int64
	for {
		r, err := cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(int64(batch)))
		if err != nil {
			return n, err
		}
		if len(r.Kvs) == 0 {
			return n, nil
		}
		ops := make([]clientv3.Op, len(r.Kvs))
		for i, kv := range r.Kvs {
			ops[i] = clientv3.OpPut(string(kv.Key), string(kv.Value))
		}
		if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			return n, err
		}
		n += int64(len(r.Kvs))
		if !r.More {
			return n, nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// perBucket reads every key under prefix, batch keys per range read, and
// sums them per bucket, in key order.
func perBucket(ctx context.Context, cli *clientv3.Client, prefix string, batch int) ([]bucket, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	var out []bucket
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(int64(batch))}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := cli.Get(ctx, from, opts...)
		if err != nil {
			return nil, err
		}
		rev = r.Header.Revision
		for _, kv := range r.Kvs {
			name, _, _ := strings.Cut(strings.TrimPrefix(string(kv.Key), prefix), "/")
			if len(out) == 0 || out[len(out)-1].Name != name {
				out = append(out, bucket{Name: name})
			}
			b := &out[len(out)-1]
			b.Keys++
			b.KeyBytes += int64(len(kv.Key))
			b.ValueBytes += int64(len(kv.Value))
		}
		if !r.More || len(r.Kvs) == 0 {
			return out, nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "etcdsize:", err)
	os.Exit(1)
}
