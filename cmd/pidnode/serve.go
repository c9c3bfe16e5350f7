package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base32"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"pidnode/admin"
	"pidnode/cache"
	"pidnode/cluster"
	"pidnode/handlev"
	"pidnode/internal/geoip"
	"pidnode/internal/shed"
	"pidnode/linkcheck"
	"pidnode/registry"
	"pidnode/resolver"
	"pidnode/stats"
	"pidnode/store"
	"pidnode/webhook"
)

// node is a running pidnode: the database, the cache and the bound fronts.
type node struct {
	cfg    *Config
	log    *slog.Logger
	db     *store.DB
	namer  *handlev.Namer
	cache  *cache.Cache
	admin  *admin.Server
	model  []byte        // the --model file; nil for admin's default
	policy *admin.Policy // the --policy-file; nil for admin's default
	geo    *geoip.DB     // the --geoip-db file; nil without one
	// fronts are the bound listeners, in the order bind binds them
	// (front.go); run serves, drains and stops them in one loop.
	fronts []front
	// sources are the other parts with families on /metrics (stats,
	// cluster, webhooks, link checks), in the order they were built.
	sources []metricsSource
	demo    *admin.DemoInfo
	// demoSkipped: --demo was given but the database already had data.
	demoSkipped bool
	// demoKeyFile holds the demo SNAA's key (written when the demo is loaded).
	demoKeyFile string
	opKey       string
	// counter holds resolution counts between statistics flushes (stats.Service.Run).
	counter *cache.Counter
	// stats is the resolution statistics feature: its flush and retention
	// jobs, its routes on the admin API and its metrics.
	stats *stats.Service
	// budget is the cache's memory budget, which the other bounds derive
	// from, and budgetFrom where it came from (for the log).
	budget     int64
	budgetFrom string
	// cluster is the node's connection to etcd (nil on a single node);
	// stopCluster stops applying its changes.
	cluster     *cluster.Node
	stopCluster func()
	// jobs run once per cluster while the node serves (jobs.go), over
	// jobReg.
	jobs   []job
	jobReg *registry.Registry
	// webhooks delivers the namespaces' feeds to their endpoints (a job).
	webhooks *webhook.Engine
	// conns is the process's connection budget, spare the descriptor kept
	// for shedding, accepts every TCP front's listener (conns.go).
	conns   *shed.Budget
	spare   *shed.Spare
	accepts []*shed.Listener
}

func cmdServe(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("serve", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		fmt.Fprintf(stderr, "pidnode serve: unexpected argument %q\n", rest[0])
		return errUsage
	}
	logOut := &heldLog{w: stderr, held: true}
	logger, err := newLogger(logOut, cfg.LogLevel)
	if err != nil {
		return err
	}
	// At debug level the operator asked to see everything, start-up included.
	logOut.held = !logger.Enabled(context.Background(), slog.LevelDebug)
	ctx, stop := signalContext(stderr)
	defer stop()
	n, err := startNode(ctx, cfg, logger)
	if err != nil {
		logOut.drop()
		return err
	}
	logOut.release()
	n.printWelcome(stdout)
	return n.run(ctx)
}

// heldLog holds the log lines of start-up until release: a start that fails
// prints only its error (main's one line), not the lines of what it opened and
// closed again. After release or drop it writes through.
type heldLog struct {
	mu   sync.Mutex
	w    io.Writer
	held bool
	buf  []byte
}

func (h *heldLog) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.w.Write(p)
}

// release writes what was held and stops holding.
func (h *heldLog) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = false
	h.w.Write(h.buf)
	h.buf = nil
}

// drop forgets what was held and stops holding.
func (h *heldLog) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = false
	h.buf = nil
}

