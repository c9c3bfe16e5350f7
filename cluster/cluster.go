package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"pidnode/registry"
	"pidnode/store"
)

// DefaultPrefix is the etcd key prefix when Config.Prefix is empty.
const DefaultPrefix = "/pidnode/"

// What a cluster's etcd must accept: one bulk write (1,000 creates, each a
// record and an audit entry, each written with a compare) in one
// transaction, and a request of that size. Dial checks both.
const (
	RequiredTxnOps       = 4096
	RequiredRequestBytes = 8 << 20
)

// Defaults of the zero Config durations.
const (
	DefaultDialTimeout  = 5 * time.Second
	DefaultWriteTimeout = 5 * time.Second
)

// Invalidator drops cached views of a record after its change is applied
// (write.Invalidator; *cache.Cache satisfies both).
type Invalidator interface {
	Invalidate(key string)
}

// Config configures Dial.
type Config struct {
	// Endpoints are etcd client URLs of a cluster kept in one etcd (the
	// shard DefaultShard). Either Endpoints or Shards is required.
	Endpoints []string
	// Shards are the etcd clusters of a cluster that spreads its
	// namespaces over several (docs/product.md §10), the registry shard
	// first. Every node must list the same shards in the same order, and a
	// shard once used keeps its name and place (it numbers its audit
	// entries: keys.go); new shards go at the end.
	Shards []Shard
	// Prefix is the key prefix of this cluster's data; it starts and ends
	// with '/'. If empty, DefaultPrefix.
	Prefix string
	// NodeName names this node in logs, metrics and readiness. Required.
	NodeName string
	// TLS, if not nil, is used for the connections to etcd.
	TLS *tls.Config
	// Username and Password authenticate to etcd when Username is set.
	Username, Password string
	// DialTimeout bounds Dial's wait for etcd to answer. If zero,
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// WriteTimeout bounds how long a write waits for etcd (and then for its
	// own application here) before it fails with ErrUnavailable. If zero,
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// DB and Registry are this node's database. Required.
	DB       *store.DB
	Registry *registry.Registry
	// Invalidator is told every record key an applied change touched, after
	// its commit. Nil means no cache.
	Invalidator Invalidator
	// OnApply, if set, is called after each applied commit with the buckets
	// it changed (admin drops its key cache when keys or SNAAs changed).
	OnApply func(buckets map[string]bool)
	// Logger receives the node's lines. Nil discards.
	Logger *slog.Logger
}

// DefaultShard is the name of the one shard of a Config with Endpoints.
const DefaultShard = "default"

// MaxShards bounds Config.Shards (audit entries carry the shard's place in
// 7 bits: keys.go).
const MaxShards = 64

// Shard is one etcd cluster of Config.Shards.
type Shard struct {
	// Name names the shard in the SNAA records, metrics and readiness:
	// 1 to 32 lower-case letters, digits and '-'.
	Name string
	// Endpoints are its client URLs.
	Endpoints []string
}

// CheckShardName reports whether name is a valid Shard.Name.
func CheckShardName(name string) error {
	if name == "" || len(name) > 32 {
		return configError("Shards.Name", name, "must be 1 to 32 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return configError("Shards.Name", name, "may hold only a-z, 0-9 and -")
		}
	}
	return nil
}

// Node is a cluster member's connection to etcd: it applies its prefix into
// the local database (Run) and sends writes to etcd (Commit). It is safe for
// concurrent use.
//
// A cluster may keep its data in several etcd clusters (Config.Shards):
// each is a shard, applied and written on its own; the embedded one is the
// registry shard, which also holds the node names, the elections and the
// statistics.
type Node struct {
	*shard
	shards []*shard // the registry shard first
	cfg    Config
	prefix string
	log    *slog.Logger

	// applyMu lets a snapshot, which replaces the whole database, stop
	// every shard's applier meanwhile (apply holds it shared).
	applyMu sync.RWMutex
	routes  atomic.Pointer[routes] // namespace and SNAA → shard (shard.go)

	names   nameState    // the node's hold on its name (nodes.go)
	leading atomic.Int64 // elections this node leads (lead.go)
	stats   statsPub     // the statistics it publishes (stats.go)
}

