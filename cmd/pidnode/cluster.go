package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"pidnode/cluster"
	"pidnode/model"
	"pidnode/registry"
)

// dialCluster connects a cluster node (--etcd-endpoints set) to etcd and
// brings its database up to etcd's state before anything is served
// (docs/product.md §10). Every failure is one start-up line.
func (n *node) dialCluster() error {
	cfg := n.cfg
	mb := n.model
	if len(mb) == 0 {
		mb = model.DefaultModel
	}
	mod, err := model.LoadModel(mb)
	if err != nil {
		return fileError("model file", cfg.Model, "model", err)
	}
	reg, err := registry.New(registry.Config{DB: n.db, Namer: n.namer, URLIndex: mod.URL.Index})
	if err != nil {
		return err
	}
	tcfg, err := etcdTLS(cfg)
	if err != nil {
		return err
	}
	var password string
	if cfg.EtcdUsername != "" || cfg.EtcdPasswordFile != "" {
		if cfg.EtcdUsername == "" || cfg.EtcdPasswordFile == "" {
			return &startError{msg: "etcd authentication: --etcd-username and --etcd-password-file go together", hint: "set both or neither"}
		}
		if err := checkSecretFile("etcd password file", cfg.EtcdPasswordFile, "--etcd-password-file"); err != nil {
			return err
		}
		b, err := os.ReadFile(cfg.EtcdPasswordFile)
		if err != nil {
			return fileError("etcd password file", cfg.EtcdPasswordFile, "etcd-password-file", err)
		}
		password = strings.TrimSpace(string(b))
	}
	c, err := cluster.Dial(cluster.Config{
		Endpoints:   cfg.EtcdEndpoints,
		Prefix:      cfg.EtcdPrefix,
		NodeName:    cfg.NodeName,
		TLS:         tcfg,
		Username:    cfg.EtcdUsername,
		Password:    password,
		DB:          n.db,
		Registry:    reg,
		Invalidator: n.cache,
		OnApply: func(buckets map[string]bool) {
			if a := n.admin; a != nil && (buckets["keys"] || buckets["snaas"]) {
				a.AuthChanged()
			}
		},
		Logger: n.log.With("part", "cluster"),
	})
	if err != nil {
		return clusterError(cfg, err)
	}
	n.cluster = c
	ctx, cancel := context.WithTimeout(context.Background(), cluster.DefaultDialTimeout*6)
	defer cancel()
	rev, err := c.Start(ctx)
	if err != nil {
		return clusterError(cfg, err)
	}
	n.log.Info("cluster node", "name", cfg.NodeName, "prefix", c.Prefix(), "applied", rev)
	return nil
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
		<-done
	}
}

// clusterError explains a failure to join the cluster.
func clusterError(cfg *Config, err error) error {
	var ue *cluster.UnreachableError
	var le *cluster.LimitError
	switch {
	case errors.As(err, &le):
		return &startError{msg: le.Error(),
			hint: fmt.Sprintf("start every etcd member with --max-txn-ops=%d --max-request-bytes=%d or more", cluster.RequiredTxnOps, cluster.RequiredRequestBytes), err: err}
	case errors.As(err, &ue):
		return &startError{msg: fmt.Sprintf("etcd %s did not answer within %v: %s", strings.Join(cfg.EtcdEndpoints, ","), cluster.DefaultDialTimeout, cause(ue.Err)),
			hint: "check that etcd runs and --etcd-endpoints (and the etcd TLS and user settings)", err: err}
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
	for _, e := range cfg.EtcdEndpoints {
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

// clusterState is the cluster line of /readyz and the welcome text: nil
// when writes can be made.
func (n *node) clusterWriteState() error {
	if !n.cluster.Connected() {
		return fmt.Errorf("node %s has no live connection to etcd (applied revision %d)", n.cfg.NodeName, n.cluster.Applied())
	}
	return nil
}
