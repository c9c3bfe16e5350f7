// Command pidnode is the persistent-identifier node: one binary that serves
// public resolution (HTTP, DNS, native Handle protocol) and the keyed admin API
// from one bbolt file, plus the offline tools around it.
//
//	pidnode serve   [--config FILE] [flags]   run every listener
//	pidnode import  --data DIR FILE|-         load JSON Lines of Handle JSON records
//	pidnode export  --data DIR                write every record as JSON Lines
//	pidnode backup  --data DIR FILE           consistent copy of the database
//	pidnode keygen  FILE                      RSA key for --hdl-key
//	pidnode siteinfo [flags]                  this node's HS_SITE as siteinfo.json
//	pidnode cluster seed|reclaim|move-namespace   etcd operations (cluster.go)
//
// This package is wiring only (docs/architecture.md): it reads flags,
// environment and the config file (config.go), turns them into each package's
// Config, binds the listeners and handles signals. Behaviour lives in the
// packages it wires; a rule, a parser or a metric family found here belongs
// in one of them.
//
// # Fronts
//
// Every listener is a front (front.go): the HTTP resolver, the admin
// listener, DNS and the native protocol, each its package's server behind a
// thin adapter (streamFront, dualFront). bind (front.go) binds them in a
// fixed order, one bind function each (serve.go, fronts.go); everything after
// is one loop over the node's fronts: the ready file, serving, /readyz (ready
// once every front serves), draining on SIGTERM for --shutdown-delay, the
// shutdown bounded by --shutdown-timeout, the release of the sockets of a
// start that failed, and /metrics. A second SIGINT or SIGTERM during the
// shutdown exits at once (main.go); a watchdog exits should a step hang
// (serve.go). Every TCP front accepts through the connection budget of
// conns.go (internal/shed).
//
// # Metrics
//
// /metrics is served by admin, which writes its own families first and then
// calls writeMetrics (metrics.go). Each family is written by the package that
// owns it (AppendMetrics: cache, each front, stats, cluster, webhook,
// linkcheck, internal/shed; resolver.AppendResolutions for the one family of
// every front's resolutions); writeMetrics only orders them. The Go runtime's
// memory limit and collector target, which the node sets itself (memory.go),
// are the only families written here.
//
// # Jobs
//
// Link checks and webhook deliveries run once per cluster (jobs.go): on a
// single node while it serves, in cluster mode on the node that leads the
// jobs' election.
package main
