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

// farewellTimeout bounds each call a stopping node makes to etcd to give
// something up (resigning the lead, revoking a lease), and how long a
// campaign whose context ended may take to give up: when the node stops
// because etcd stopped too (one Ctrl-C to both), nothing answers, and the
// lease expires on its own anyway.
const farewellTimeout = time.Second

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
	defer n.endSession(sess)
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
	if err := n.campaign(cctx, el); err != nil {
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
	rctx, rcancel := context.WithTimeout(context.Background(), farewellTimeout)
	el.Resign(rctx)
	rcancel()
	if lost {
		n.log.Warn("cluster: lead lost (etcd did not hear from this node in time); campaigning again", "election", name)
	}
	return true
}

// campaign is el.Campaign returning at most farewellTimeout after ctx ends.
// A campaign whose context ends resigns through the client's own context,
// which has no deadline: without etcd it would wait until the client is
// closed, and the node's shutdown with it. The campaign left behind then
// ends when the client is closed; the session's lease, revoked or expired,
// takes its key away.
func (n *Node) campaign(ctx context.Context, el *concurrency.Election) error {
	done := make(chan error, 1)
	go func() { done <- el.Campaign(ctx, n.cfg.NodeName) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(farewellTimeout):
		return ctx.Err()
	}
}

// endSession stops keeping the session's lease alive and revokes it, within
// farewellTimeout. (Session.Close revokes under the context the session was
// made with, which has ended when the node stops, so the lease would stay
// for leaseTTL.)
func (n *Node) endSession(sess *concurrency.Session) {
	sess.Orphan()
	ctx, cancel := context.WithTimeout(context.Background(), farewellTimeout)
	defer cancel()
	n.cli.Revoke(ctx, sess.Lease())
}