// startNode opens the database, builds every package from cfg and binds every
// configured listener. Nothing is served until run.
// On failure it closes again whatever it opened.
func startNode(ctx context.Context, cfg *Config, logger *slog.Logger) (_ *node, err error) {
	// n is not the named result: each `return nil, err` clears that before
	// the deferred cleanup runs.
	n := &node{cfg: cfg, log: logger}
	defer func() {
		if err != nil {
			n.closeAll()
		}
	}()
	if n.namer, err = newNamer(cfg); err != nil {
		return nil, err
	}
	// Read before anything is opened: a missing file is a typo, found fastest.
	if n.model, err = readModel(cfg.Model); err != nil {
		return nil, err
	}
	if n.policy, err = readPolicy(cfg.PolicyFile); err != nil {
		return nil, err
	}
	if cfg.GeoIPDB != "" {
		if n.geo, err = geoip.Open(cfg.GeoIPDB); err != nil {
			return nil, fileError("GeoIP database", cfg.GeoIPDB, "geoip-db", err)
		}
	}
	if err := os.MkdirAll(cfg.Data, 0o750); err != nil {
		return nil, fileError("data directory", cfg.Data, "data", err)
	}
	if n.db, err = openStore(cfg.Data, logger); err != nil {
		return nil, err
	}
	entries := cfg.CacheEntries
	if entries == 0 {
		entries = cache.NoEntryCap
	}
	budget, from := cacheBudget(cfg.CacheBytes, "/")
	if n.cache, err = cache.New(cache.Config{
		Source:       n.db,
		Bytes:        entryBytes(budget),
		MemoryBudget: budget,
		Entries:      entries,
		Alt:          n.namer.AppendAltKey,
		Render:       resolver.Render,
	}); err != nil {
		return nil, err
	}
	setMemoryLimit(logger, budget, memBase, from)
	setGCPercent(logger)
	n.budget, n.budgetFrom = budget, from
	n.counter = cache.NewCounter(statsBytes(budget))
	if n.opKey, err = operatorKey(cfg.OperatorKeyFile); err != nil {
		return nil, err
	}
	if len(cfg.EtcdEndpoints) > 0 || len(cfg.EtcdShards) > 0 {
		if err := n.dialCluster(ctx); err != nil {
			return nil, err
		}
	}
	if err := n.startConns(); err != nil {
		return nil, err
	}
	if err := n.bind(); err != nil {
		return nil, err
	}
	if err := n.startWebhooks(); err != nil {
		return nil, err
	}
	if n.cluster != nil {
		// Before --demo: a write returns once it is applied here.
		n.runCluster()
	}
	if cfg.Demo {
		// --demo loads only into an empty database (docs/product.md §9.1); a restart of
		// `make run` keeps the data and the key printed the first time.
		switch info, err := n.admin.SeedDemo(ctx); {
		case errors.Is(err, admin.ErrNotEmpty):
			logger.Info("database not empty: demo data not loaded again")
			n.demoSkipped = true
			if f := filepath.Join(cfg.Data, demoKeyFile); fileExists(f) {
				n.demoKeyFile = f
			}
		case err != nil:
			return nil, fmt.Errorf("loading demo data: %w", err)
		default:
			n.demo = &info
			// The README's examples read the key from here (make run: ./data).
			n.demoKeyFile = filepath.Join(cfg.Data, demoKeyFile)
			if err := os.WriteFile(n.demoKeyFile, []byte(info.Key+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("writing the demo key: %w", err)
			}
		}
	}
	if err := n.startLinkcheck(); err != nil {
		return nil, err
	}
	// Everything is open and loaded: the base the soft memory limit adds
	// to the budget.
	setMemoryLimit(logger, n.budget, baseMemory(), n.budgetFrom)
	if cfg.ReadyFile != "" {
		if err := n.writeReadyFile(cfg.ReadyFile); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// bindResolver binds the HTTP resolver when --resolver-addr is set and
// settles the public URL (the resolver's address without --public-url), which
// the admin server links to.
func (n *node) bindResolver() error {
	cfg := n.cfg
	publicURL := cfg.PublicURL
	if cfg.ResolverAddr != "" {
		ln, err := n.listenTCP("resolver", "resolver-addr", cfg.ResolverAddr, tlsFiles{cfg.TLSCert, cfg.TLSKey, "tls-cert", "tls-key"}, shed.Public, cfg.ResolverConnsPerSrc)
		if err != nil {
			return err
		}
		addr := ln.Addr().String()
		if publicURL == "" {
			publicURL = scheme(cfg.TLSCert) + "://" + addr
		}
		var country func(netip.Addr) ([2]byte, bool)
		if n.geo != nil {
			country = n.geo.Country
		}
		srv, err := resolver.New(resolver.Config{
			Country:   country,
			Cache:     n.cache,
			Namer:     n.namer,
			ProxyURL:  cfg.ProxyURL,
			PublicURL: publicURL,
			Logger:    n.log.With("listener", "resolver"),
			Counter:   n.counter,
			RateLimit: cfg.ResolverRate,
			RateBurst: cfg.ResolverBurst,

			ReadTimeout: cfg.ResolverReadTimeout.Duration,
		})
		if err != nil {
			ln.Close()
			return err
		}
		n.fronts = append(n.fronts, &streamFront{name: "resolver", ln: ln, srv: srv})
	}
	if publicURL == "" {
		publicURL = "http://" + cfg.ResolverAddr
	}
	cfg.PublicURL = publicURL
	return nil
}

// bindAdmin builds the admin server and the features whose routes it serves
// (statistics, webhooks and the change feed, link checks), and binds the
// admin listener when --admin-addr is set.
func (n *node) bindAdmin() error {
	cfg := n.cfg
	publicURL := cfg.PublicURL
	// The admin server is the write path (and loads the demo), so it exists
	// even when its listener is off.
	var adminLn net.Listener
	refuse := false
	if cfg.AdminAddr != "" {
		var err error
		if adminLn, err = n.listenTCP("admin", "admin-addr", cfg.AdminAddr, tlsFiles{cfg.AdminTLSCert, cfg.AdminTLSKey, "admin-tls-cert", "admin-tls-key"}, shed.Admin, cfg.AdminConnsPerSrc); err != nil {
			return err
		}
		// Bearer keys never cross a network in clear text: a plain
		// listener on a non-loopback address refuses them unless the operator
		// says it is safe (--admin-insecure, e.g. behind a TLS proxy).
		refuse = cfg.AdminTLSCert == "" && !isLoopback(adminLn.Addr()) && !cfg.AdminInsecure
		if refuse {
			n.log.Warn("admin listener is plain HTTP on a network address: requests carrying API keys are refused; "+
				"configure --admin-tls-cert/--admin-tls-key, bind it to loopback, or pass --admin-insecure", "addr", adminLn.Addr().String())
		}
	}
	acfg := admin.Config{
		DB:          n.db,
		Namer:       n.namer,
		Invalidator: n.cache,
		OperatorKey: n.opKey,
		Model:       n.model,
		Policy:      n.policy,
		PublicURL:   publicURL,
		Logger:      n.log.With("listener", "admin"),
		RateLimit:   cfg.AdminRate,
		RateBurst:   cfg.AdminBurst,
		RefuseKeys:  refuse,
		Metrics:     n.writeMetrics,
	}
	scfg := stats.Config{DB: n.db, Namer: n.namer, Counter: n.counter, Interval: cfg.StatsInterval.Duration,
		Retention: cfg.StatsRetention, Logger: n.log.With("job", "stats")}
	if n.cluster != nil {
		acfg.Writer, acfg.WriteState, acfg.SyncAuth = n.cluster, n.clusterWriteState, n.cluster.Sync
		scfg.Published, scfg.Days, scfg.Expire = n.cluster.PublishStats, n.cluster.StatsDays, n.cluster.ExpireStats
	}
	n.stats = stats.New(scfg)
	n.addMetrics(n.stats)
	feed, err := n.webhookRoutes()
	if err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	acfg.Routes, acfg.Stats = append(append(n.stats.Routes(), feed...), linkcheck.Routes(n.db, n.namer)...), n.stats
	if acfg.OIDC, err = newOIDC(context.Background(), cfg.OIDCConfig); err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	if acfg.Webhooks, err = n.webhookViews(); err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	a, err := admin.New(acfg)
	if err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		if errors.Is(err, admin.ErrModel) && cfg.Model != "" {
			return fileError("model file", cfg.Model, "model", err)
		}
		return err
	}
	// Not ready until run serves every listener (docs/product.md §4 /readyz).
	a.SetNotReady("listeners not serving yet")
	n.admin = a
	n.addMetrics(a.People())
	if cfg.AdminAddr != "" {
		ln := adminLn
		srv, err := admin.NewListener(admin.ListenerConfig{Handler: a.Handler(), Logger: n.log, ReadHeaderTimeout: cfg.AdminHeaderTimeout.Duration})
		if err != nil {
			ln.Close()
			return err
		}
		n.fronts = append(n.fronts, &streamFront{name: "admin", ln: ln, srv: srv})
	}
	return nil
}

// isLoopback reports whether a bound address is a loopback address.
func isLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

func scheme(tlsCert string) string {
	if tlsCert != "" {
		return "https"
	}
	return "http"
}

// tlsFiles are a listener's certificate and key files and the settings that
// name them.
type tlsFiles struct {
	cert, key         string
	certFlag, keyFlag string
}

// load reads and checks the certificate and key of listener name; nil when
// neither is configured. Each failure names the file at fault.
func (f tlsFiles) load(name string) (*tls.Config, error) {
	if f.cert == "" && f.key == "" {
		return nil, nil
	}
	if f.cert == "" || f.key == "" {
		set, unset := f.certFlag, f.keyFlag
		if f.cert == "" {
			set, unset = unset, set
		}
		return nil, &startError{msg: fmt.Sprintf("%s TLS: --%s is set but --%s is not", name, set, unset), hint: "set both or neither"}
	}
	certPEM, err := os.ReadFile(f.cert)
	if err != nil {
		return nil, fileError(name+" TLS certificate", f.cert, f.certFlag, err)
	}
	keyPEM, err := os.ReadFile(f.key)
	if err != nil {
		return nil, fileError(name+" TLS key", f.key, f.keyFlag, err)
	}
	if err := pemHas(certPEM, "CERTIFICATE", "certificate"); err != nil {
		return nil, fileError(name+" TLS certificate", f.cert, f.certFlag, err)
	}
	if err := pemHas(keyPEM, "PRIVATE KEY", "private key"); err != nil {
		return nil, fileError(name+" TLS key", f.key, f.keyFlag, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, &startError{msg: fmt.Sprintf("%s TLS key %s and certificate %s: %s", name, f.key, f.cert, cause(err)),
			hint: fmt.Sprintf("check --%s and --%s", f.certFlag, f.keyFlag), err: err}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// pemHas checks that b holds a PEM block whose type ends in typ ("PRIVATE
// KEY" covers "RSA PRIVATE KEY" and "EC PRIVATE KEY") and, for a certificate,
// that the first one parses.
func pemHas(b []byte, typ, what string) error {
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return fmt.Errorf("no PEM %s in it", what)
		}
		if !strings.HasSuffix(blk.Type, typ) {
			continue
		}
		if typ == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
				return err
			}
		}
		return nil
	}
}

// listenTCP binds addr for listener name (flag is the setting that chose
// addr), accepting through guard (class, perSource), wrapped in TLS when a
// certificate is configured.
func (n *node) listenTCP(name, flag, addr string, tf tlsFiles, class shed.Class, perSource int) (net.Listener, error) {
	tcfg, err := tf.load(name)
	if err != nil {
		return nil, err
	}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError(name, "", addr, flag, err)
	}
	ln, err := n.guard(name, raw, class, perSource)
	if err != nil {
		raw.Close()
		return nil, err
	}
	if tcfg != nil {
		return tls.NewListener(ln, tcfg), nil
	}
	return ln, nil
}

