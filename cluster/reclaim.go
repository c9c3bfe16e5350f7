package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// ReclaimResult is what Reclaim did.
type ReclaimResult struct {
	// Revision is the revision etcd's history was compacted to (its
	// current one).
	Revision int64
	// Before and After are each member's database size in bytes before the
	// compaction and after its defragmentation, by client URL.
	Before, After map[string]int64
	// Quota is the members' --quota-backend-bytes as they report it (0 if
	// they do not).
	Quota int64
	// Disarmed is how many NOSPACE alarms were disarmed.
	Disarmed int
}

// Reclaim frees the space of an etcd that raised its NOSPACE alarm (its
// database reached --quota-backend-bytes, and it refuses every write) and
// lets it take writes again, as etcd's documentation prescribes: it
// compacts the history up to the current revision (dropping every older
// revision of every key, of every prefix), defragments every member in turn
// (which gives the freed pages back, and blocks that member for the time
// it takes), and disarms the NOSPACE alarms. Only cfg's Endpoints, TLS,
// Username, Password and DialTimeout are used.
//
// Compacting away revisions the nodes have not applied yet makes them load
// a snapshot (a resync); nodes that are caught up go on. If the live data
// itself is near the quota, the alarm comes back at the next writes: the
// quota must be raised (restart each member with a larger
// --quota-backend-bytes).
func Reclaim(ctx context.Context, cfg Config) (*ReclaimResult, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, required("Endpoints")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, &UnreachableError{Endpoints: cfg.Endpoints, Err: err}
	}
	defer cli.Close()
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, cfg.DialTimeout) }

	sctx, cancel := step()
	members, err := cli.MemberList(sctx)
	cancel()
	if err != nil {
		return nil, &UnreachableError{Endpoints: cfg.Endpoints, Err: unwrapCtx(err)}
	}
	var urls []string
	for _, m := range members.Members {
		if len(m.ClientURLs) > 0 {
			urls = append(urls, m.ClientURLs[0])
		}
	}
	res := &ReclaimResult{Before: map[string]int64{}, After: map[string]int64{}}
	for _, u := range urls {
		sctx, cancel := step()
		st, err := cli.Status(sctx, u)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cluster: reclaim: status of %s: %w", u, unwrapCtx(err))
		}
		res.Before[u] = st.DbSize
		res.Quota = max(res.Quota, st.DbSizeQuota)
	}

	sctx, cancel = step()
	r, err := cli.Get(sctx, "pidnode-reclaim", clientv3.WithCountOnly())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cluster: reclaim: reading the current revision: %w", unwrapCtx(err))
	}
	res.Revision = r.Header.Revision
	sctx, cancel = step()
	_, err = cli.Compact(sctx, res.Revision, clientv3.WithCompactPhysical())
	cancel()
	if err != nil && !errors.Is(err, rpctypes.ErrCompacted) { // compacted there already
		return nil, fmt.Errorf("cluster: reclaim: compacting to revision %d: %w", res.Revision, unwrapCtx(err))
	}

	for _, u := range urls {
		// Defragmenting rewrites the member's whole file: give it longer.
		dctx, cancel := context.WithTimeout(ctx, time.Minute+cfg.DialTimeout)
		_, err := cli.Defragment(dctx, u)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cluster: reclaim: defragmenting %s: %w", u, unwrapCtx(err))
		}
		sctx, cancel := step()
		st, err := cli.Status(sctx, u)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cluster: reclaim: status of %s: %w", u, unwrapCtx(err))
		}
		res.After[u] = st.DbSize
	}

	sctx, cancel = step()
	alarms, err := cli.AlarmList(sctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cluster: reclaim: listing alarms: %w", unwrapCtx(err))
	}
	for _, a := range alarms.Alarms {
		if a.Alarm != etcdserverpb.AlarmType_NOSPACE {
			continue
		}
		sctx, cancel := step()
		_, err := cli.AlarmDisarm(sctx, &clientv3.AlarmMember{MemberID: a.MemberID, Alarm: a.Alarm})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cluster: reclaim: disarming the NOSPACE alarm of member %x: %w", a.MemberID, unwrapCtx(err))
		}
		res.Disarmed++
	}
	return res, nil
}