// shard is the node's connection to one etcd cluster: its client, its
// applied revision, its writes and its liveness. Its methods read the
// node's configuration through the copies cfg, prefix and log.
type shard struct {
	node    *Node
	name    string // Config.Shards' name
	idx     int    // position in Config.Shards
	metaKey string // name of its applied revision in the database ("" for the registry shard: store.Tx.ShardRevision)
	cfg     Config // the node's, with this shard's Endpoints
	cli     *clientv3.Client
	prefix  string
	log     *slog.Logger
	applied atomic.Int64 // revision applied to the database
	mu      sync.Mutex
	advance chan struct{} // closed and replaced when applied grows

	// Group commit (commit.go): writes queued fairly by owner, groups in
	// flight at once.
	groups registry.Groups[func(tx registry.Tx) error]
	// Sync's shared reads of etcd's revision.
	reads revReads

	watchRestarts atomic.Uint64
	resyncs       atomic.Uint64
	conflicts     atomic.Uint64
	connected     atomic.Bool  // the watch has a live stream
	lastContact   atomic.Int64 // unix ns of the last linearizable round trip etcd answered
	storageFull   atomic.Bool  // etcd's NOSPACE alarm is raised
	unavailable   atomic.Uint64
	refusedFull   atomic.Uint64
	txns          atomic.Uint64
	txnNanos      atomic.Int64
	applies       atomic.Uint64
	known         atomic.Int64 // highest etcd revision seen
	behindSince   atomic.Int64 // unix ns since applied < known; 0 when caught up
	rttNanos      atomic.Int64

	// Values this node is putting in etcd, by etcd key (keepOwn): the
	// watch applies them without decoding what etcd sends back.
	ownMu      sync.Mutex
	own        map[string]*ownValue
	ownApplied atomic.Uint64 // values the watch applied from own
	// This node's transactions sent and not yet answered, the highest
	// revision of those that succeeded, and ownChange, closed and replaced
	// when either changes: the watch waits for them to share one apply
	// (awaitOwn).
	ownSent   int
	ownRev    int64
	ownChange chan struct{}
}