// listenBoth binds TCP and UDP on the same port (DNS and the native protocol
// serve both transports on one port) for listener name. With port 0 the TCP
// port is chosen first and UDP follows it; a clash is retried a few times.
func listenBoth(name, flag, addr string) (net.Listener, net.PacketConn, error) {
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, listenError(name, "tcp", addr, flag, err)
		}
		pc, err := net.ListenPacket("udp", ln.Addr().String())
		if err == nil {
			return ln, pc, nil
		}
		ln.Close()
		lastErr = listenError(name, "udp", ln.Addr().String(), flag, err)
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			break
		}
	}
	return nil, nil, lastErr
}

// readModel reads the --model file; nil for admin's embedded default.
func readModel(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError("model file", path, "model", err)
	}
	return b, nil
}

// readPolicy reads and checks the --policy-file (TOML, admin.Policy's
// keys; unknown keys are refused); nil for admin's built-in policy.
func readPolicy(path string) (*admin.Policy, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError("policy file", path, "policy-file", err)
	}
	var p admin.Policy
	md, err := toml.Decode(string(b), &p)
	if err == nil {
		if und := md.Undecoded(); len(und) > 0 {
			err = fmt.Errorf("unknown key %q (known: version, title, text, contact, max_open_per_email, applications_per_hour)", und[0].String())
		}
	}
	if err == nil {
		err = admin.CheckPolicy(&p)
	}
	if ce := (*admin.ConfigError)(nil); errors.As(err, &ce) {
		// The file's reader needs the reason, not admin's Config field.
		return nil, &startError{msg: "policy file " + path + ": " + ce.Reason, hint: "fix it or check --policy-file", err: err}
	}
	if err != nil {
		return nil, fileError("policy file", path, "policy-file", err)
	}
	return &p, nil
}

