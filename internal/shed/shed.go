package shed

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"pidnode/internal/connlimit"
)

// Bounds of the pause between retries of a failed accept, as net/http's
// Server.Serve: 5 ms, doubling, at most 1 s.
const (
	MinRetryDelay = 5 * time.Millisecond
	MaxRetryDelay = time.Second
)

// DefaultLogEvery is Config.LogEvery when zero.
const DefaultLogEvery = 10 * time.Second

// Config configures a Listener. Zero values select the documented defaults.
type Config struct {
	// Name is the listener's name in log lines and metrics (resolver,
	// admin, dns, hdl). Required.
	Name string
	// Class is the part of Budget the listener may use.
	Class Class
	// Budget, if set, counts the connections against the process's budget;
	// above it a new connection is closed at once.
	Budget *Budget
	// Limiter, if set, counts the connections per source; a connection it
	// refuses is closed at once.
	Limiter *connlimit.Limiter
	// Spare, if set, is let go to shed one connection when accept fails for
	// want of descriptors.
	Spare *Spare
	// Logger receives the retried accept errors and the refusals, each kind
	// at most once per LogEvery. Nil discards.
	Logger   *slog.Logger
	LogEvery time.Duration
}

// Reason says why a Listener closed a connection at accept.
type Reason uint8

const (
	// Budget: the process's connection budget for the listener's class is
	// used up.
	ReasonBudget Reason = iota
	// ReasonFull, ReasonPerSource, ReasonHeavy: the Limiter's rules
	// (connlimit.Full, PerSource, Heavy).
	ReasonFull
	ReasonPerSource
	ReasonHeavy
	// ReasonDescriptors: accept failed for want of descriptors and the
	// Spare shed the connection.
	ReasonDescriptors
	numReasons
)

// String is the reason's label value in metrics.
func (r Reason) String() string {
	switch r {
	case ReasonBudget:
		return "budget"
	case ReasonFull:
		return "listener_full"
	case ReasonPerSource:
		return "per_source"
	case ReasonHeavy:
		return "heavy_source"
	case ReasonDescriptors:
		return "descriptors"
	}
	return "unknown"
}

// Listener wraps a net.Listener; see the package documentation. Its Accept
// must not be called concurrently (every server here has one accept loop).
type Listener struct {
	net.Listener
	cfg  Config
	log  *slog.Logger
	held atomic.Int64

	retries atomic.Uint64
	refused [numReasons]atomic.Uint64

	// done is closed by Close: a pause between retries ends at once.
	done      chan struct{}
	closeOnce sync.Once

	logMu   sync.Mutex
	lastLog [2]time.Time // by logKind
	quiet   [2]uint64    // events not logged since lastLog
}

// Wrap returns ln wrapped with cfg.
func Wrap(ln net.Listener, cfg Config) *Listener {
	if cfg.LogEvery <= 0 {
		cfg.LogEvery = DefaultLogEvery
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, cfg: cfg, log: log.With("listener", cfg.Name), done: make(chan struct{})}
}

// Close closes the listener; an Accept pausing between retries returns at
// once.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Accept returns the next connection the budget and the per-source limits
// admit. It retries temporary errors itself; the error it returns is the
// closed listener's or one no server would retry. The connection's first
// Close releases its slots.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !Temporary(err) {
				return nil, err
			}
			l.retries.Add(1)
			l.note(logError, "accept failed; retrying", err)
			if outOfFiles(err) && l.cfg.Spare != nil && l.cfg.Spare.shed(l.Listener) {
				l.refuse(ReasonDescriptors)
				delay = 0
				continue
			}
			delay = min(max(2*delay, MinRetryDelay), MaxRetryDelay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
			}
			continue
		}
		delay = 0
		if c, ok := l.admit(c); ok {
			return c, nil
		}
	}
}

// admit takes c's slots, or closes c and counts why.
func (l *Listener) admit(c net.Conn) (net.Conn, bool) {
	if l.cfg.Budget != nil && !l.cfg.Budget.acquire(l.cfg.Class) {
		c.Close()
		l.refuse(ReasonBudget)
		return nil, false
	}
	w := &conn{Conn: c, l: l}
	if l.cfg.Limiter != nil {
		var r connlimit.Reason
		w.key, r = l.cfg.Limiter.Acquire(connlimit.AddrOf(c.RemoteAddr()))
		if r != connlimit.OK {
			if l.cfg.Budget != nil {
				l.cfg.Budget.release()
			}
			c.Close()
			l.refuse(limiterReason(r))
			return nil, false
		}
	}
	l.held.Add(1)
	return w, true
}

