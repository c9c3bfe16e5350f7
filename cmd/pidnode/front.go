package main

import (
	"context"
	"net"
)

// front is one bound listener of the node: a public front (the HTTP
// resolver, DNS, the native Handle protocol) or the admin listener. bind
// appends each configured one to n.fronts; from then on the node handles
// them only through this interface, in one loop each: the ready file and the
// welcome text (Name, Addr), serving and then /readyz (Serve),
// --shutdown-delay (Drain), the bounded shutdown (Shutdown), the release of a
// front that never served (Unbind), and /metrics (EachResolution,
// AppendMetrics).
//
// A front is a thin adapter over its package's server (streamFront for one
// TCP listener, dualFront for TCP and UDP on one port); the server keeps its
// behaviour and its metric families, the adapter only says how to call it.
type front interface {
	// Name is the front's name in the ready file, the log and errors.
	Name() string
	// Addr is the address it is bound to (port 0 resolved).
	Addr() string
	// Serve serves until Shutdown; a non-nil error is a failure of the node.
	Serve() error
	// Drain makes every later response close its connection while the front
	// keeps accepting (load balancers move away before it stops); a front
	// whose protocol cannot ask a client to close does nothing.
	Drain()
	// Shutdown stops accepting, waits for requests in flight until ctx ends
	// and makes Serve return.
	Shutdown(ctx context.Context) error
	// Unbind closes the sockets of a front that never served (a failed
	// start releases its ports with it).
	Unbind()
	// EachResolution calls f with the front's counters of
	// pidnode_resolver_resolutions_total (resolver.AppendResolutions); a
	// front that resolves nothing calls it never.
	EachResolution(f func(kind, result string, n uint64))
	// AppendMetrics appends the front's own metric families to b.
	AppendMetrics(b []byte) []byte
}

// bind builds and binds every configured front, in this order (the order of
// the ready file, of serving and of /metrics), so that the ready file and the
// welcome text name real addresses (port 0 picks one). Each bind function
// appends its front to n.fronts when its listener is configured (bindAdmin
// builds the admin server even without one: it is the write path); the
// resolver's comes first because it settles the public URL the admin server
// links to.
func (n *node) bind() error {
	for _, bind := range []func() error{n.bindResolver, n.bindAdmin, n.bindDNS, n.bindHdl} {
		if err := bind(); err != nil {
			return err
		}
	}
	return nil
}

// streamServer is a server on one TCP listener: resolver.Server (fasthttp)
// and admin.Listener (net/http).
type streamServer interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
	Drain()
}

// streamFront is the front of a streamServer bound to ln.
type streamFront struct {
	name string
	ln   net.Listener
	srv  streamServer
}

func (f *streamFront) Name() string                       { return f.name }
func (f *streamFront) Addr() string                       { return f.ln.Addr().String() }
func (f *streamFront) Serve() error                       { return f.srv.Serve(f.ln) }
func (f *streamFront) Drain()                             { f.srv.Drain() }
func (f *streamFront) Shutdown(ctx context.Context) error { return f.srv.Shutdown(ctx) }
func (f *streamFront) Unbind()                            { f.ln.Close() }

// EachResolution forwards to the server when it counts resolutions (the
// resolver; admin's requests are in its own families).
func (f *streamFront) EachResolution(fn func(kind, result string, n uint64)) {
	if c, ok := f.srv.(interface {
		EachResolution(func(kind, result string, n uint64))
	}); ok {
		c.EachResolution(fn)
	}
}

// AppendMetrics forwards to the server when it has families of its own here
// (the resolver; admin writes its own before the node's part of /metrics).
func (f *streamFront) AppendMetrics(b []byte) []byte {
	if m, ok := f.srv.(interface{ AppendMetrics([]byte) []byte }); ok {
		return m.AppendMetrics(b)
	}
	return b
}

// dualServer is a server of TCP and UDP on one port: hdldns.Server and
// hdl.Server.
type dualServer interface {
	ServeUDP(pc net.PacketConn) error
	ServeTCP(ln net.Listener) error
	Shutdown(ctx context.Context) error
	EachResolution(f func(kind, result string, n uint64))
	AppendMetrics(b []byte) []byte
}

// dualFront is the front of a dualServer bound to ln and pc (the same port);
// closed is the error its serve loops return after Shutdown.
type dualFront struct {
	name   string
	ln     net.Listener
	pc     net.PacketConn
	srv    dualServer
	closed error
}

func (f *dualFront) Name() string { return f.name }
func (f *dualFront) Addr() string { return f.ln.Addr().String() }
func (f *dualFront) Serve() error {
	return serveBoth(func() error { return f.srv.ServeUDP(f.pc) }, func() error { return f.srv.ServeTCP(f.ln) }, f.closed)
}

// Drain does nothing: the DNS and native servers have no way to ask a client
// to close its connection (HTTP's Connection: close); Shutdown ends their
// connections once the requests in flight are answered.
func (f *dualFront) Drain()                                                {}
func (f *dualFront) Shutdown(ctx context.Context) error                    { return f.srv.Shutdown(ctx) }
func (f *dualFront) Unbind()                                               { f.ln.Close(); f.pc.Close() }
func (f *dualFront) EachResolution(fn func(kind, result string, n uint64)) { f.srv.EachResolution(fn) }
func (f *dualFront) AppendMetrics(b []byte) []byte                         { return f.srv.AppendMetrics(b) }
