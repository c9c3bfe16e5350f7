package hdldns

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/connlimit"
)

// Server answers DNS queries for the configured zones from the cache. It is
// safe for concurrent use; one Server may serve any number of UDP and TCP
// listeners at once.
type Server struct {
	cache   *cache.Cache
	namer   *handlev.Namer
	zones   []zone // longest name first
	udpSize int
	rtime   time.Duration
	wtime   time.Duration
	rrl     *limiter // nil: rate limiting off
	tcp     *connlimit.Limiter
	log     *slog.Logger
	now     func() time.Time
	pool    sync.Pool // *reply
	memo    rrMemo    // DNS.* values parsed, per cache entry and type
	stats   counters
	counter *cache.Counter

	mu      sync.Mutex
	closed  bool
	servers []*listener
}

type listener struct {
	run      func() error                    // serves until shut down
	shutdown func(ctx context.Context) error // stops serving, waits for in-flight queries
}

// miekgListener serves through a dns.Server.
func miekgListener(srv *dns.Server, closeFn func() error) *listener {
	return &listener{
		run: srv.ActivateAndServe,
		shutdown: func(ctx context.Context) error {
			err := srv.ShutdownContext(ctx)
			if err != nil && ctx.Err() == nil {
				// Not started yet (ActivateAndServe has not taken its lock):
				// closing the socket makes it return as soon as it does.
				closeFn()
				return nil
			}
			return err
		},
	}
}

// Stats are counters since New. Queries counts every request handed to
// ServeDNS, including those RRL dropped.
type Stats struct {
	Queries    uint64
	NoError    uint64 // answers with records
	NoData     uint64 // NOERROR with an empty answer (SOA in authority)
	NXDomain   uint64
	Refused    uint64
	ServFail   uint64
	Other      uint64 // FORMERR, NOTIMP, BADVERS
	Truncated  uint64 // UDP answers sent with TC set
	RRLDropped uint64
	RRLSlipped uint64
	// TCPRefused counts TCP connections closed at accept by the connection
	// limits; TCPConns is the number held now.
	TCPRefused uint64
	TCPConns   int
}

type counters struct {
	queries, noError, noData, nxDomain, refused, servFail, other, truncated, rrlDropped, rrlSlipped atomic.Uint64
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	st := Stats{
		Queries: c.queries.Load(), NoError: c.noError.Load(), NoData: c.noData.Load(),
		NXDomain: c.nxDomain.Load(), Refused: c.refused.Load(), ServFail: c.servFail.Load(),
		Other: c.other.Load(), Truncated: c.truncated.Load(),
		RRLDropped: c.rrlDropped.Load(), RRLSlipped: c.rrlSlipped.Load(),
	}
	ts := s.tcp.Stats()
	st.TCPRefused, st.TCPConns = ts.Refused(), ts.Held
	return st
}

