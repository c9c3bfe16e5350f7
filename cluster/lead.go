package cluster

import (
	"context"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// leaseTTL is the lease of a node's candidacy in an election, in seconds: a
// leader that stops (killed, cut off from etcd) loses its lead this long
// after etcd last heard from it, and another node takes over.
const leaseTTL = 10

// Lead runs fn while this node leads the election named name among the
// nodes of the prefix (etcd's concurrency.Election at P elect/<name>), so
// that a job of the cluster (link checks, webhook deliveries) runs on one
// node at a time and another node takes it over when the leader goes. fn's
// context ends when ctx does or when the lead is lost (the lease expired:
// etcd did not hear from this node within leaseTTL); Lead then campaigns
// again. It returns once ctx has ended and fn has returned.
//
// A leader that is cut off may run for up to leaseTTL after another node
// took over, so jobs must be safe to run twice at once: their writes are
// ordinary cluster writes, decided by etcd's compares.
func (n *Node) Lead(ctx context.Context, name string, fn func(ctx context.Context)) {
	backoff := time.Second
	for ctx.Err() == nil {
		if n.lead(ctx, name, fn) {
			backoff = time.Second
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// lead campaigns once and, if elected, runs fn until the lead or ctx ends;
// false if it could not campaign.
func (n *Node) lead(ctx context.Context, name string, fn func(ctx context.Context)) bool {
	sess, err := concurrency.NewSession(n.cli, concurrency.WithTTL(leaseTTL), concurrency.WithContext(ctx))
	if err != nil {
		if ctx.Err() == nil {
			n.log.Warn("cluster: election session; trying again", "election", name, "err", err)
		}
		return false
	}
	defer sess.Close()
	el := concurrency.NewElection(sess, n.prefix+"elect/"+name)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-sess.Done():
		case <-cctx.Done():
		}
		cancel()
	}()
	defer cancel()
	if err := el.Campaign(cctx, n.cfg.NodeName); err != nil {
		if cctx.Err() == nil {
			n.log.Warn("cluster: election campaign; trying again", "election", name, "err", err)
		}
		return false
	}
	n.log.Info("cluster: leading", "election", name)
	n.leading.Add(1)
	fn(cctx)
	n.leading.Add(-1)
	lost := ctx.Err() == nil
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	el.Resign(rctx)
	rcancel()
	if lost {
		n.log.Warn("cluster: lead lost (etcd did not hear from this node in time); campaigning again", "election", name)
	}
	return true
}
