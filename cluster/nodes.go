package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Node names (docs/product.md §10). A node's name labels its metrics, its
// readiness and its statistics keys (stats.go), so two live nodes must not
// share one. A serving node holds its name in etcd:
//
//	P nodes/<node name>   JSON Instance: host name and absolute data directory
//
// attached to a lease of NameTTL seconds that the client keeps alive while
// the node runs and that the node revokes when it stops, so the key is gone
// at once after a clean stop and NameTTL seconds after a crash. The value
// identifies the instance: a data directory is locked by one process on its
// host, so the same host and directory are the same node started again (after
// a crash, before its lease expired), which takes the key over at once. Any
// other instance holding the name makes Register fail with *NameTakenError.
// These keys are not applied into the nodes' databases.

// NameTTL is the lease of a node's name, in seconds: how long the name of a
// crashed node (or of one cut off from etcd) stays taken.
const NameTTL = 10

// SeedNodeName is the node name under which `pidnode cluster seed` publishes
// the statistics of the database it loads (Seed); no serving node may take it.
const SeedNodeName = "seed"

// ErrNameTaken: another node holds the node name. Returned wrapped in
// *NameTakenError.
var ErrNameTaken = errors.New("cluster: node name taken by another node")

// Instance identifies a running node: the host it runs on and its data
// directory (absolute).
type Instance struct {
	Host string `json:"host"`
	Data string `json:"data"`
}

// NameTakenError says which node holds the name.
type NameTakenError struct {
	Name   string
	Holder Instance // zero if the holder's value could not be read
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("node name %q is held by another running node (host %s, data directory %s)", e.Name, e.Holder.Host, e.Holder.Data)
}

func (e *NameTakenError) Unwrap() error { return ErrNameTaken }

// CheckNodeName refuses a name a serving node cannot have: empty, holding a
// NUL byte or SeedNodeName.
func CheckNodeName(name string) error {
	switch {
	case name == "":
		return configError("NodeName", "", "must not be empty")
	case strings.IndexByte(name, 0) >= 0:
		return configError("NodeName", name, "must not hold a NUL byte")
	case name == SeedNodeName:
		return configError("NodeName", name, "is reserved for the statistics loaded by `pidnode cluster seed`")
	}
	return nil
}

// nameState is a node's hold on its name (Register, Deregister).
type nameState struct {
	mu     sync.Mutex
	value  string           // JSON of the Instance; "" before Register
	lease  clientv3.LeaseID // 0 while the name is not held
	taken  bool             // another instance holds the name
	stop   context.CancelFunc
	done   chan struct{}
	retry  time.Duration // wait between registrations that failed; tests shorten it
	logged bool          // the current failure to register has been logged
}

// nodeKey is the etcd key of the node's name.
func (n *Node) nodeKey() string { return n.prefix + "nodes/" + n.cfg.NodeName }