// Dial connects to etcd and checks, within cfg.DialTimeout, that it answers
// (*UnreachableError) and that it accepts a transaction as large as a full
// bulk write (*LimitError). A database that already holds a copy (an applied
// revision) does not need etcd to answer: the node starts on its copy and
// connects later. It starts nothing: Start does.
func Dial(cfg Config) (*Node, error) {
	if len(cfg.Shards) == 0 && len(cfg.Endpoints) > 0 {
		cfg.Shards = []Shard{{Name: DefaultShard, Endpoints: cfg.Endpoints}}
	}
	switch {
	case len(cfg.Shards) == 0:
		return nil, configError("Endpoints", "", "required (or Shards)")
	case cfg.DB == nil:
		return nil, required("DB")
	case cfg.Registry == nil:
		return nil, required("Registry")
	case cfg.NodeName == "":
		return nil, required("NodeName")
	case len(cfg.Shards) > MaxShards:
		return nil, configError("Shards", fmt.Sprint(len(cfg.Shards)), fmt.Sprintf("must hold at most %d shards", MaxShards))
	}
	seen := map[string]bool{}
	for _, sh := range cfg.Shards {
		if err := CheckShardName(sh.Name); err != nil {
			return nil, err
		}
		if seen[sh.Name] {
			return nil, configError("Shards.Name", sh.Name, "must not name two shards")
		}
		if len(sh.Endpoints) == 0 {
			return nil, configError("Shards.Endpoints", "", fmt.Sprintf("required for shard %q", sh.Name))
		}
		seen[sh.Name] = true
	}
	cfg.Endpoints = cfg.Shards[0].Endpoints
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if !strings.HasPrefix(cfg.Prefix, "/") || !strings.HasSuffix(cfg.Prefix, "/") {
		return nil, configError("Prefix", cfg.Prefix, "must start and end with /")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Node{cfg: cfg, prefix: cfg.Prefix, log: log}
	n.stats.start = time.Now().UTC().Format("20060102")
	closeAll := func() {
		for _, s := range n.shards {
			s.cli.Close()
		}
	}
	for i, sh := range cfg.Shards {
		s, err := n.dialShard(i, sh)
		if err != nil {
			closeAll()
			return nil, err
		}
		n.shards = append(n.shards, s)
	}
	n.shard = n.shards[0]
	if err := n.loadRoutes(); err != nil {
		closeAll()
		return nil, err
	}
	return n, nil
}

// dialShard connects to the etcd of shard i and probes it (Dial).
func (n *Node) dialShard(i int, sh Shard) (*shard, error) {
	cfg := n.cfg
	cfg.Endpoints = sh.Endpoints
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		// A full bulk write plus gRPC framing.
		MaxCallSendMsgSize: RequiredRequestBytes + 1<<20,
		MaxCallRecvMsgSize: 64 << 20,
		// Keepalive notices a dead connection within seconds, so that the
		// watch moves to another member.
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		// gRPC's own reconnect backoff grows to two minutes and a connection
		// attempt may hang for 20 s: a node cut off for a while would stay
		// unavailable that long after etcd is back. A lost connection is
		// tried again at least every second, each attempt bounded.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		})},
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, &UnreachableError{Endpoints: cfg.Endpoints, Err: err}
	}
	s := &shard{node: n, name: sh.Name, idx: i, cfg: cfg, cli: cli, prefix: n.prefix, log: n.log, advance: make(chan struct{})}
	if i > 0 {
		s.metaKey = sh.Name
		s.log = n.log.With("shard", sh.Name)
	}
	s.groups.Run = func(group []*call) { s.runGroup(group, nil, (*call).Finish) }
	s.groups.Lanes = commitLanes
	s.groups.Linger = commitLinger
	s.reads.read = s.readRevision
	rev, err := cfg.DB.ShardRevision(s.metaKey)
	if err != nil {
		cli.Close()
		return nil, err
	}
	s.applied.Store(rev)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	if err := s.probe(ctx); err != nil {
		var ue *UnreachableError
		if errors.As(err, &ue) && rev > 0 {
			// A node with a copy serves it through an etcd outage, restarts
			// included: Run connects once etcd answers, and writes answer
			// 503 until then.
			s.log.Warn("cluster: etcd does not answer; serving the local copy, writes unavailable until it does",
				"applied", rev, "err", ue.Err)
			return s, nil
		}
		cli.Close()
		return nil, err
	}
	return s, nil
}

// probeKey is the scratch key of the start-up probe; nothing is written to it.
func (n *shard) probeKey() string { return n.prefix + "probe" }

// probe checks that etcd answers and accepts a transaction of
// RequiredTxnOps compares and RequiredRequestBytes. The compares are on a
// key nobody writes, and the transaction has no operations, so it changes
// nothing.
func (n *shard) probe(ctx context.Context) error {
	if _, err := n.cli.Get(ctx, n.probeKey()); err != nil {
		return &UnreachableError{Endpoints: n.cfg.Endpoints, Err: unwrapCtx(err)}
	}
	n.noteContact()
	k := n.probeKey()
	cmps := make([]clientv3.Cmp, RequiredTxnOps)
	for i := range cmps {
		cmps[i] = clientv3.Compare(clientv3.ModRevision(k), "!=", -1)
	}
	if _, err := n.cli.Txn(ctx).If(cmps...).Commit(); err != nil {
		if errors.Is(err, rpctypes.ErrTooManyOps) {
			return &LimitError{Setting: "--max-txn-ops", Need: RequiredTxnOps, Err: err}
		}
		return &UnreachableError{Endpoints: n.cfg.Endpoints, Err: unwrapCtx(err)}
	}
	// A value compare on the absent key is false: etcd only measures it.
	big := strings.Repeat("x", RequiredRequestBytes-64<<10)
	if _, err := n.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(k), "=", big)).Commit(); err != nil {
		// etcd refuses a request over its limit itself, or gRPC does when the
		// request is larger than the limit plus etcd's allowance for framing.
		if errors.Is(err, rpctypes.ErrRequestTooLarge) || status.Code(err) == codes.ResourceExhausted {
			return &LimitError{Setting: "--max-request-bytes", Need: RequiredRequestBytes, Err: err}
		}
		return &UnreachableError{Endpoints: n.cfg.Endpoints, Err: unwrapCtx(err)}
	}
	return nil
}

