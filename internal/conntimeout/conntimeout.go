package conntimeout

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets a listener's limits; a zero or negative limit is no limit.
type Config struct {
	Read, Write, Idle time.Duration
	// Handshake bounds a TLS handshake that the server starts itself
	// (fasthttp calls Handshake on every TLS connection before its first
	// read), from the accept; it stops a client that connects and sends
	// nothing from holding the connection. If zero, Read. The Read limit
	// still runs from the accept, handshake included.
	Handshake time.Duration
	// Tick is the sweep interval. If zero, a twentieth of the shortest
	// limit, between MinTick and MaxTick.
	Tick time.Duration
}

// Bounds of the default Tick.
const (
	MinTick = 5 * time.Millisecond
	MaxTick = 100 * time.Millisecond
)

// Phases of a connection.
const (
	phRequest   = iota // reading a request (from accept, or from a later request's first byte)
	phIdle             // waiting for the next request
	phWrite            // writing a response
	phHandshake        // in a TLS handshake the server called (tlsConn.Handshake)
)

// The state word of a connection: the epoch its phase began in (high 32
// bits), the phase (2 bits), whether it is inside Read or Write, and whether
// the sweeper has expired that call.
const (
	phaseMask  = 3
	inCall     = 1 << 2
	expired    = 1 << 3
	epochShift = 32
)

// longAgo is the deadline a sweep sets.
var longAgo = time.Unix(1, 0)

// ring is how many sweep times a listener keeps: a phase that began in an
// epoch older than these is judged from the oldest one kept (later, never
// earlier).
const ring = 1 << 12

// Listener wraps a net.Listener; its connections obey Config's limits.
type Listener struct {
	net.Listener
	limits [4]time.Duration // by phase; 0: none
	tick   time.Duration

	epoch atomic.Uint32 // sweeps so far; a phase is stamped with it
	base  time.Time     // when the listener was made: sweep 0
	// times[e%ring] is when sweep e began, as time since base; read and
	// written by the sweeper only.
	times   [ring]time.Duration
	limited bool // some limit is set: there is something to sweep for

	mu    sync.Mutex // taken per accept and close, and once per sweep
	conns []*conn    // accepted and not closed; guarded by mu

	closed   atomic.Bool
	sweeping sync.Once
}

// Wrap returns ln with cfg's limits. Its sweeper runs from the first Accept
// until the listener and its last connection are closed; with no limit set
// there is none.
func Wrap(ln net.Listener, cfg Config) *Listener {
	l := &Listener{Listener: ln}
	l.limits[phRequest], l.limits[phIdle], l.limits[phWrite] = max(cfg.Read, 0), max(cfg.Idle, 0), max(cfg.Write, 0)
	l.limits[phHandshake] = max(cfg.Handshake, 0)
	if cfg.Handshake == 0 {
		l.limits[phHandshake] = l.limits[phRequest]
	}
	shortest := time.Duration(0)
	for _, d := range l.limits {
		if d > 0 && (shortest == 0 || d < shortest) {
			shortest = d
		}
	}
	l.limited = shortest > 0
	l.tick = cfg.Tick
	if l.tick <= 0 {
		l.tick = min(max(shortest/20, MinTick), MaxTick)
	}
	l.base = time.Now()
	return l
}

// Accept returns the next connection, wrapped. A *tls.Conn stays visible as
// one to servers that ask for its handshake and state (fasthttp's IsTLS).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.limited {
		l.sweeping.Do(func() { go l.sweep() })
	}
	w := &conn{Conn: c, l: l}
	w.state.Store(uint64(l.epoch.Load()) << epochShift) // phRequest from now
	l.mu.Lock()
	w.idx = len(l.conns)
	l.conns = append(l.conns, w)
	l.mu.Unlock()
	if _, ok := c.(*tls.Conn); ok {
		return tlsConn{w}, nil
	}
	return w, nil
}

