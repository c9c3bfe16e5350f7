package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"pidnode/registry"
	"pidnode/store"
)

// A cluster of several shards (Config.Shards) keeps each namespace's
// identifier writes (records, their audit entries and Idempotency-Key
// records) in the etcd of the namespace's shard, named in its SNAA
// (registry.SNAA.Shard, chosen at approval: ChooseShard), and everything
// else (SNAAs, applications, keys, sessions, webhooks, link checks, the
// operator's audit entries, the node names, elections and statistics) in
// the registry shard, the first. A namespace without an SNAA, or whose SNAA
// names no shard, is the registry shard's: a cluster that adds shards keeps
// its namespaces where they are.

// routes maps namespaces and SNAA ids to their shard, as the local copy of
// the registry shard has them.
type routes struct {
	byNS   map[string]*shard
	bySNAA map[string]*shard
	// missing are the SNAA ids and namespaces of SNAAs that name a shard
	// this node is not configured with: their writes are refused here
	// rather than sent to the wrong etcd.
	missing map[string]string
	nsOf    map[string]string // SNAA id → namespace
}

// loadRoutes reads the SNAAs' shards from the database. A cluster of one
// shard has no routes: everything is its.
func (n *Node) loadRoutes() error {
	if len(n.shards) < 2 {
		return nil
	}
	r := &routes{byNS: map[string]*shard{}, bySNAA: map[string]*shard{}, missing: map[string]string{}, nsOf: map[string]string{}}
	err := n.cfg.Registry.View(func(tx registry.Tx) error {
		sns, err := tx.SNAAs()
		if err != nil {
			return err
		}
		for _, sn := range sns {
			r.nsOf[sn.ID] = sn.Namespace
			s := n.shardNamed(sn.Shard)
			if s == nil {
				// A shard this node was not given: its writes cannot be
				// made here, and its records are never applied here.
				n.log.Error("cluster: an SNAA names a shard this node is not configured with; its writes are refused here", "snaa", sn.ID, "shard", sn.Shard)
				r.missing[sn.ID], r.missing[sn.Namespace] = sn.Shard, sn.Shard
				continue
			}
			r.byNS[sn.Namespace] = s
			r.bySNAA[sn.ID] = s
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cluster: reading the SNAAs' shards: %w", err)
	}
	n.routes.Store(r)
	return nil
}

// ownership says, from the SNAAs of reg, whether shard s holds the entry
// under etcd key k: records of a namespace and Idempotency-Key records of
// an SNAA are held by the SNAA's shard; everything else by s.
func (n *Node) ownership(reg *registry.Registry) (func(s *shard, k []byte) bool, error) {
	byNS, bySNAA := map[string]string{}, map[string]string{}
	err := reg.View(func(tx registry.Tx) error {
		sns, err := tx.SNAAs()
		for _, sn := range sns {
			shard := sn.Shard
			if shard == "" {
				shard = n.shard.name
			}
			byNS[sn.Namespace], bySNAA[sn.ID] = shard, shard
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return func(s *shard, k []byte) bool {
		bucket, key, ok := splitKey(n.prefix, k)
		if !ok {
			return true
		}
		var owner string
		switch bucket {
		case string(store.BucketRecords):
			nsp := strings.TrimSuffix(n.cfg.Registry.NamespaceOf(string(key)), "/")
			owner = byNS[nsp[strings.LastIndexByte(nsp, '/')+1:]]
		case string(store.BucketIdempotency):
			id, _, _ := strings.Cut(string(key), " ")
			owner = bySNAA[id]
		}
		return owner == "" || owner == s.name
	}, nil
}

// shardNamed is the shard called name, the registry shard for "", nil for
// a name that is not one of Config.Shards.
func (n *Node) shardNamed(name string) *shard {
	if name == "" {
		return n.shard
	}
	for _, s := range n.shards {
		if s.name == name {
			return s
		}
	}
	return nil
}

// shardOfSNAA is the shard an SNAA's writes go to; an error if the SNAA
// names a shard this node does not have.
func (n *Node) shardOfSNAA(id string) (*shard, error) {
	if r := n.routes.Load(); r != nil && id != "" {
		if s, ok := r.bySNAA[id]; ok {
			return s, nil
		}
		if name, ok := r.missing[id]; ok {
			return nil, missingShard(name)
		}
	}
	return n.shard, nil
}

// shardOfNamespace is the shard that holds namespace's records: the
// registry shard for "", for a namespace of no SNAA and for one whose shard
// this node does not have (nothing of it is applied here).
func (n *Node) shardOfNamespace(namespace string) *shard {
	if r := n.routes.Load(); r != nil && namespace != "" {
		if s, ok := r.byNS[namespace]; ok {
			return s
		}
	}
	return n.shard
}

// missingShard is the error of a write to shard name, which this node is
// not configured with (its --etcd-shard list lags the cluster's).
func missingShard(name string) error {
	return &UnavailableError{Err: fmt.Errorf("%w: %q is not among this node's shards; the operator must give every node the same shards", ErrUnknownShard, name)}
}

// namespaceOf is the namespace of SNAA id, "" if unknown.
func (n *Node) namespaceOf(id string) string {
	if r := n.routes.Load(); r != nil {
		return r.nsOf[id]
	}
	return ""
}

// shardOfRecord is the shard that holds the record under storage key key,
// and the key's namespace ("" for a key of none).
func (n *Node) shardOfRecord(key []byte) (*shard, string, error) {
	nsp := strings.TrimSuffix(n.cfg.Registry.NamespaceOf(string(key)), "/")
	if nsp == "" {
		return n.shard, "", nil
	}
	ns := nsp[strings.LastIndexByte(nsp, '/')+1:]
	r := n.routes.Load()
	if r == nil {
		return n.shard, ns, nil
	}
	if s, ok := r.byNS[ns]; ok {
		return s, ns, nil
	}
	if name, ok := r.missing[ns]; ok {
		return nil, ns, missingShard(name)
	}
	return n.shard, ns, nil
}

// checkShard fails with ErrCrossShard when writes, rehearsed to go to s,
// hold a record of a namespace of another shard. It returns the
// namespaces of the records written, in a cluster of several shards.
func (n *Node) checkShard(s *shard, writes []store.Write) ([]string, error) {
	if len(n.shards) < 2 {
		return nil, nil
	}
	var nss []string
	for _, w := range writes {
		if string(w.Bucket) != string(store.BucketRecords) {
			continue
		}
		o, ns, err := n.shardOfRecord(w.Key)
		if err != nil {
			return nil, err
		}
		if o != s {
			return nil, fmt.Errorf("%w: %s is on shard %s, the write goes to shard %s", ErrCrossShard, w.Key, o.name, s.name)
		}
		if ns != "" && !slices.Contains(nss, ns) {
			nss = append(nss, ns)
		}
	}
	return nss, nil
}

// Shards are the names of the node's shards, the registry shard first.
func (n *Node) Shards() []string {
	out := make([]string, len(n.shards))
	for i, s := range n.shards {
		out[i] = s.name
	}
	return out
}

// ChooseShard is the shard a new SNAA's namespace goes to (the admin API's
// approval): the one named (ErrUnknownShard if there is none such), or, for
// "", the shard whose etcd database uses the fewest bytes now (a shard that
// does not answer within two seconds is passed over). A cluster of one
// shard answers "" (its SNAAs name no shard) for "" and its one shard's
// name.
func (n *Node) ChooseShard(name string) (string, error) {
	if name != "" {
		s := n.shardNamed(name)
		if s == nil {
			return "", fmt.Errorf("%w: %q (this cluster's shards: %s)", ErrUnknownShard, name, strings.Join(n.Shards(), ", "))
		}
		if len(n.shards) == 1 {
			return "", nil
		}
		return name, nil
	}
	if len(n.shards) == 1 {
		return "", nil
	}
	best, bestSize := "", int64(-1)
	for _, s := range n.shards {
		size, err := s.dbSize()
		if err != nil {
			continue
		}
		if bestSize < 0 || size < bestSize {
			best, bestSize = s.name, size
		}
	}
	if best == "" {
		return "", &UnavailableError{Err: fmt.Errorf("no shard's etcd answered within %v", syncTimeout)}
	}
	return best, nil
}

// dbSize is the largest database size in use of the shard's etcd members
// that answer.
func (s *shard) dbSize() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	var (
		size  int64
		first error
		any   bool
	)
	for _, ep := range s.cfg.Endpoints {
		st, err := s.cli.Status(ctx, ep)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		any = true
		size = max(size, st.DbSizeInUse)
	}
	if !any {
		return 0, first
	}
	return size, nil
}

// WriteState says whether writes can be made now (/readyz): nil if every
// shard can make them; else a *ShardsError naming each shard that cannot,
// and why (shard.WriteState). A cluster of one shard answers as that
// shard.
func (n *Node) WriteState() error {
	if len(n.shards) == 1 {
		return n.shard.WriteState()
	}
	var e ShardsError
	for _, s := range n.shards {
		if err := s.WriteState(); err != nil {
			e.Names = append(e.Names, s.name)
			e.Errs = append(e.Errs, err)
		}
	}
	if len(e.Names) == 0 {
		return nil
	}
	return &e
}

// label is the shard's name in errors, "" in a cluster of one shard.
func (s *shard) label() string {
	if len(s.node.shards) < 2 {
		return ""
	}
	return s.name
}