// openStore opens the database of dataDir for a command that writes it.
func openStore(dataDir string, logger *slog.Logger) (*store.DB, error) {
	p := dbPath(dataDir)
	db, err := store.Open(store.Config{Path: p, Logger: logger})
	if err != nil {
		return nil, openError(p, err)
	}
	return db, nil
}

// operatorKey reads the operator key from path, creating the file with a fresh
// random key (mode 0600) when it does not exist.
func operatorKey(path string) (string, error) {
	if err := checkSecretFile("operator key file", path, "--operator-key-file"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err == nil {
		k := strings.TrimSpace(string(b))
		if len(k) < 32 {
			return "", fmt.Errorf("operator key in %s is too short (%d characters, want at least 32)", path, len(k))
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	k := "pidop_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", err
	}
	return k, nil
}

// writeReadyFile writes "NAME ADDR" per front, atomically, so a reader never
// sees half a file (docs/product.md §9.1 --ready-file).
func (n *node) writeReadyFile(path string) error {
	var b strings.Builder
	for _, f := range n.fronts {
		fmt.Fprintf(&b, "%s %s\n", f.Name(), f.Addr())
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// addr is the address of the front called name; "" when it is off.
func (n *node) addr(name string) string {
	for _, f := range n.fronts {
		if f.Name() == name {
			return f.Addr()
		}
	}
	return ""
}

// run serves every front until ctx is cancelled (SIGINT/SIGTERM) or one
// fails, then shuts all down gracefully and closes the database.
func (n *node) run(ctx context.Context) error {
	errc := make(chan error, len(n.fronts))
	for _, f := range n.fronts {
		go func() {
			if err := f.Serve(); err != nil {
				errc <- fmt.Errorf("%s listener: %w", f.Name(), err)
				return
			}
			errc <- nil
		}()
	}
	statsCtx, stopStats := context.WithCancel(context.Background())
	statsDone := make(chan struct{})
	go func() {
		defer close(statsDone)
		n.stats.Run(statsCtx)
	}()
	retentionDone := make(chan struct{})
	go func() {
		defer close(retentionDone)
		n.stats.RunRetention(statsCtx)
	}()
	jobsDone := make(chan struct{})
	go func() {
		defer close(jobsDone)
		n.runJobs(statsCtx)
	}()
	mergeDone := make(chan struct{})
	go func() {
		defer close(mergeDone)
		n.mergeSearch(statsCtx)
	}()
	n.warmStore(statsCtx)
	n.admin.SetNotReady("")
	n.log.Info("pidnode ready", "listeners", len(n.fronts))
	var serveErr error
	select {
	case <-ctx.Done():
		n.log.Info("shutting down", "timeout", n.cfg.ShutdownTimeout.Duration)
	case serveErr = <-errc:
		n.log.Error("listener failed, shutting down", "err", serveErr)
	}
	// The whole shutdown ends by the delay plus the timeout: each step has
	// its own bound (the listeners this deadline, every goodbye to etcd a
	// second), and should one still hang, the process exits anyway, as a
	// crash would (the database is crash-safe).
	var delay time.Duration
	if serveErr == nil {
		delay = n.cfg.ShutdownDelay.Duration
	}
	deadline := time.Now().Add(delay + n.cfg.ShutdownTimeout.Duration)
	watchdog := time.AfterFunc(time.Until(deadline)+shutdownGrace, func() {
		n.log.Error("shutdown did not finish in time; exiting", "shutdown_delay", delay, "shutdown_timeout", n.cfg.ShutdownTimeout.Duration)
		os.Exit(1)
	})
	defer watchdog.Stop()
	n.admin.SetNotReady("shutting down")
	// Drain before stopping: a keep-alive client may be writing a request
	// into an idle connection at the moment it would be closed, and its
	// retry would find no listener. For --shutdown-delay the listeners keep
	// accepting while every response closes its connection (and /readyz
	// says 503, so load balancers move away); then they stop.
	if delay > 0 {
		for _, f := range n.fronts {
			f.Drain()
		}
		time.Sleep(delay)
	}
	stopStats()
	<-jobsDone
	<-mergeDone
	<-retentionDone
	<-statsDone // closeAll flushes the last counts
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(n.fronts))
	for i, f := range n.fronts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.Shutdown(sctx); err != nil {
				errs[i] = fmt.Errorf("%s shutdown: %w", f.Name(), err)
			}
		}()
	}
	wg.Wait()
	n.fronts = nil
	errs = append(errs, serveErr, n.closeAll())
	return errors.Join(errs...)
}

// shutdownGrace is how long after the listeners' deadline the shutdown may
// still take to close the database and say goodbye to etcd before the
// process exits regardless.
const shutdownGrace = 5 * time.Second

// closeAll releases what startNode acquired; used on start-up failure and at
// the end of run (which has shut the fronts down already).
func (n *node) closeAll() error {
	var err error
	for _, f := range n.fronts {
		f.Unbind()
	}
	n.fronts = nil
	if n.stats != nil {
		err = n.stats.Flush()
	}
	if n.admin != nil {
		err = errors.Join(err, n.admin.Close())
	}
	if n.stopCluster != nil {
		n.stopCluster()
		n.stopCluster = nil
	}
	if n.cluster != nil {
		n.cluster.Deregister()
		n.cluster.Close()
		n.cluster = nil
	}
	if n.db != nil {
		err = errors.Join(err, n.db.Close())
		n.db = nil
	}
	if n.geo != nil {
		err = errors.Join(err, n.geo.Close())
		n.geo = nil
	}
	if n.spare != nil {
		n.spare.Close()
		n.spare = nil
	}
	return err
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
