package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"pidnode/registry"
	"pidnode/store"
)

// maxAttempts bounds how often a write is rehearsed again after losing to a
// concurrent write.
const maxAttempts = 64

// Commit makes the write fn describes through etcd, in place of
// registry.Registry.Commit on a single node:
//
//  1. fn is rehearsed against the local database (registry.Rehearse): its
//     checks run on the state of the applied revision R in a read
//     transaction, and its writes to replicated buckets are collected in
//     memory; the database is written once, by the watch's apply.
//  2. The writes go to etcd as one transaction whose compares hold only if
//     every key written is still as R had it: a key absent at R must still
//     be absent (CreateRevision == 0: create-only, and generated ids and
//     audit sequence numbers that collide), a key present at R must not have
//     changed since (ModRevision <= R: If-Match on the record, whose version
//     and ETag follow from it).
//  3. If a compare fails, another write came first: the node waits until it
//     has applied etcd's revision at that moment and rehearses fn again, so
//     fn now sees the other write (a taken id answers 409, a stale If-Match
//     412).
//  4. On success it waits until the local database has applied the write's
//     revision, so that every front of this node shows it (read-your-writes).
//     The watch applies the values this node sent as they were before
//     compression (keepOwn), without decoding etcd's copy.
//
// Concurrent Commit calls on one node share a rehearsal and a transaction
// (group commit, registry.Groups, fair between owners as on a single node),
// commitLanes groups are in flight at once, and a group waits up to
// commitLinger for the writers the previous one answered. Groups in flight
// at once would conflict only when they write the same key (the same custom
// id, the same record): the audit log's entries take no shared sequence
// number in etcd (auditKeys).
// A member whose fn fails is rehearsed alone (its error is then its own,
// never one that a write etcd has not decided caused) and the group again
// without it; a group too large for one transaction is split.
//
// fn must be idempotent and keep every effect inside tx, as for
// registry.Commit; fn's own error is returned as it is. Commit fails with
// *UnavailableError when etcd does not decide within Config.WriteTimeout.
func (n *Node) Commit(fn func(tx registry.Tx) error) error { return n.CommitAs("", 1, fn) }

