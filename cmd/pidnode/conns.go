package main

import (
	"fmt"
	"net"

	"pidnode/internal/connlimit"
	"pidnode/internal/shed"
)

// Every TCP front accepts through a shed.Listener (internal/shed): an accept
// error such as EMFILE is retried, never the end of the process; the
// process's connections count against one budget derived from the
// descriptor limit, whose last slots only the admin listener may take; and
// the resolver and the admin listener limit connections per source as DNS
// and the native protocol do inside their servers.

// startConns raises the descriptor limit and sets up the connection budget
// and the spare descriptor every listener shares.
func (n *node) startConns() error {
	fds := raiseNoFile(n.log)
	b, err := shed.NewBudget(shed.BudgetConfig{Descriptors: fds})
	if err != nil {
		return &startError{msg: fmt.Sprintf("file descriptor limit %d is too low for a node: %v", fds, err),
			hint: "raise it (ulimit -n, systemd LimitNOFILE=) to a few thousand or more", err: err}
	}
	n.conns = b
	if n.spare, err = shed.NewSpare(); err != nil {
		return err
	}
	n.log.Info("connection budget", "connections", b.Limit(), "admin_reserve", b.Reserve(), "descriptors", fds)
	return nil
}

// guard wraps the bound listener ln of front name; perSource, when not
// zero, limits its connections per source (connlimit's rules over the
// budget the class may use).
func (n *node) guard(name string, ln net.Listener, class shed.Class, perSource int) (net.Listener, error) {
	cfg := shed.Config{Name: name, Class: class, Budget: n.conns, Spare: n.spare, Logger: n.log}
	if perSource > 0 {
		lim, err := connlimit.New(connlimit.Config{Max: n.conns.Cap(class), PerSource: perSource})
		if err != nil {
			return nil, err
		}
		cfg.Limiter = lim
	}
	l := shed.Wrap(ln, cfg)
	n.accepts = append(n.accepts, l)
	return l, nil
}

// fallbackNoFile is the descriptor count assumed where the limit cannot be
// read.
const fallbackNoFile = 65536
