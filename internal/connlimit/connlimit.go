package connlimit

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"pidnode/internal/cfgerr"
)

// ErrBadConfig is wrapped by every *ConfigError New returns.
var ErrBadConfig = errors.New("connlimit: bad config")

// ConfigError reports a Config field New rejected; it wraps ErrBadConfig.
type ConfigError = cfgerr.Error

// Config sets the limits. Zero values select the documented defaults.
type Config struct {
	// Max is the number of connections held at once over all sources.
	// Required (positive).
	Max int
	// PerSource is the most connections one source may hold. If zero,
	// DefaultPerSource(Max) is used; it is capped at Max.
	PerSource int
	// HighWater is the number of connections from which sources holding
	// Heavy or more are refused. If zero, three quarters of Max (so a
	// quarter of the slots stays for light sources).
	HighWater int
	// Heavy is how many connections make a source heavy. If zero, a quarter
	// of PerSource (at least 1).
	Heavy int
}

// DefaultPerSource is the per-source limit when Config.PerSource is zero: a
// sixteenth of total, at least 8 (and at most total).
func DefaultPerSource(total int) int { return min(total, max(8, total/16)) }

// Key identifies a source: an IPv4 address (IPv4-mapped), or the first 64
// bits of an IPv6 address.
type Key [16]byte

// KeyOf returns the source of a: a whole IPv4 address (also an IPv4-mapped
// IPv6 one), an IPv6 address's /64; a zone is ignored.
func KeyOf(a netip.Addr) Key {
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return Key(a.As16()) // IPv4-mapped: bytes 10-11 are 0xff, never so in an IPv6 /64 key
	}
	k := Key(a.As16())
	clear(k[8:])
	return k
}

// Reason says why Acquire refused a connection.
type Reason uint8

const (
	OK        Reason = iota
	Full             // the listener holds Max connections
	PerSource        // the source holds PerSource connections
	Heavy            // above the high-water mark, the source holds Heavy or more
)

func (r Reason) String() string {
	switch r {
	case OK:
		return "ok"
	case Full:
		return "listener full"
	case PerSource:
		return "per-source limit"
	case Heavy:
		return "heavy source above the high-water mark"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Limiter counts connections per source. The zero value is not usable; call New.
type Limiter struct {
	cfg Config

	mu    sync.Mutex
	total int
	per   map[Key]int

	refused [4]atomic.Uint64 // by Reason
}

// New validates cfg, fills in defaults and returns a Limiter.
func New(cfg Config) (*Limiter, error) {
	if cfg.Max <= 0 {
		return nil, &ConfigError{Pkg: "connlimit", Field: "Max", Value: strconv.Itoa(cfg.Max), Reason: "must be positive", Err: ErrBadConfig}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"PerSource", cfg.PerSource}, {"HighWater", cfg.HighWater}, {"Heavy", cfg.Heavy}} {
		if f.v < 0 {
			return nil, &ConfigError{Pkg: "connlimit", Field: f.name, Value: strconv.Itoa(f.v), Reason: "must not be negative", Err: ErrBadConfig}
		}
	}
	if cfg.PerSource == 0 {
		cfg.PerSource = DefaultPerSource(cfg.Max)
	}
	cfg.PerSource = min(cfg.PerSource, cfg.Max)
	if cfg.HighWater == 0 {
		cfg.HighWater = max(1, cfg.Max*3/4)
	}
	if cfg.Heavy == 0 {
		cfg.Heavy = max(1, cfg.PerSource/4)
	}
	return &Limiter{cfg: cfg, per: make(map[Key]int)}, nil
}

// Config returns the limits in force (defaults filled in).
func (l *Limiter) Config() Config { return l.cfg }

// Acquire counts one more connection from a, unless a rule refuses it. On OK
// the caller must call Release(k) exactly once when the connection closes.
func (l *Limiter) Acquire(a netip.Addr) (k Key, r Reason) {
	k = KeyOf(a)
	l.mu.Lock()
	n := l.per[k]
	switch {
	case l.total >= l.cfg.Max:
		r = Full
	case n >= l.cfg.PerSource:
		r = PerSource
	case l.total >= l.cfg.HighWater && n >= l.cfg.Heavy:
		r = Heavy
	default:
		l.per[k] = n + 1
		l.total++
	}
	l.mu.Unlock()
	if r != OK {
		l.refused[r].Add(1)
	}
	return k, r
}

// Release forgets one connection of source k. A Release without its Acquire
// is ignored.
func (l *Limiter) Release(k Key) {
	l.mu.Lock()
	switch n := l.per[k]; {
	case n > 1:
		l.per[k] = n - 1
		l.total--
	case n == 1:
		delete(l.per, k)
		l.total--
	}
	l.mu.Unlock()
}

// Stats is a snapshot of a Limiter.
type Stats struct {
	Held    int // connections held now
	Sources int // sources holding at least one
	// Refused counts refusals since New by rule.
	RefusedFull, RefusedPerSource, RefusedHeavy uint64
}

// Refused is the sum of the refusals.
func (s Stats) Refused() uint64 { return s.RefusedFull + s.RefusedPerSource + s.RefusedHeavy }

// Stats returns a snapshot.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	s := Stats{Held: l.total, Sources: len(l.per)}
	l.mu.Unlock()
	s.RefusedFull = l.refused[Full].Load()
	s.RefusedPerSource = l.refused[PerSource].Load()
	s.RefusedHeavy = l.refused[Heavy].Load()
	return s
}

// AddrOf returns the IP address of a connection's remote address, or the
// zero Addr when it has none (then every such connection is one source).
func AddrOf(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr()
	case *net.UDPAddr:
		return a.AddrPort().Addr()
	}
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr()
}

// Listener wraps ln so that Accept closes, at once, every connection l
// refuses, and returns the others wrapped so that their first Close releases
// their slot. refused, if not nil, is called for each refusal.
func Listener(ln net.Listener, l *Limiter, refused func(Reason)) net.Listener {
	return &listener{Listener: ln, l: l, refused: refused}
}

type listener struct {
	net.Listener
	l       *Limiter
	refused func(Reason)
}

func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		k, r := ln.l.Acquire(AddrOf(c.RemoteAddr()))
		if r != OK {
			c.Close()
			if ln.refused != nil {
				ln.refused(r)
			}
			continue
		}
		return &conn{Conn: c, l: ln.l, k: k}, nil
	}
}

type conn struct {
	net.Conn
	l      *Limiter
	k      Key
	closed atomic.Bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.Release(c.k)
	}
	return err
}