// New validates cfg, fills in defaults and returns a Server that is not yet
// listening (see ServeUDP, ServeTCP).
func New(cfg Config) (*Server, error) {
	if cfg.Cache == nil {
		return nil, configError("Cache", "", "required")
	}
	if cfg.Namer == nil {
		return nil, configError("Namer", "", "required")
	}
	zones, err := buildZones(&cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cache:   cfg.Cache,
		namer:   cfg.Namer,
		zones:   zones,
		udpSize: cfg.UDPSize,
		rtime:   cfg.ReadTimeout,
		wtime:   cfg.WriteTimeout,
		log:     cfg.Logger,
		now:     cfg.Now,
		counter: cfg.Counter,
	}
	if s.udpSize == 0 {
		s.udpSize = DefaultUDPSize
	}
	s.memo.limit = cfg.MemoBytes
	if s.memo.limit == 0 {
		s.memo.limit = DefaultMemoBytes
	}
	if s.memo.limit < 0 {
		return nil, configError("MemoBytes", strconv.FormatInt(cfg.MemoBytes, 10), "must not be negative")
	}
	if s.udpSize < dns.MinMsgSize || s.udpSize > dns.MaxMsgSize {
		return nil, configError("UDPSize", itoa(cfg.UDPSize), "must be between 512 and 65535")
	}
	if s.rtime <= 0 {
		s.rtime = DefaultReadTimeout
	}
	if s.wtime <= 0 {
		s.wtime = DefaultWriteTimeout
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.MaxTCPConns < 0 || cfg.MaxTCPConnsPerSource < 0 {
		return nil, configError("MaxTCPConns", itoa(cfg.MaxTCPConns)+"/"+itoa(cfg.MaxTCPConnsPerSource), "connection limits must not be negative")
	}
	if cfg.MaxTCPConns == 0 {
		cfg.MaxTCPConns = DefaultMaxTCPConns
	}
	s.tcp, err = connlimit.New(connlimit.Config{Max: cfg.MaxTCPConns, PerSource: cfg.MaxTCPConnsPerSource})
	if err != nil {
		return nil, configError("MaxTCPConns", itoa(cfg.MaxTCPConns), err.Error())
	}
	if cfg.RRLRate < 0 || cfg.RRLBurst < 0 || cfg.RRLTableSize < 0 {
		return nil, configError("RRLRate", itoa(cfg.RRLRate), "rate, burst and table size must not be negative")
	}
	if cfg.RRLRate > 0 {
		slip := cfg.RRLSlip
		if slip == 0 {
			slip = DefaultRRLSlip
		}
		table := cfg.RRLTableSize
		if table == 0 {
			table = DefaultRRLTableSize
		}
		v4, v6 := cfg.RRLIPv4Bits, cfg.RRLIPv6Bits
		if v4 == 0 {
			v4 = DefaultRRLIPv4Bits
		}
		if v6 == 0 {
			v6 = DefaultRRLIPv6Bits
		}
		if v4 < 0 || v4 > 32 || v6 < 0 || v6 > 128 {
			return nil, configError("RRLIPv4Bits", itoa(v4)+"/"+itoa(v6), "prefix lengths must be 0..32 and 0..128")
		}
		s.rrl = newLimiter(cfg.RRLRate, cfg.RRLBurst, slip, table, v4, v6)
	}
	s.pool.New = func() any { return new(reply) }
	return s, nil
}

// ServeUDP answers queries arriving on pc until Shutdown; it closes pc. It
// returns ErrServerClosed after Shutdown, or the error that stopped reading.
// A *net.UDPConn is served by the package's own loop (udp.go: a few workers,
// nothing allocated per cached answer; pc must have no read deadline set);
// any other PacketConn through miekg/dns's server. Both send the same bytes.
func (s *Server) ServeUDP(pc net.PacketConn) error {
	if c, ok := pc.(*net.UDPConn); ok && (ownLoopWildcard || !isWildcard(c)) {
		u := s.newUDPServer(c) // udp.go
		return s.serve(&listener{run: u.run, shutdown: u.shutdown}, pc.Close)
	}
	srv := &dns.Server{
		PacketConn:   pc,
		Handler:      s,
		UDPSize:      dns.DefaultMsgSize, // read buffer: queries up to 4096 bytes
		ReadTimeout:  s.rtime,
		WriteTimeout: s.wtime,
	}
	return s.serve(miekgListener(srv, pc.Close), pc.Close)
}

// ServeTCP answers queries on connections accepted from ln until Shutdown; it
// closes ln. It returns ErrServerClosed after Shutdown, or the error that
// stopped accepting.
func (s *Server) ServeTCP(ln net.Listener) error {
	// One source may hold only so many connections, and above the
	// high-water mark heavy sources are refused first (internal/connlimit):
	// one client holding idle connections cannot lock the others out. A
	// connection that has sent nothing is closed after ReadTimeout, an idle
	// one after miekg's idle timeout.
	srv := &dns.Server{
		Listener:     connlimit.Listener(ln, s.tcp, nil),
		Handler:      s,
		ReadTimeout:  s.rtime,
		WriteTimeout: s.wtime,
		// miekg's default closes a connection after 128 queries and drops
		// the ones already pipelined behind them; RFC 7766 §6.2.1 asks
		// servers not to cap queries per connection. Idle connections still
		// close after the idle timeout.
		MaxTCPQueries: -1,
	}
	return s.serve(miekgListener(srv, ln.Close), ln.Close)
}

func (s *Server) serve(l *listener, closeFn func() error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeFn()
		return ErrServerClosed
	}
	s.servers = append(s.servers, l)
	s.mu.Unlock()

	err := l.run()

	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrServerClosed
	}
	if err == nil {
		// miekg returns nil only when shut down; we did not, so say so.
		err = errors.New("hdldns: listener stopped")
	}
	return err
}

// Shutdown stops every listener, then waits until in-flight queries are
// answered or ctx is done, whichever is first (returning ctx's error).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()

	var first error
	for _, l := range servers {
		if err := l.shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func itoa(n int) string { return strconv.Itoa(n) }