func limiterReason(r connlimit.Reason) Reason {
	switch r {
	case connlimit.PerSource:
		return ReasonPerSource
	case connlimit.Heavy:
		return ReasonHeavy
	}
	return ReasonFull
}

func (l *Listener) refuse(r Reason) {
	l.refused[r].Add(1)
	l.note(logRefusal, "connections refused", errors.New(reasonText[r]))
}

var reasonText = [numReasons]string{
	ReasonBudget:      "the process's connection budget is used up",
	ReasonFull:        "the listener holds its most connections",
	ReasonPerSource:   "a source holds its most connections",
	ReasonHeavy:       "above the high-water mark, a heavy source",
	ReasonDescriptors: "out of file descriptors: connection shed",
}

type logKind uint8

const (
	logError logKind = iota
	logRefusal
)

// note logs msg with err unless a line of the same kind was written less
// than LogEvery ago; the next line says how many were left out.
func (l *Listener) note(k logKind, msg string, err error) {
	now := time.Now()
	l.logMu.Lock()
	if !l.lastLog[k].IsZero() && now.Sub(l.lastLog[k]) < l.cfg.LogEvery {
		l.quiet[k]++
		l.logMu.Unlock()
		return
	}
	quiet := l.quiet[k]
	l.lastLog[k], l.quiet[k] = now, 0
	l.logMu.Unlock()
	l.log.Warn(msg, "err", err, "not_logged_since_last", quiet)
}

// Stats is a snapshot of a Listener.
type Stats struct {
	Held    int    // connections open now
	Retries uint64 // temporary accept errors retried
	// Refused counts the connections closed at accept, by Reason.
	Refused [numReasons]uint64
}

// Stats returns a snapshot.
func (l *Listener) Stats() Stats {
	s := Stats{Held: int(l.held.Load()), Retries: l.retries.Load()}
	for i := range s.Refused {
		s.Refused[i] = l.refused[i].Load()
	}
	return s
}

// Name is Config.Name.
func (l *Listener) Name() string { return l.cfg.Name }

// conn releases its slots on its first Close.
type conn struct {
	net.Conn
	l      *Listener
	key    connlimit.Key
	closed atomic.Bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		l := c.l
		if l.cfg.Limiter != nil {
			l.cfg.Limiter.Release(c.key)
		}
		if l.cfg.Budget != nil {
			l.cfg.Budget.release()
		}
		l.held.Add(-1)
	}
	return err
}

// CloseWrite half-closes a TCP connection (net/http does before closing).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the TCP connection's sendfile path (admin backups).
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// Temporary reports whether a server should retry after accept failed with
// err: not for a closed listener; yes for running short of descriptors or
// buffers, for a connection aborted before it was accepted, and for any error
// that calls itself temporary or a timeout (net/http's rule).
func Temporary(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED,
			syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.ETIMEDOUT, syscall.EPROTO, syscall.EPERM:
			return true
		}
	}
	var te interface{ Temporary() bool }
	if errors.As(err, &te) && te.Temporary() {
		return true
	}
	var to interface{ Timeout() bool }
	return errors.As(err, &to) && to.Timeout()
}

func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// Spare is one descriptor held in reserve (os.DevNull, open). Out of
// descriptors, a Listener closes it, accepts one connection into the freed
// slot, closes that connection and opens the spare again: the connection
// waiting longest is shed rather than left to time out in the backlog while
// accept fails without end. Safe for concurrent use; one Spare serves every
// Listener of a process.
type Spare struct {
	mu sync.Mutex
	f  *os.File // nil while let go, or when it could not be opened again
}

// NewSpare opens the reserve descriptor.
func NewSpare() (*Spare, error) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	return &Spare{f: f}, nil
}

// spareWait bounds the accept the spare is let go for: if the backlog was
// empty after all, the listener goes back to its normal loop.
const spareWait = 10 * time.Millisecond

// shed lets the spare go, accepts one connection from ln and closes it;
// it reports whether a connection was shed.
func (s *Spare) shed(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		s.f, _ = os.Open(os.DevNull)
		return false
	}
	s.f.Close()
	s.f = nil
	if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
		d.SetDeadline(time.Now().Add(spareWait)) //nolint:errcheck // without it Accept waits for the next connection
		defer d.SetDeadline(time.Time{})         //nolint:errcheck // see above
	}
	c, err := ln.Accept()
	if err == nil {
		c.Close()
	}
	s.f, _ = os.Open(os.DevNull)
	return err == nil
}

// Close releases the reserve descriptor.
func (s *Spare) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
