package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pidnode/cluster"
	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// clusterSeedFlags are the settings of `pidnode cluster seed`: the offline
// ones and etcd's.
var clusterSeedFlags = func() map[string]bool {
	m := map[string]bool{"etcd-endpoints": true, "etcd-prefix": true, "etcd-cert": true, "etcd-key": true, "etcd-ca": true,
		"etcd-username": true, "etcd-password-file": true, "node-name": true}
	for k := range offlineFlags {
		m[k] = true
	}
	return m
}()

// clusterReclaimFlags are the settings of `pidnode cluster reclaim`:
// etcd's only.
var clusterReclaimFlags = map[string]bool{"etcd-endpoints": true, "etcd-cert": true, "etcd-key": true, "etcd-ca": true,
	"etcd-username": true, "etcd-password-file": true}

const clusterUsage = `usage: pidnode cluster seed --data DIR --etcd-endpoints URLS [--etcd-prefix P] [etcd TLS and user flags]
       pidnode cluster reclaim --etcd-endpoints URLS [etcd TLS and user flags]
       pidnode cluster move-namespace --namespace NS --to SHARD --etcd-shard NAME=URLS… [--etcd-prefix P] [etcd TLS and user flags]`

// clusterMoveFlags are the settings of `pidnode cluster move-namespace`:
// the shards and etcd's.
var clusterMoveFlags = map[string]bool{"etcd-shard": true, "etcd-prefix": true, "etcd-cert": true, "etcd-key": true, "etcd-ca": true,
	"etcd-username": true, "etcd-password-file": true}

