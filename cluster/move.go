package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"pidnode/registry"
	"pidnode/store"
)

// movePage is how many keys MoveNamespace reads, copies or deletes per
// request.
const movePage = 500

// MoveResult is what MoveNamespace did.
type MoveResult struct {
	SNAA     string // the namespace's SNAA
	From, To string // shard names
	Records  int    // records copied
	Idem     int    // Idempotency-Key records copied
}

// MoveNamespace moves namespace ns, with its records and Idempotency-Key
// records, from its shard to shard to (`pidnode cluster move-namespace`),
// while the nodes run:
//
//  1. it puts the namespace's moved key (movedKey) into the old shard's
//     etcd: every write of the namespace there compares it absent, so from
//     then on its writes are refused there and wait (CommitAs); every write
//     acknowledged before is in that etcd, below the key's revision;
//  2. it copies the namespace's entries as of that revision into the new
//     shard's etcd (deleting a moved key of an earlier move off it);
//  3. it sets the SNAA's shard in the registry shard, with an operator's
//     audit entry (snaa.update): each node sends the namespace's waiting
//     and later writes to the new shard once it has applied that;
//  4. it deletes the entries from the old shard, which the nodes do not
//     apply (a record is never deleted otherwise: applyKV), so resolution
//     never stops. The moved key stays, so a node that has not yet applied
//     the new SNAA cannot write there.
//
// Audit entries stay where they were written. A failure before step 3
// leaves the namespace frozen (its writes answer 503): running the move
// again completes it. One after it leaves copies on the old shard, which
// no node applies (a snapshot loads a namespace's entries from its SNAA's
// shard only). The namespace's writes wait from step 1 until a node has
// applied step 3, about the copy's duration.
func MoveNamespace(ctx context.Context, cfg Config, ns, to string) (*MoveResult, error) {
	if len(cfg.Shards) < 2 {
		return nil, fmt.Errorf("%w: moving a namespace needs several shards", ErrConfig)
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	clis := map[string]*clientv3.Client{}
	defer func() {
		for _, c := range clis {
			c.Close()
		}
	}()
	for _, sh := range cfg.Shards {
		cli, err := clientv3.New(clientv3.Config{Endpoints: sh.Endpoints, DialTimeout: cfg.DialTimeout, TLS: cfg.TLS,
			Username: cfg.Username, Password: cfg.Password, MaxCallSendMsgSize: RequiredRequestBytes + 1<<20,
			MaxCallRecvMsgSize: 64 << 20, Logger: zap.NewNop()})
		if err != nil {
			return nil, &UnreachableError{Endpoints: sh.Endpoints, Err: err}
		}
		clis[sh.Name] = cli
	}
	reg := clis[cfg.Shards[0].Name]
	if clis[to] == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownShard, to)
	}
	p := cfg.Prefix

	// The namespace's SNAA, as the registry holds it.
	r, err := reg.Get(ctx, p+"snaas/", clientv3.WithPrefix())
	if err != nil {
		return nil, &UnreachableError{Endpoints: cfg.Shards[0].Endpoints, Err: unwrapCtx(err)}
	}
	var (
		sn     registry.SNAA
		snKey  string
		snRev  int64
		exists bool
	)
	for _, kv := range r.Kvs {
		v, err := decodeValue(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("cluster: reading %s: %w", kv.Key, err)
		}
		var s registry.SNAA
		if json.Unmarshal(v, &s) == nil && s.Namespace == ns {
			sn, snKey, snRev, exists = s, string(kv.Key), kv.ModRevision, true
		}
	}
	if !exists {
		return nil, fmt.Errorf("%w: no SNAA has namespace %q", ErrConfig, ns)
	}
	from := sn.Shard
	if from == "" {
		from = cfg.Shards[0].Name
	}
	if clis[from] == nil {
		return nil, fmt.Errorf("%w: the SNAA names shard %q, which is not given", ErrUnknownShard, from)
	}
	res := &MoveResult{SNAA: sn.ID, From: from, To: to}
	if from == to {
		return res, fmt.Errorf("%w: namespace %s is on shard %s already", ErrConfig, ns, to)
	}
	if place(cfg.Shards, to) < place(cfg.Shards, from) {
		// Its audit entries' numbers start with the shard's place (keys.go):
		// after such a move they would fall below the earlier ones, and
		// the namespace's feed cursors and webhooks would skip them.
		return res, fmt.Errorf("%w: a namespace moves only to a shard listed after its own (%s is before %s)", ErrConfig, to, from)
	}
	src, dst := clis[from], clis[to]

	// 1. Freeze the namespace on its shard.
	fr, err := src.Put(ctx, movedKey(p, ns), to)
	if err != nil {
		return res, fmt.Errorf("cluster: freezing %s on shard %s: %w", ns, from, err)
	}
	rev := fr.Header.Revision

	// 2. Copy its entries as of that revision.
	var keys []string
	copyRange := func(prefix string, mine func(key string) bool, count *int) error {
		end := clientv3.GetPrefixRangeEnd(prefix)
		for start := prefix; ; {
			r, err := src.Get(ctx, start, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(movePage))
			if err != nil {
				return fmt.Errorf("cluster: reading shard %s: %w", from, err)
			}
			var ops []clientv3.Op
			for _, kv := range r.Kvs {
				if mine(string(kv.Key[len(prefix):])) {
					ops = append(ops, clientv3.OpPut(string(kv.Key), string(kv.Value)))
					keys = append(keys, string(kv.Key))
				}
			}
			if len(ops) > 0 {
				if _, err := dst.Txn(ctx).Then(ops...).Commit(); err != nil {
					return fmt.Errorf("cluster: copying to shard %s: %w", to, err)
				}
				*count += len(ops)
			}
			if !r.More || len(r.Kvs) == 0 {
				return nil
			}
			start = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
		}
	}
	// A record's storage key is prefix/svc/namespace/id (store/doc.go).
	inNS := func(key string) bool {
		parts := strings.SplitN(key, "/", 4)
		return len(parts) == 4 && parts[2] == ns
	}
	if err := copyRange(p+string(store.BucketRecords)+"/", inNS, &res.Records); err != nil {
		return res, err
	}
	// An Idempotency-Key record's key starts with its SNAA's id.
	ofSNAA := func(key string) bool { return strings.HasPrefix(key, sn.ID+" ") }
	if err := copyRange(p+string(store.BucketIdempotency)+"/", ofSNAA, &res.Idem); err != nil {
		return res, err
	}
	if _, err := dst.Delete(ctx, movedKey(p, ns)); err != nil {
		return res, fmt.Errorf("cluster: shard %s: %w", to, err)
	}

	// 3. Switch the SNAA to its new shard, unless it changed meanwhile.
	before := sn
	sn.Shard = to
	nv, err := json.Marshal(&sn) // as registry.Tx.PutSNAA encodes it
	if err != nil {
		return res, err
	}
	// With the operator's audit entry of the change, as an admin write
	// makes it (txnOf).
	entry, err := json.Marshal(&registry.AuditEntry{Time: time.Now().UTC(), Actor: registry.ActorOperator,
		Action: registry.ActSNAAUpdate, Target: sn.ID, Before: &before, After: &sn})
	if err != nil {
		return res, err
	}
	if entry, err = registry.AuditWithoutSeq(entry); err != nil {
		return res, err
	}
	tr, err := reg.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(snKey), "=", snRev)).
		Then(clientv3.OpPut(snKey, string(encodeValue(nv))),
			clientv3.OpPut(auditKey(p, newAuditID(), 0), string(encodeValue(entry)))).Commit()
	if err != nil {
		return res, fmt.Errorf("cluster: switching the SNAA: %w", err)
	}
	if !tr.Succeeded {
		return res, fmt.Errorf("cluster: the SNAA of %s changed while it was moved; run the move again", ns)
	}

	// 4. Delete the entries from the old shard.
	for len(keys) > 0 {
		k := min(len(keys), movePage)
		ops := make([]clientv3.Op, k)
		for i, key := range keys[:k] {
			ops[i] = clientv3.OpDelete(key)
		}
		if _, err := src.Txn(ctx).Then(ops...).Commit(); err != nil {
			return res, fmt.Errorf("cluster: deleting the copies on shard %s: %w", from, err)
		}
		keys = keys[k:]
	}
	return res, nil
}

// place is the position of shard name in shards.
func place(shards []Shard, name string) int {
	for i, s := range shards {
		if s.Name == name {
			return i
		}
	}
	return -1
}