// CommitAs is Commit with the admin API's owner and cost
// (registry.CommitAs): one owner's bulks or many creates delay another
// owner's write by at most one group.
//
// In a cluster of several shards the write goes to the shard of owner's
// namespace (the registry shard for "" and for an SNAA without a shard), in
// one transaction of that shard's etcd; a write of records of another
// shard's namespace fails with ErrCrossShard.
func (n *Node) CommitAs(owner string, cost int, fn func(tx registry.Tx) error) error {
	deadline := time.Now().Add(n.cfg.WriteTimeout)
	for {
		s, err := n.shardOfSNAA(owner)
		if err != nil {
			n.countRefusal(err)
			return err
		}
		err = s.groups.Do(owner, cost, fn)
		if errors.Is(err, ErrCrossShard) {
			if o, _ := n.shardOfSNAA(owner); o != s {
				continue // routed just before the SNAA's move was applied
			}
		}
		var me *movedError
		if !errors.As(err, &me) {
			return err
		}
		if !slices.Contains(me.namespaces, n.namespaceOf(owner)) {
			// Grouped with a write of the namespace that is moving.
			if time.Now().After(deadline) {
				err := &UnavailableError{Err: errors.New("a namespace written with this write is being moved to another shard")}
				n.countRefusal(err)
				return err
			}
			continue
		}
		// The owner's namespace is moving off s (MoveNamespace): once the
		// registry says where it went, the write goes there.
		for {
			if o, _ := n.shardOfSNAA(owner); o != s {
				break
			}
			if time.Now().After(deadline) {
				err := &UnavailableError{Err: errors.New("the namespace is being moved to another shard")}
				n.countRefusal(err)
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// commitLanes is how many commit groups a node has in flight at once. One:
// the writes that arrive while a group waits for etcd's quorum gather into
// the next group, which then carries about twice as many creates as with a
// second group rehearsed meanwhile; each etcd transaction, each member's
// raft entry and fsync, and each local apply commit is paid for once per
// group, so larger groups cost less CPU per create on every process of the
// cluster, and the node takes more creates per second when CPU is short.
const commitLanes = 1

// commitLinger bounds how long a group waits for the writers the previous
// group released (registry.Groups.Linger). A group here costs an etcd
// transaction, a raft entry and an fsync on every member and an apply commit
// on every node, so under steady load taking those writers along saves CPU on
// every process. A single node does not linger: its group costs one local
// commit, and there the wait lengthened each write more than it saved.
const commitLinger = 2 * time.Millisecond

// call is one queued write.
type call = registry.Call[func(tx registry.Tx) error]

// Update is Commit for the operator's writes (applications, SNAAs, keys,
// people), alone rather than grouped. Their checks read more than they
// write (a namespace no SNAA has yet, an invitation not yet used), so their
// transaction also requires that nothing under the SNAA, application, key
// and people buckets changed since the rehearsal: such writes are rare, and
// a conflict only means one more rehearsal.
func (n *Node) Update(fn func(tx registry.Tx) error) error {
	var err error
	c := &call{Fn: fn}
	n.runGroup([]*call{c}, []string{"snaas", "applications", "keys", "people"}, func(_ *call, e error) { err = e })
	return err
}

// runGroup commits the calls of group in one transaction and reports each
// call's result, once. guarded names buckets whose whole range must be
// unchanged since the rehearsal.
func (n *shard) runGroup(group []*call, guarded []string, report func(c *call, err error)) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.WriteTimeout)
	defer cancel()
	finish := func(err error) {
		for _, c := range group {
			n.countRefusal(err)
			report(c, err)
		}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		failed := -1
		var ferr error
		writes, rev, err := n.cfg.Registry.RehearseShard(n.metaKey, func(tx registry.Tx) error {
			for i, c := range group {
				if err := safeCall(c.Fn, tx); err != nil {
					failed, ferr = i, err
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			c := group[failed]
			group = append(group[:failed:failed], group[failed+1:]...)
			if failed == 0 {
				// It saw only the synced local copy: its error is its own.
				report(c, ferr)
			} else {
				// It may have failed for what the members before it wrote
				// (an If-Match after an update of the same record), which
				// etcd has not decided: their transaction may fail or
				// conflict. As in a single node's group commit, it runs
				// alone, first, so that its answer holds whatever theirs is.
				n.runGroup([]*call{c}, guarded, report)
			}
			if len(group) == 0 {
				return
			}
			attempt--
			continue
		}
		if err != nil {
			finish(err)
			return
		}
		if len(writes) == 0 {
			finish(nil)
			return
		}
		nss, err := n.node.checkShard(n, writes)
		if err != nil {
			finish(err)
			return
		}
		cmps, ops, puts, err := n.txnOf(writes, rev)
		if err != nil {
			finish(err)
			return
		}
		// A namespace moved away from this shard (move.go) has a key
		// here that refuses its writes; the Else reads tell it apart
		// from a lost race.
		var moved []clientv3.Op
		for _, ns := range nss {
			k := movedKey(n.prefix, ns)
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
			moved = append(moved, clientv3.OpGet(k, clientv3.WithCountOnly()))
		}
		if (len(cmps) > RequiredTxnOps-8 || txnBytes(ops) > RequiredRequestBytes-(1<<20)) && len(group) > 1 {
			half := len(group) / 2
			n.runGroup(group[:half:half], guarded, report)
			n.runGroup(group[half:], guarded, report)
			return
		}
		for _, b := range guarded {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(n.prefix+b+"/"), "<", rev+1).WithPrefix())
		}
		n.keepOwn(puts)
		start := time.Now()
		resp, err := n.cli.Txn(ctx).If(cmps...).Then(ops...).Else(moved...).Commit()
		n.answered(resp, err)
		n.txns.Add(1)
		n.txnNanos.Add(int64(time.Since(start)))
		if err != nil {
			n.dropOwn(puts)
			finish(n.txnError(ctx, err))
			return
		}
		n.noteContact()
		if resp.Succeeded {
			n.noteRevision(resp.Header.Revision)
		} else {
			n.conflicts.Add(1)
			var me movedError
			for i, r := range resp.Responses {
				if rr := r.GetResponseRange(); rr != nil && rr.Count > 0 {
					me.namespaces = append(me.namespaces, nss[i])
				}
			}
			if me.namespaces != nil {
				n.dropOwn(puts)
				finish(&me)
				return
			}
		}
		err = n.waitRevision(ctx, resp.Header.Revision, !resp.Succeeded)
		n.dropOwn(puts)
		if err != nil {
			finish(&UnavailableError{Err: fmt.Errorf("the write was not applied here within %v", n.cfg.WriteTimeout)})
			return
		}
		if resp.Succeeded {
			finish(nil)
			return
		}
	}
	finish(ErrConflict)
}

// txnBytes is about the size of a transaction's operations.
func txnBytes(ops []clientv3.Op) int {
	t := 0
	for _, op := range ops {
		t += len(op.KeyBytes()) + len(op.ValueBytes()) + 16
	}
	return t
}

// safeCall turns a panic of fn into its error, so that one bad write fails
// alone instead of taking the group (and the server) down.
func safeCall(fn func(tx registry.Tx) error, tx registry.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cluster: write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// waitRevision waits until the database has applied rev. The revision of a
// failed transaction is etcd's current one, which may be another prefix's
// write that the watch never delivers: then (foreign) the watch is asked to
// report its progress until it has.
func (n *shard) waitRevision(ctx context.Context, rev int64, foreign bool) error {
	if !foreign || n.applied.Load() >= rev {
		return n.WaitApplied(ctx, rev)
	}
	for {
		if err := n.cli.RequestProgress(clientv3.WithRequireLeader(ctx)); err != nil && ctx.Err() != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err := n.WaitApplied(wctx, rev)
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}

// txnOf builds the compares and operations of writes rehearsed at revision
// rev. A key written twice is compared once, as it was before the first
// write, and written with its last value, compressed (encodeValue). New
// audit entries go under keys of their own (auditKey), without their
// sequence number. puts are the values put, before and after compression
// (keepOwn).
func (n *shard) txnOf(writes []store.Write, rev int64) (cmps []clientv3.Cmp, ops []clientv3.Op, puts []ownPut, err error) {
	type final struct {
		existed bool
		value   []byte
		order   int
	}
	last := make(map[string]*final, len(writes))
	var order []string
	var auditID string
	audit := map[string]string{} // 8-byte sequence key → etcd key
	for _, w := range writes {
		if !registry.IsReplicated(string(w.Bucket)) {
			continue
		}
		k := entryKey(n.prefix, string(w.Bucket), w.Key)
		if string(w.Bucket) == string(store.BucketAudit) && !w.Existed {
			ak, ok := audit[string(w.Key)]
			if !ok {
				if auditID == "" {
					auditID = newAuditID()
				}
				ak = auditKey(n.prefix, auditID, len(audit))
				audit[string(w.Key)] = ak
			}
			k = ak
			if w.Value != nil {
				v, err := registry.AuditWithoutSeq(w.Value)
				if err != nil {
					return nil, nil, nil, err
				}
				w.Value = v
			}
		}
		f, ok := last[k]
		if !ok {
			f = &final{existed: w.Existed, order: len(order)}
			last[k] = f
			order = append(order, k)
		}
		f.value = w.Value
	}
	cmps = make([]clientv3.Cmp, 0, len(order))
	ops = make([]clientv3.Op, 0, len(order))
	puts = make([]ownPut, 0, len(order))
	for _, k := range order {
		f := last[k]
		if f.existed {
			// Present at rev and unchanged since. A key deleted since has
			// ModRevision 0 and passes this compare, but replicated keys are
			// never deleted by a write.
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "<", rev+1),
				clientv3.Compare(clientv3.CreateRevision(k), ">", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
		}
		if f.value == nil {
			ops = append(ops, clientv3.OpDelete(k))
		} else {
			p := ownPut{key: k, v: &ownValue{enc: string(encodeValue(f.value)), plain: f.value}}
			ops = append(ops, clientv3.OpPut(k, p.v.enc))
			puts = append(puts, p)
		}
	}
	return cmps, ops, puts, nil
}

// ownValue is a value this node puts in etcd: as etcd holds it
// (encodeValue) and as the bucket holds it.
type ownValue struct {
	enc   string
	plain []byte
}

// ownPut is an ownValue put under an etcd key.
type ownPut struct {
	key string
	v   *ownValue
}

// keepOwn remembers the values of a transaction this node is about to
// send until the caller has waited for their apply (dropOwn), so that the
// watch applies them without decoding what etcd sends back (ownPlain).
// They are known by key and encoded value, not by revision, because the
// watch may deliver the transaction before its reply reaches the caller.
// It counts the transaction as sent until answered is called.
func (n *shard) keepOwn(puts []ownPut) {
	n.ownMu.Lock()
	defer n.ownMu.Unlock()
	if n.own == nil {
		n.own = map[string]*ownValue{}
	}
	for _, p := range puts {
		n.own[p.key] = p.v
	}
	n.ownSent++
	n.ownChanged()
}

// answered records the reply to a transaction keepOwn counted: the watch
// need no longer wait for it, unless it succeeded and its revision is yet
// to be applied.
func (n *shard) answered(resp *clientv3.TxnResponse, err error) {
	n.ownMu.Lock()
	defer n.ownMu.Unlock()
	n.ownSent--
	if err == nil && resp.Succeeded {
		n.ownRev = max(n.ownRev, resp.Header.Revision)
	}
	n.ownChanged()
}

// ownChanged wakes awaitOwn. The caller holds ownMu.
func (n *shard) ownChanged() {
	if n.ownChange != nil {
		close(n.ownChange)
		n.ownChange = nil
	}
}

// ownPending says whether a transaction of this node is sent and not
// answered, or succeeded at a revision above rev; if so, it returns a
// channel closed when that changes.
func (n *shard) ownPending(rev int64) (bool, <-chan struct{}) {
	n.ownMu.Lock()
	defer n.ownMu.Unlock()
	if n.ownSent == 0 && n.ownRev <= rev {
		return false, nil
	}
	if n.ownChange == nil {
		n.ownChange = make(chan struct{})
	}
	return true, n.ownChange
}

// dropOwn forgets the values keepOwn kept, unless another transaction has
// put the key since.
func (n *shard) dropOwn(puts []ownPut) {
	n.ownMu.Lock()
	defer n.ownMu.Unlock()
	for _, p := range puts {
		if n.own[p.key] == p.v {
			delete(n.own, p.key)
		}
	}
}

// ownPlain returns the bucket value of v, a value under etcd key k, if this
// node put that very value there: whoever wrote it, the same encoded bytes
// decode to the same value. The result is shared: it must not be modified.
func (n *shard) ownPlain(k, v []byte) ([]byte, bool) {
	n.ownMu.Lock()
	defer n.ownMu.Unlock()
	if o := n.own[string(k)]; o != nil && o.enc == string(v) {
		return o.plain, true
	}
	return nil, false
}

// txnError classifies a failed transaction: no decision in time is
// ErrUnavailable; etcd refusing its size names the limit; etcd's NOSPACE
// alarm is ErrStorageFull.
func (n *shard) txnError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrTooManyOps):
		return &LimitError{Setting: "--max-txn-ops", Need: RequiredTxnOps, Err: err}
	case errors.Is(err, rpctypes.ErrRequestTooLarge) || status.Code(err) == codes.ResourceExhausted:
		return &LimitError{Setting: "--max-request-bytes", Need: RequiredRequestBytes, Err: err}
	case errors.Is(err, rpctypes.ErrNoSpace):
		// etcd answered: it is reachable, and full.
		n.noteContact()
		if !n.storageFull.Swap(true) {
			n.log.Error("cluster: etcd's database is full (NOSPACE alarm); every write is refused until space is freed and the alarm disarmed (pidnode cluster reclaim)")
		}
		return &StorageFullError{Shard: n.label(), Err: err}
	}
	if ctx.Err() != nil {
		return &UnavailableError{Err: fmt.Errorf("no decision within %v", n.cfg.WriteTimeout)}
	}
	return &UnavailableError{Err: err}
}

// syncTimeout bounds Sync: a read of the admin API that cannot sync goes on
// with the local copy after it.
const syncTimeout = 2 * time.Second

// Sync returns once the local database has applied every write etcd had
// acknowledged when Sync was called (a linearizable read of etcd's
// revision, then a wait for the watch). The admin API calls it before it
// looks up an API key, so a revocation or suspension made through any node
// holds on this node from the next request on. It fails with
// *UnavailableError when etcd does not answer within two seconds.
//
// Concurrent calls share reads: a call waits for the first read that starts
// after it was made (one read in flight, the next one gathering every call
// that arrives meanwhile), so a busy node reads etcd's revision about once
// per round trip rather than once per request.
//
// In a cluster of several shards it syncs the registry shard (keys and
// SNAAs are its) and, for a request about namespace (its prefix; "" for
// none), that namespace's shard, at the same time, and fails if either
// fails: the request may read that namespace's records, and a read from a
// copy that has not caught up could be stale (a shard this node does not
// count as Connected fails at once). It syncs no other shard, so that a
// request never waits for a shard it does not read (one without quorum
// that still counts as connected takes the whole timeout).
func (n *Node) Sync(ctx context.Context, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	var nsErr error
	done := make(chan struct{})
	switch s := n.shardOfNamespace(namespace); {
	case s == n.shard:
		close(done)
	case !s.Connected():
		close(done)
		nsErr = &UnavailableError{Err: fmt.Errorf("shard %s: no answer from its etcd within %v, or no live watch", s.label(), LiveWindow)}
	default:
		go func() { defer close(done); nsErr = s.sync(ctx) }()
	}
	err := n.shard.sync(ctx)
	<-done
	if err == nil {
		err = nsErr
	}
	n.countRefusal(err)
	return err
}

// sync is Sync without the count of refusals.
func (n *shard) sync(ctx context.Context) error {
	r := n.reads.join()
	select {
	case <-r.done:
	case <-ctx.Done():
		return &UnavailableError{Err: errors.New("reading etcd's revision: no answer before the deadline")}
	}
	if r.err != nil {
		return &UnavailableError{Err: fmt.Errorf("reading etcd's revision: %w", unwrapCtx(r.err))}
	}
	if err := n.waitRevision(ctx, r.rev, true); err != nil {
		return &UnavailableError{Err: fmt.Errorf("revision %d not applied here within %v", r.rev, syncTimeout)}
	}
	return nil
}

// countRefusal counts a request refused for the cluster's state: each
// becomes a 503 (unavailable) or a 507 (storage full) of the admin API.
func (n *shard) countRefusal(err error) {
	var ue *UnavailableError
	var fe *StorageFullError
	switch {
	case err == nil:
	case errors.As(err, &fe):
		n.refusedFull.Add(1)
	case errors.As(err, &ue):
		n.unavailable.Add(1)
	}
}

// readRevision is one linearizable read of etcd's current revision.
func (n *shard) readRevision() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	resp, err := n.cli.Get(ctx, n.probeKey(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	n.noteContact()
	return resp.Header.Revision, nil
}

// revReads shares reads of etcd's revision between concurrent Sync calls
// without ever answering a call with a read that began before it.
type revReads struct {
	read     func() (int64, error)
	mu       sync.Mutex
	inflight bool
	next     *revRead // gathers the calls made while a read is in flight
}

// revRead is one read: done is closed when rev or err is set.
type revRead struct {
	done chan struct{}
	rev  int64
	err  error
}

// join returns the first read that starts after the call: a new one, run
// at once, when none is in flight; else the one that starts when the read
// in flight ends.
func (s *revReads) join() *revRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = &revRead{done: make(chan struct{})}
	}
	r := s.next
	if !s.inflight {
		s.start()
	}
	return r
}

// start runs the gathered read s.next; when it ends, the read gathered
// meanwhile, if any, starts. The caller holds s.mu.
func (s *revReads) start() {
	r := s.next
	s.next = nil
	s.inflight = true
	go func() {
		r.rev, r.err = s.read()
		close(r.done)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.inflight = false
		if s.next != nil {
			s.start()
		}
	}()
}