// unwrapCtx says "no answer" for a deadline, which is what it means here.
func unwrapCtx(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("no answer before the deadline")
	}
	return err
}

// Close closes the connection to etcd. Run returns when its context ends.
// Close returns within farewellTimeout even if closing the client waits on
// an etcd that does not answer; the client then finishes closing on its own.
func (n *Node) Close() error {
	done := make(chan error, len(n.shards))
	for _, s := range n.shards {
		go func() { done <- s.cli.Close() }()
	}
	timeout := time.After(farewellTimeout)
	var first error
	for range n.shards {
		select {
		case err := <-done:
			if first == nil {
				first = err
			}
		case <-timeout:
			return fmt.Errorf("cluster: the etcd client did not close within %v", farewellTimeout)
		}
	}
	return first
}

// Name is the node's name.
func (n *Node) Name() string { return n.cfg.NodeName }

// Prefix is the etcd key prefix of the cluster's data.
func (n *Node) Prefix() string { return n.prefix }

// Applied is the etcd revision applied to the local database.
func (n *shard) Applied() int64 { return n.applied.Load() }

// LiveWindow is how recent a node's last answered round trip to etcd must
// be for it to count as connected: a few missed heartbeats (heartbeatEvery)
// and it does not. etcd's client retries a broken watch without ending it,
// so the watch alone cannot tell a node cut off from etcd.
const LiveWindow = 3 * time.Second

// Connected reports whether the node can make writes now: its watch of
// etcd has a stream and etcd answered a linearizable read within the last
// LiveWindow (the heartbeat reads every second).
func (n *shard) Connected() bool {
	last := n.lastContact.Load()
	return n.connected.Load() && last != 0 && time.Since(time.Unix(0, last)) < LiveWindow
}

// WriteState says whether the node can make writes now: nil if so, a
// *StorageFullError while etcd's NOSPACE alarm is raised, otherwise an
// error saying what is missing (no answer from etcd within LiveWindow, or
// no watch stream).
func (n *shard) WriteState() error {
	if n.storageFull.Load() {
		return &StorageFullError{Shard: n.label(), Err: errors.New("etcd's NOSPACE alarm is raised")}
	}
	last := n.lastContact.Load()
	switch {
	case last == 0:
		return fmt.Errorf("node %s has had no answer from etcd yet (applied revision %d)", n.cfg.NodeName, n.applied.Load())
	case time.Since(time.Unix(0, last)) >= LiveWindow:
		return fmt.Errorf("node %s has had no answer from etcd for %.0f s (applied revision %d)",
			n.cfg.NodeName, time.Since(time.Unix(0, last)).Seconds(), n.applied.Load())
	case !n.connected.Load():
		return fmt.Errorf("node %s has no live watch of etcd (applied revision %d)", n.cfg.NodeName, n.applied.Load())
	}
	return nil
}

// StorageFull reports whether etcd has raised its NOSPACE alarm (its
// database reached --quota-backend-bytes): it refuses every write until an
// operator frees space and disarms the alarm (README, cluster mode).
func (n *shard) StorageFull() bool { return n.storageFull.Load() }

// noteContact records that etcd answered a linearizable request just now.
func (n *shard) noteContact() { n.lastContact.Store(time.Now().UnixNano()) }

// setApplied publishes rev as applied and wakes the waiters.
func (n *shard) setApplied(rev int64) {
	n.mu.Lock()
	if rev > n.applied.Load() {
		n.applied.Store(rev)
		if rev >= n.known.Load() {
			n.behindSince.Store(0)
		}
		close(n.advance)
		n.advance = make(chan struct{})
	}
	n.mu.Unlock()
}

// WaitApplied returns once the local database has applied rev, or with
// ctx's error.
func (n *shard) WaitApplied(ctx context.Context, rev int64) error {
	for {
		n.mu.Lock()
		if n.applied.Load() >= rev {
			n.mu.Unlock()
			return nil
		}
		ch := n.advance
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