// Register takes the node's name in etcd for inst and keeps it until
// Deregister (see the top of this file). It fails with *NameTakenError when
// another instance holds the name, and with an ErrConfig error for a name
// CheckNodeName refuses. When etcd does not answer within ctx, Register logs
// that and returns nil: the node goes on registering in the background, as it
// does whenever it loses its lease (an etcd outage longer than NameTTL).
func (n *Node) Register(ctx context.Context, inst Instance) error {
	if err := CheckNodeName(n.cfg.NodeName); err != nil {
		return err
	}
	v, err := json.Marshal(inst)
	if err != nil {
		return err
	}
	s := &n.names
	s.mu.Lock()
	if s.value != "" {
		s.mu.Unlock()
		return fmt.Errorf("%w: node %s registered twice", ErrConfig, n.cfg.NodeName)
	}
	s.value = string(v)
	if s.retry == 0 {
		s.retry = time.Second
	}
	s.mu.Unlock()

	lease, err := n.claim(ctx)
	var te *NameTakenError
	if errors.As(err, &te) {
		s.mu.Lock()
		s.value = ""
		s.mu.Unlock()
		return err
	}
	if err != nil {
		n.log.Warn("cluster: could not register the node name; registering it when etcd answers", "name", n.cfg.NodeName, "err", err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.lease, s.stop, s.done, s.logged = lease, cancel, make(chan struct{}), err != nil
	s.mu.Unlock()
	go n.keepName(kctx)
	return nil
}

// claim takes the name with a fresh lease and returns the lease.
func (n *Node) claim(ctx context.Context) (clientv3.LeaseID, error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.WriteTimeout)
	defer cancel()
	g, err := n.cli.Grant(ctx, NameTTL)
	if err != nil {
		return 0, &UnavailableError{Err: fmt.Errorf("granting the node name's lease: %w", unwrapCtx(err))}
	}
	fail := func(err error) (clientv3.LeaseID, error) {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		defer rcancel()
		n.cli.Revoke(rctx, g.ID) // best effort: unused, it expires anyway
		return 0, err
	}
	key, value := n.nodeKey(), n.names.value
	for range 8 {
		r, err := n.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, value, clientv3.WithLease(g.ID))).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return fail(&UnavailableError{Err: fmt.Errorf("registering the node name: %w", unwrapCtx(err))})
		}
		if r.Succeeded {
			return g.ID, nil
		}
		kvs := r.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // deleted since the compare
		}
		if string(kvs[0].Value) != value {
			te := &NameTakenError{Name: n.cfg.NodeName}
			json.Unmarshal(kvs[0].Value, &te.Holder)
			return fail(te)
		}
		// This instance before a restart: take the key over with the new
		// lease (the old one then holds nothing and expires).
		r, err = n.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Value(key), "=", value)).
			Then(clientv3.OpPut(key, value, clientv3.WithLease(g.ID))).Commit()
		if err != nil {
			return fail(&UnavailableError{Err: fmt.Errorf("registering the node name: %w", unwrapCtx(err))})
		}
		if r.Succeeded {
			return g.ID, nil
		}
	}
	return fail(fmt.Errorf("%w: registering the node name", ErrConflict))
}

// keepName keeps the name's lease alive until ctx ends, and registers the
// name again whenever the lease is lost.
func (n *Node) keepName(ctx context.Context) {
	s := &n.names
	defer close(s.done)
	for ctx.Err() == nil {
		s.mu.Lock()
		lease := s.lease
		s.mu.Unlock()
		if lease != 0 {
			if ch, err := n.cli.KeepAlive(ctx, lease); err == nil {
				for range ch {
				}
			}
			if ctx.Err() != nil {
				return
			}
			// The channel closes when etcd has not renewed the lease for
			// NameTTL, or says it is gone.
			n.log.Warn("cluster: lost the node name's lease; registering it again when etcd answers", "name", n.cfg.NodeName)
			s.mu.Lock()
			s.lease, s.logged = 0, true
			s.mu.Unlock()
			continue
		}
		lease, err := n.claim(ctx)
		if ctx.Err() != nil {
			if lease != 0 {
				s.mu.Lock()
				s.lease = lease // Deregister revokes it
				s.mu.Unlock()
			}
			return
		}
		var te *NameTakenError
		s.mu.Lock()
		switch {
		case err == nil:
			s.lease, s.taken = lease, false
			if s.logged {
				n.log.Info("cluster: node name registered", "name", n.cfg.NodeName)
			}
			s.logged = false
		case errors.As(err, &te):
			if !s.taken {
				n.log.Error("cluster: another running node took this node's name; this node publishes no statistics until it is free again",
					"name", n.cfg.NodeName, "holder_host", te.Holder.Host, "holder_data", te.Holder.Data)
			}
			s.taken, s.logged = true, true
		case !s.logged:
			n.log.Warn("cluster: could not register the node name; retrying", "name", n.cfg.NodeName, "err", err)
			s.logged = true
		}
		retry := s.retry
		s.mu.Unlock()
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
		}
	}
}

// nameTaken reports whether another instance was found holding the name
// (PublishStats then publishes nothing, so as not to overwrite its totals).
func (n *Node) nameTaken() bool {
	n.names.mu.Lock()
	defer n.names.mu.Unlock()
	return n.names.taken
}

// Deregister stops keeping the name and revokes its lease, which deletes the
// name's key: the name is free at once. Without an answer from etcd within
// a second it gives up (the name is free when the lease expires). It does
// nothing on a node that did not Register.
func (n *Node) Deregister() {
	s := &n.names
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop = nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
	s.mu.Lock()
	lease := s.lease
	s.lease = 0
	s.mu.Unlock()
	if lease == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), farewellTimeout)
	defer cancel()
	if _, err := n.cli.Revoke(ctx, lease); err != nil {
		n.log.Warn("cluster: could not revoke the node name's lease; the name is free when it expires", "name", n.cfg.NodeName, "ttl_seconds", NameTTL, "err", err)
	}
}