// cmdCluster runs the cluster subcommands: `pidnode cluster seed --data DIR
// --etcd-endpoints URLS` loads a stopped single node's database into an
// empty etcd prefix; `pidnode cluster reclaim --etcd-endpoints URLS` frees
// the space of a full etcd (cluster.Reclaim).
func cmdCluster(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "reclaim" {
		return cmdClusterReclaim(args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "move-namespace" {
		return cmdClusterMove(args[1:], getenv, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "seed" {
		fmt.Fprintln(stderr, clusterUsage)
		return errUsage
	}
	cfg, rest, err := loadConfig("cluster seed", args[1:], getenv, stderr, clusterSeedFlags)
	if err != nil {
		return err
	}
	if len(rest) != 0 || len(cfg.EtcdEndpoints) == 0 {
		fmt.Fprintln(stderr, "usage: pidnode cluster seed --data DIR --etcd-endpoints URLS [--etcd-prefix P]")
		return errUsage
	}
	namer, err := newNamer(cfg)
	if err != nil {
		return err
	}
	mb, err := readModel(cfg.Model)
	if err != nil {
		return err
	}
	p := dbPath(cfg.Data)
	if _, err := os.Stat(p); err != nil {
		return fileError("database", p, "data", err)
	}
	db, err := store.Open(store.Config{Path: p})
	if err != nil {
		return openError(p, err)
	}
	defer db.Close()
	c, err := dialEtcd(cfg, db, namer, mb, nil, nil, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	n, err := c.Seed(context.Background())
	if errors.Is(err, cluster.ErrPrefixNotEmpty) {
		return &startError{msg: fmt.Sprintf("etcd prefix %s already holds data", c.Prefix()),
			hint: "seed an empty prefix (choose another --etcd-prefix), or start nodes on empty data directories to join it", err: err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d entries and %d statistics totals from %s into etcd prefix %s; start the cluster's nodes on empty data directories\n",
		n.Entries, n.Stats, p, c.Prefix())
	return nil
}

// cmdClusterReclaim frees the space of an etcd that reached its quota
// (NOSPACE alarm; writes answer 507) and disarms the alarm: compaction to
// the current revision, defragmentation of every member, disarm
// (cluster.Reclaim). It prints each member's size before and after.
func cmdClusterReclaim(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("cluster reclaim", args, getenv, stderr, clusterReclaimFlags)
	if err != nil {
		return err
	}
	if len(rest) != 0 || len(cfg.EtcdEndpoints) == 0 {
		fmt.Fprintln(stderr, "usage: pidnode cluster reclaim --etcd-endpoints URLS [etcd TLS and user flags]")
		return errUsage
	}
	tcfg, password, err := etcdCredentials(cfg)
	if err != nil {
		return err
	}
	res, err := cluster.Reclaim(context.Background(), cluster.Config{Endpoints: cfg.EtcdEndpoints, TLS: tcfg,
		Username: cfg.EtcdUsername, Password: password})
	if err != nil {
		return clusterError(cfg, err)
	}
	fmt.Fprintf(stdout, "compacted etcd's history to revision %d\n", res.Revision)
	for _, u := range slices.Sorted(maps.Keys(res.Before)) {
		fmt.Fprintf(stdout, "defragmented %s: %d bytes before, %d after", u, res.Before[u], res.After[u])
		if res.Quota > 0 {
			fmt.Fprintf(stdout, " (quota %d, %.0f %% used)", res.Quota, 100*float64(res.After[u])/float64(res.Quota))
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "disarmed %d NOSPACE alarm(s)\n", res.Disarmed)
	if res.Quota > 0 {
		for _, after := range res.After {
			if after > res.Quota*3/4 {
				fmt.Fprintln(stdout, "the live data is over 3/4 of the quota: raise --quota-backend-bytes on every member (README, cluster mode), or writes fill it again soon")
				break
			}
		}
	}
	return nil
}

// cmdClusterMove moves a namespace to another etcd shard while the nodes
// run (cluster.MoveNamespace).
func cmdClusterMove(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var ns, to string
	var rest []string
	for i := 0; i < len(args); i++ {
		name, val, eq := strings.Cut(args[i], "=")
		if name != "--namespace" && name != "--to" {
			rest = append(rest, args[i])
			continue
		}
		if !eq {
			if i+1 == len(args) {
				break
			}
			i++
			val = args[i]
		}
		if name == "--namespace" {
			ns = strings.ToUpper(val)
		} else {
			to = val
		}
	}
	const usage = "usage: pidnode cluster move-namespace --namespace NS --to SHARD --etcd-shard NAME=URLS… [--etcd-prefix P] [etcd TLS and user flags]"
	cfg, rest, err := loadConfig("cluster move-namespace", rest, getenv, stderr, clusterMoveFlags)
	if err != nil {
		return err
	}
	if len(rest) != 0 || ns == "" || to == "" || len(cfg.EtcdShards) < 2 {
		fmt.Fprintln(stderr, usage)
		return errUsage
	}
	shards, err := etcdShards(cfg)
	if err != nil {
		return err
	}
	tcfg, password, err := etcdCredentials(cfg)
	if err != nil {
		return err
	}
	res, err := cluster.MoveNamespace(context.Background(), cluster.Config{Shards: shards, Prefix: cfg.EtcdPrefix, TLS: tcfg,
		Username: cfg.EtcdUsername, Password: password}, ns, to)
	if err != nil {
		return &startError{msg: fmt.Sprintf("moving namespace %s to shard %s: %v", ns, to, err),
			hint: "run the same command again once the cause is fixed: it completes a move stopped before the SNAA was switched", err: err}
	}
	fmt.Fprintf(stdout, "moved namespace %s (SNAA %s) from shard %s to shard %s: %d records, %d Idempotency-Key records\n",
		ns, res.SNAA, res.From, res.To, res.Records, res.Idem)
	return nil
}

// dialCluster connects a cluster node (--etcd-endpoints set) to etcd and
// brings its database up to etcd's state before anything is served
// (docs/product.md §10). Every failure is one start-up line. The name is
// registered within a bounded time; the first snapshot of a node with no
// copy takes as long as the data needs (ctx: until the node is stopped).
func (n *node) dialCluster(ctx context.Context) error {
	c, err := dialEtcd(n.cfg, n.db, n.namer, n.model, n.cache, func(buckets map[string]bool) {
		if a := n.admin; a != nil && (buckets["keys"] || buckets["snaas"] || buckets["people"]) {
			a.AuthChanged()
		}
	}, n.log.With("part", "cluster"))
	if err != nil {
		return err
	}
	n.cluster = c
	n.addMetrics(c)
	rctx, cancel := context.WithTimeout(ctx, cluster.DefaultDialTimeout*6)
	defer cancel()
	// Before the snapshot, which may take long: a name another node holds
	// fails the start at once. closeAll gives the name up.
	inst, err := instance(n.cfg.Data)
	if err != nil {
		return err
	}
	if err := c.Register(rctx, inst); err != nil {
		return clusterError(n.cfg, err)
	}
	rev, err := c.Start(ctx)
	if err != nil {
		return clusterError(n.cfg, err)
	}
	n.log.Info("cluster node", "name", n.cfg.NodeName, "prefix", c.Prefix(), "applied", rev)
	return nil
}

// instance identifies this node to the other nodes (cluster.Register): host
// name and absolute data directory.
func instance(data string) (cluster.Instance, error) {
	host, err := os.Hostname()
	if err != nil {
		return cluster.Instance{}, fmt.Errorf("reading the host name: %w", err)
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return cluster.Instance{}, fileError("data directory", data, "data", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return cluster.Instance{Host: host, Data: abs}, nil
}

// dialEtcd connects db to the etcd of cfg (cluster.Dial with the settings
// read from files).
func dialEtcd(cfg *Config, db *store.DB, namer *handlev.Namer, modelFile []byte, inv cluster.Invalidator,
	onApply func(map[string]bool), log *slog.Logger) (*cluster.Node, error) {
	mb := modelFile
	if len(mb) == 0 {
		mb = model.DefaultModel
	}
	mod, err := model.LoadModel(mb)
	if err != nil {
		return nil, fileError("model file", cfg.Model, "model", err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index})
	if err != nil {
		return nil, err
	}
	tcfg, password, err := etcdCredentials(cfg)
	if err != nil {
		return nil, err
	}
	shards, err := etcdShards(cfg)
	if err != nil {
		return nil, err
	}
	c, err := cluster.Dial(cluster.Config{
		Endpoints:   cfg.EtcdEndpoints,
		Shards:      shards,
		Prefix:      cfg.EtcdPrefix,
		NodeName:    cfg.NodeName,
		TLS:         tcfg,
		Username:    cfg.EtcdUsername,
		Password:    password,
		DB:          db,
		Registry:    reg,
		Invalidator: inv,
		OnApply:     onApply,
		Logger:      log,
	})
	if err != nil {
		return nil, clusterError(cfg, err)
	}
	return c, nil
}

// etcdShards are the shards of --etcd-shard; nil for --etcd-endpoints.
func etcdShards(cfg *Config) ([]cluster.Shard, error) {
	if len(cfg.EtcdShards) > 0 && len(cfg.EtcdEndpoints) > 0 {
		return nil, &startError{msg: "--etcd-endpoints and --etcd-shard are both set",
			hint: "give a cluster of one etcd --etcd-endpoints, one of several --etcd-shard NAME=URLS per etcd"}
	}
	var out []cluster.Shard
	for _, e := range cfg.EtcdShards {
		name, urls, _ := strings.Cut(e, "=")
		sh := cluster.Shard{Name: name}
		for _, u := range strings.Split(urls, ",") {
			if u = strings.TrimSpace(u); u != "" {
				sh.Endpoints = append(sh.Endpoints, u)
			}
		}
		if err := cluster.CheckShardName(name); err != nil || len(sh.Endpoints) == 0 {
			return nil, &startError{msg: fmt.Sprintf("etcd shard %q: want NAME=URL,URL… with NAME of a-z, 0-9 and -", e),
				hint: "e.g. --etcd-shard main=http://10.0.0.1:2379,http://10.0.0.2:2379"}
		}
		for _, o := range out {
			if o.Name == name {
				return nil, &startError{msg: fmt.Sprintf("etcd shard %s is named twice", name), hint: "give each shard its own name"}
			}
		}
		out = append(out, sh)
	}
	return out, nil
}

// etcdURLs are the client URLs of every etcd of cfg.
func etcdURLs(cfg *Config) []string {
	out := slices.Clone(cfg.EtcdEndpoints)
	for _, e := range cfg.EtcdShards {
		_, urls, _ := strings.Cut(e, "=")
		out = append(out, strings.Split(urls, ",")...)
	}
	return out
}

// etcdCredentials reads the TLS configuration and the password of the
// connections to etcd from cfg's files.
func etcdCredentials(cfg *Config) (*tls.Config, string, error) {
	tcfg, err := etcdTLS(cfg)
	if err != nil {
		return nil, "", err
	}
	var password string
	if cfg.EtcdUsername != "" || cfg.EtcdPasswordFile != "" {
		if cfg.EtcdUsername == "" || cfg.EtcdPasswordFile == "" {
			return nil, "", &startError{msg: "etcd authentication: --etcd-username and --etcd-password-file go together", hint: "set both or neither"}
		}
		if err := checkSecretFile("etcd password file", cfg.EtcdPasswordFile, "--etcd-password-file"); err != nil {
			return nil, "", err
		}
		b, err := os.ReadFile(cfg.EtcdPasswordFile)
		if err != nil {
			return nil, "", fileError("etcd password file", cfg.EtcdPasswordFile, "etcd-password-file", err)
		}
		password = strings.TrimSpace(string(b))
	}
	return tcfg, password, nil
}

// runCluster starts applying etcd's changes; they stop with closeAll.
func (n *node) runCluster() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.cluster.Run(ctx)
	}()
	n.stopCluster = func() {
		cancel()
		// Run ends with its context; it is waited for a bounded time only,
		// so that a stuck call to an etcd that is gone cannot hold the
		// shutdown (the database's Close waits for an apply under way).
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			n.log.Warn("cluster: applying etcd's changes did not stop within 2 s; closing anyway")
		}
	}
}

// clusterError explains a failure to join the cluster.
func clusterError(cfg *Config, err error) error {
	var ue *cluster.UnreachableError
	var le *cluster.LimitError
	var te *cluster.NameTakenError
	var ce *cluster.ConfigError
	switch {
	case errors.As(err, &te):
		return &startError{msg: fmt.Sprintf("node name %s is held by another running node (host %s, data directory %s)", te.Name, te.Holder.Host, te.Holder.Data),
			hint: fmt.Sprintf("give each node its own --node-name, or stop that node (a crashed node's name is free after %d s)", cluster.NameTTL), err: err}
	case errors.As(err, &ce) && ce.Field == "NodeName":
		return &startError{msg: fmt.Sprintf("node name %q %s", ce.Value, ce.Reason),
			hint: "choose another --node-name", err: err}
	case errors.As(err, &le):
		return &startError{msg: le.Error(),
			hint: fmt.Sprintf("start every etcd member with --max-txn-ops=%d --max-request-bytes=%d or more", cluster.RequiredTxnOps, cluster.RequiredRequestBytes), err: err}
	case errors.As(err, &ue):
		return &startError{msg: fmt.Sprintf("etcd %s did not answer within %v: %s", strings.Join(ue.Endpoints, ","), cluster.DefaultDialTimeout, cause(ue.Err)),
			hint: "check that etcd runs and --etcd-endpoints or --etcd-shard (and the etcd TLS and user settings)", err: err}
	case errors.Is(err, cluster.ErrNotReplica):
		return &startError{msg: fmt.Sprintf("%s holds data of its own and has never applied etcd prefix %s", dbPath(cfg.Data), cfg.EtcdPrefix),
			hint: "load it into etcd with `pidnode cluster seed --data " + cfg.Data + "`, or start this node on an empty --data", err: err}
	}
	return fmt.Errorf("joining the cluster: %w", err)
}

// etcdTLS builds the TLS configuration of the connections to etcd; nil when
// no etcd TLS setting is given and no endpoint is https.
func etcdTLS(cfg *Config) (*tls.Config, error) {
	https := false
	for _, e := range etcdURLs(cfg) {
		https = https || strings.HasPrefix(e, "https://")
	}
	if !https && cfg.EtcdCert == "" && cfg.EtcdKey == "" && cfg.EtcdCA == "" {
		return nil, nil
	}
	tc, err := tlsFiles{cfg.EtcdCert, cfg.EtcdKey, "etcd-cert", "etcd-key"}.load("etcd")
	if err != nil {
		return nil, err
	}
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.EtcdCA != "" {
		pem, err := os.ReadFile(cfg.EtcdCA)
		if err != nil {
			return nil, fileError("etcd CA certificate", cfg.EtcdCA, "etcd-ca", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fileError("etcd CA certificate", cfg.EtcdCA, "etcd-ca", errors.New("no PEM certificate in it"))
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// clusterWriteState is the cluster line of /readyz and the welcome text:
// nil when writes can be made (cluster.Node.WriteState).
func (n *node) clusterWriteState() error { return n.cluster.WriteState() }