// Close closes the listener. The connections already accepted keep their
// limits (a graceful shutdown waits for them); the sweeper stops once the
// last of them is closed.
func (l *Listener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// sweep runs every tick until the listener and its last connection are
// closed.
func (l *Listener) sweep() {
	t := time.NewTicker(l.tick)
	defer t.Stop()
	var batch []*conn
	for range t.C {
		l.mu.Lock()
		batch = append(batch[:0], l.conns...)
		l.mu.Unlock()
		if len(batch) == 0 && l.closed.Load() {
			return
		}
		e := l.epoch.Load() + 1
		l.epoch.Store(e)
		now := time.Now() // after the store: see check
		l.times[e%ring] = now.Sub(l.base)
		for _, c := range batch {
			l.check(c, now, e)
		}
		clear(batch)
	}
}

// check expires c's blocked call if its phase has run past its limit. A
// phase stamped with epoch p began before sweep p+1 stored its epoch, and
// times[p+1] was read after that store: the phase has lasted at least now −
// times[p+1], and only that lower bound is compared with the limit.
func (l *Listener) check(c *conn, now time.Time, e uint32) {
	st := c.state.Load()
	if st&inCall == 0 || st&expired != 0 {
		return
	}
	limit := l.limits[st&phaseMask]
	if limit <= 0 {
		return
	}
	d := e - uint32(st>>epochShift) // sweeps since the phase began (wraps safely)
	if d == 0 {
		return
	}
	// Sweep p+1, or the oldest one the ring keeps (later, so never early).
	since := e - min(d-1, ring-2)
	if now.Sub(l.base)-l.times[since%ring] <= limit {
		return
	}
	c.mu.Lock()
	if c.state.CompareAndSwap(st, st|expired) {
		switch st & phaseMask {
		case phHandshake: // blocked reading or writing: end both
			c.deadline(false, longAgo)
			c.deadline(true, longAgo)
		case phWrite:
			c.deadline(true, longAgo)
		default:
			c.deadline(false, longAgo)
		}
	}
	c.mu.Unlock()
}

type conn struct {
	net.Conn
	l     *Listener
	state atomic.Uint64

	mu   sync.Mutex // orders the sweeper's deadline with its undoing
	idx  int        // index in l.conns, guarded by l.mu
	once sync.Once
}

func (c *conn) Read(p []byte) (int, error) {
	st := c.state.Load()
	ph, ep := st&phaseMask, st>>epochShift
	if ph == phWrite { // the response is out: now waiting for the next request
		ph, ep = phIdle, uint64(c.l.epoch.Load())
	}
	c.state.Store(ep<<epochShift | ph | inCall)
	n, err := c.Conn.Read(p)
	if n > 0 && ph == phIdle {
		ph, ep = phRequest, uint64(c.l.epoch.Load())
	}
	if c.state.Swap(ep<<epochShift|ph)&expired != 0 && err == nil {
		c.undo(false)
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	st := c.state.Load()
	ph, ep := st&phaseMask, st>>epochShift
	if ph != phWrite {
		ph, ep = phWrite, uint64(c.l.epoch.Load())
	}
	c.state.Store(ep<<epochShift | ph | inCall)
	n, err := c.Conn.Write(p)
	if c.state.Swap(ep<<epochShift|ph)&expired != 0 && err == nil {
		c.undo(true)
	}
	return n, err
}

// undo clears the deadline a sweep set for a call that completed anyway (its
// bytes came in the same instant): the next call must not inherit it.
func (c *conn) undo(write bool) {
	c.mu.Lock()
	c.deadline(write, time.Time{})
	c.mu.Unlock()
}

// deadline sets the write or the read deadline of the connection beneath;
// the caller holds c.mu. A closed connection has nothing to set.
func (c *conn) deadline(write bool, t time.Time) {
	if write {
		c.Conn.SetWriteDeadline(t) //nolint:errcheck // see above
	} else {
		c.Conn.SetReadDeadline(t) //nolint:errcheck // see above
	}
}

// Close closes the connection and forgets it.
func (c *conn) Close() error {
	c.once.Do(func() {
		l := c.l
		l.mu.Lock()
		last := len(l.conns) - 1
		moved := l.conns[last]
		l.conns[c.idx], moved.idx = moved, c.idx
		l.conns[last] = nil
		l.conns = l.conns[:last]
		l.mu.Unlock()
	})
	return c.Conn.Close()
}

// SetDeadline, SetReadDeadline and SetWriteDeadline accept only the zero
// time (no deadline, which is what the connection has between sweeps) and
// refuse any other: the sweeper owns the connection's deadlines.
func (c *conn) SetDeadline(t time.Time) error      { return noDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error  { return noDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return noDeadline(t) }

func noDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return ErrDeadlines
}

// ErrDeadlines is returned by a connection's Set*Deadline methods for a
// deadline other than none.
var ErrDeadlines = errors.New("conntimeout: deadlines are set by the listener's limits")

// tlsConn is a conn over a *tls.Conn that still answers for its handshake and
// state. Its reads and writes are the TLS layer's; the deadlines a sweep sets
// reach the TCP connection beneath through it.
type tlsConn struct{ *conn }

// Handshake runs the TLS handshake under the Handshake limit, counted from
// the accept: the server calls it outside Read and Write, where no other
// limit would reach it.
func (t tlsConn) Handshake() error {
	c := t.conn
	st := c.state.Load()
	if st&phaseMask != phRequest {
		return t.Conn.(*tls.Conn).Handshake() // done already: returns at once
	}
	c.state.Store(st&^(phaseMask|expired) | phHandshake | inCall)
	err := t.Conn.(*tls.Conn).Handshake()
	if c.state.Swap(st&^(inCall|expired))&expired != 0 && err == nil {
		c.mu.Lock()
		c.deadline(false, time.Time{})
		c.deadline(true, time.Time{})
		c.mu.Unlock()
	}
	return err
}

func (t tlsConn) ConnectionState() tls.ConnectionState { return t.Conn.(*tls.Conn).ConnectionState() }
