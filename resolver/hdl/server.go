package hdl

import (
	"context"
	"crypto/rsa"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/internal/connlimit"
	"pidnode/internal/tokenbucket"
)

// Messages of error replies. The Java client shows them next to the code.
const (
	msgInternal     = "Internal Error"
	msgNotResp      = "That prefix doesn't live here" // as the reference server and pidnode's HTTP API say
	msgInvalid      = "Invalid handle"
	msgProtocol     = "Malformed request"
	msgNotSupported = "This server is resolution only"
	msgNoKey        = "server has no signing key"
	msgTooBusy      = "Too many signed requests from your address; retry later or without CT"
)

// Server answers native Handle protocol requests. It is safe for concurrent use;
// one Server may serve several TCP listeners and packet connections.
type Server struct {
	cfg   Config
	cache *cache.Cache
	namer *handlev.Namer
	site  []byte // HS_SITE value data, built once

	// serial is the HS_SITE serial number every reply carries, and primary
	// whether the site is a primary one (then every reply sets AT); see
	// reply.start.
	serial  uint16
	primary bool

	works sync.Pool // *work

	slots   *connlimit.Limiter                // TCP connection slots, per source
	signed  *tokenbucket.Table[connlimit.Key] // signed replies per source; nil: no limit
	waiters *connlimit.Limiter                // UDP requests waiting for a signed reply (pace.go)

	mu       sync.Mutex
	closed   bool
	lns      map[net.Listener]struct{}
	pcs      map[net.PacketConn]struct{}
	conns    map[net.Conn]struct{}
	inflight sync.WaitGroup
	done     chan struct{}

	asm assemblies

	stats struct {
		requests, errors, dropped, tooBusy, signedWaits atomic.Uint64
	}
}

// New validates cfg, fills defaults and returns a Server.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	lim, err := connlimit.New(connlimit.Config{Max: cfg.MaxConns, PerSource: cfg.MaxConnsPerSource})
	if err != nil {
		return nil, configError("MaxConnsPerSource", strconv.Itoa(cfg.MaxConnsPerSource), err.Error())
	}
	waiters, err := connlimit.New(connlimit.Config{Max: maxSignedWaiters, PerSource: perSourceSignedWaiters})
	if err != nil {
		return nil, err
	}
	s := &Server{
		slots:   lim,
		waiters: waiters,
		cfg:     cfg,
		cache:   cfg.Cache,
		namer:   cfg.Namer,
		lns:     map[net.Listener]struct{}{},
		pcs:     map[net.PacketConn]struct{}{},
		conns:   map[net.Conn]struct{}{},
		done:    make(chan struct{}),
	}
	if cfg.SignedRate > 0 && cfg.SignKey != nil {
		burst := float64(cfg.SignedBurst)
		if burst == 0 {
			burst = 2 * cfg.SignedRate
		}
		s.signed = tokenbucket.New(tokenbucket.Config{Rate: cfg.SignedRate, Burst: burst}, hashKey)
	}
	var pub *rsa.PublicKey
	if cfg.SignKey != nil {
		pub = &cfg.SignKey.PublicKey
	}
	site := BuildSite(cfg.Site, pub)
	s.site = hsmsg.AppendSite(nil, &site)
	s.serial, s.primary = site.Serial, site.Primary
	s.asm.init(cfg.MaxPendingBytes, cfg.ReadTimeout)
	s.works.New = func() any { return &work{out: make([]byte, 0, 1024), key: make([]byte, 0, 256)} }
	return s, nil
}

// Site returns the HS_SITE value data the server answers GET_SITE_INFO with.
func (s *Server) Site() []byte { return s.site }

// Stats are counters since New.
type Stats struct {
	Requests uint64 // requests answered
	Errors   uint64 // replies with RC 2 (internal errors)
	Dropped  uint64 // datagrams or connections dropped (malformed, over limits)
	// TooBusy counts certified requests answered RC 3 by the SignedRate limit:
	// those whose turn would not come within SignedWait.
	TooBusy uint64
	// SignedWaits counts the waits of certified requests for their turn
	// under the SignedRate limit (a request may wait more than once when
	// others from its source take the token it waited for).
	SignedWaits uint64
	// ConnsRefused counts TCP connections closed at accept by the connection
	// limits (also counted in Dropped); Conns is the number held now.
	ConnsRefused uint64
	Conns        int
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	cs := s.slots.Stats()
	return Stats{Requests: s.stats.requests.Load(), Errors: s.stats.errors.Load(), Dropped: s.stats.dropped.Load(),
		TooBusy: s.stats.tooBusy.Load(), SignedWaits: s.stats.signedWaits.Load(), ConnsRefused: cs.Refused(), Conns: cs.Held}
}

// Shutdown stops the listeners and packet connections, waits for in-flight TCP
// requests to finish (or ctx to end, then closes their connections) and for
// UDP requests waiting for a signed reply (which end at once, unanswered, as
// the packet connection is closed), and makes
// ServeTCP and ServeUDP return ErrServerClosed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	for ln := range s.lns {
		ln.Close()
	}
	for pc := range s.pcs {
		pc.Close()
	}
	s.mu.Unlock()
	waited := make(chan struct{})
	go func() { s.inflight.Wait(); close(waited) }()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-waited
		return ctx.Err()
	}
}

// hashKey is FNV-1a over a source key.
func hashKey(k connlimit.Key) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range k {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return h
}

// work is the per-request scratch space, pooled.
type work struct {
	src netip.Addr // the request's source address, set by the transport
	tok int8       // the signed-reply budget's decision, set by the transport (pace.go)
	out []byte     // reply message (header | body | credential)
	key []byte     // storage key
	pkt []byte     // one UDP datagram
	in  []byte     // request message (TCP)
	req hsmsg.ResolutionRequest
}

// respond appends to w.out the reply to the request message msg (the bytes after
// env) and returns it with its envelope; ok is false when the request is to be
// dropped without a reply.
func (s *Server) respond(w *work, env *hsmsg.Envelope, msg []byte) (rep []byte, renv hsmsg.Envelope, ok bool) {
	if env.Flags&(hsmsg.EnvCompressed|hsmsg.EnvEncrypted) != 0 || len(msg) < hsmsg.HeaderLen {
		w.tok = tokUndecided
		s.stats.dropped.Add(1)
		return nil, renv, false
	}
	major, minor := env.Suggested()
	if hsmsg.AtLeast(major, minor, hsmsg.MajorVersion, hsmsg.MinorVersion) {
		major, minor = hsmsg.MajorVersion, hsmsg.MinorVersion
	}
	renv = hsmsg.Envelope{
		Major: major, Minor: minor,
		SuggestMajor: hsmsg.MajorVersion, SuggestMinor: hsmsg.MinorVersion,
		SessionID: env.SessionID, RequestID: env.RequestID,
	}
	r := reply{s: s, w: w, env: &renv}
	tok := w.tok // the transport's budget decision (pace.go), for this request only
	w.tok = tokUndecided
	m, err := hsmsg.ParseMessage(msg)
	if err != nil {
		// The header is there (len(msg) >= HeaderLen) but its body length or the
		// credential is wrong: answer RC 4, neither digested nor signed since the
		// request's extent is unknown.
		h, _ := hsmsg.ParseHeader(msg)
		if h.ResponseCode != hsmsg.RCReserved {
			s.stats.dropped.Add(1)
			return nil, renv, false
		}
		h.OpFlag &^= hsmsg.FlagRD | hsmsg.FlagCT
		r.req = &hsmsg.Message{Header: h}
		r.error(hsmsg.RCProtocolError, msgProtocol)
		return r.finish()
	}
	if m.Header.ResponseCode != hsmsg.RCReserved {
		s.stats.dropped.Add(1)
		return nil, renv, false
	}
	r.req = &m
	if m.Header.OpFlag&hsmsg.FlagCT != 0 && s.cfg.SignKey == nil {
		r.clear = hsmsg.FlagCT
		r.error(hsmsg.RCError, msgNoKey)
		return r.finish()
	}
	if m.Header.OpFlag&hsmsg.FlagCT != 0 && s.signed != nil &&
		(tok == tokRefused || tok == tokUndecided && !s.takeSigned(w.src).OK) {
		// Refused before any work: the signature is what costs (pace.go).
		s.stats.tooBusy.Add(1)
		r.clear = hsmsg.FlagCT
		r.error(hsmsg.RCServerTooBusy, msgTooBusy)
		return r.finish()
	}
	switch m.Header.OpCode {
	case hsmsg.OpResolution:
		s.resolve(&r)
	case hsmsg.OpGetSiteInfo:
		r.start(hsmsg.RCSuccess)
		r.w.out = append(r.w.out, s.site...)
	default:
		r.error(hsmsg.RCOperationNotSupported, msgNotSupported)
	}
	return r.finish()
}

// reply builds one reply message in w.out.
type reply struct {
	s     *Server
	w     *work
	env   *hsmsg.Envelope
	req   *hsmsg.Message
	clear uint32 // flags not to echo
}

// start writes the header and, if the request asked for it, the request digest.
//
// The header says about the site what a CNRI server's does
// (RFC 3652 §2.2.2): SiteInfoSerialNumber is the serial number of this node's HS_SITE,
// so a client holding an older copy of the site information can tell, and AT
// (authoritative) is set exactly when the reply comes from a primary site,
// whatever the request's AT bit asked for.
func (r *reply) start(rc uint32) {
	q := &r.req.Header
	flags := hsmsg.FlagREC | q.OpFlag&(hsmsg.FlagsEchoed&^hsmsg.FlagAT)&^r.clear
	if r.s.primary {
		flags |= hsmsg.FlagAT
	}
	h := hsmsg.Header{
		OpCode:         q.OpCode,
		ResponseCode:   rc,
		OpFlag:         flags,
		SiteInfoSerial: r.s.serial,
		RecursionCount: q.RecursionCount,
		Expiration:     uint32(r.s.cfg.Now().Add(hsmsg.ExpirationWindow).Unix()),
	}
	r.w.out = hsmsg.AppendHeader(r.w.out[:0], &h)
	if h.OpFlag&hsmsg.FlagRD != 0 {
		r.w.out = hsmsg.AppendDigest(r.w.out, hsmsg.DigestAlgFor(r.env.Major, r.env.Minor), r.req.Signed)
	}
	if rc == hsmsg.RCError {
		r.s.stats.errors.Add(1)
	}
}

func (r *reply) error(rc uint32, msg string) {
	r.start(rc)
	r.w.out = hsmsg.AppendErrorBody(r.w.out, msg)
}

// finish sets the body length, appends the credential and sets MessageLength.
func (r *reply) finish() ([]byte, hsmsg.Envelope, bool) {
	out := r.w.out
	hsmsg.SetBodyLength(out, len(out)-hsmsg.HeaderLen)
	signed := len(out)
	if hsmsg.FlagCT&r.req.Header.OpFlag&^r.clear != 0 && r.s.cfg.SignKey != nil {
		out = append(out, 0, 0, 0, 0)
		var err error
		out, err = hsmsg.AppendSignedCredential(out, r.s.cfg.SignKey, r.env, out[:signed])
		if err != nil {
			r.s.cfg.Logger.Error("hdl: signing reply", "err", err)
			out = out[:signed]
			out = append(out, 0, 0, 0, 0)
		} else {
			n := len(out) - signed - 4
			out[signed], out[signed+1], out[signed+2], out[signed+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		}
	} else {
		out = append(out, 0, 0, 0, 0)
	}
	r.w.out = out
	r.env.MessageLength = uint32(len(out))
	r.s.stats.requests.Add(1)
	return out, *r.env, true
}

// resolve answers OC_RESOLUTION.
func (s *Server) resolve(r *reply) {
	q := &r.w.req
	if err := q.Decode(r.req.Body); err != nil {
		r.error(hsmsg.RCProtocolError, msgProtocol)
		return
	}
	key, _, err := s.namer.AppendKey(r.w.key[:0], q.Handle)
	if err != nil {
		if errors.Is(err, handlev.ErrPrefixNotServed) {
			r.error(hsmsg.RCServerNotResp, msgNotResp)
		} else {
			r.error(hsmsg.RCInvalidHandle, msgInvalid)
		}
		return
	}
	r.w.key = key
	e, err := s.cache.Get(key)
	if err != nil {
		s.cfg.Logger.Error("hdl: cache lookup", "err", err)
		r.error(hsmsg.RCError, msgInternal)
		return
	}
	if !e.Found || e.Public.Hidden() {
		r.error(hsmsg.RCHandleNotFound, "")
		return
	}
	e.CountHit(s.cfg.Counter) // resolution statistics (nil-safe, no allocation)
	// Every request here is anonymous: only the entry's public view
	// (cache.Entry.Public) is answered, whatever the request's flags say.
	vals := e.Public.Values
	filtered := len(q.Indexes) > 0 || len(q.Types) > 0
	if !filtered && len(vals) > 0 {
		r.start(hsmsg.RCSuccess)
		r.w.out = hsmsg.AppendResolutionBody(r.w.out, q.Handle, e.WireBytes())
		return
	}
	r.start(hsmsg.RCSuccess)
	out := hsmsg.AppendResolutionBody(r.w.out, q.Handle, nil)
	countAt := len(out)
	out = append(out, 0, 0, 0, 0)
	n := 0
	for i := range vals {
		v := &vals[i]
		if filtered && !wanted(q, v) {
			continue
		}
		out = handlev.AppendValue(out, v)
		n++
	}
	if n == 0 {
		r.w.out = out
		r.error(hsmsg.RCValuesNotFound, "")
		return
	}
	out[countAt], out[countAt+1], out[countAt+2], out[countAt+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	r.w.out = out
}

// wanted reports whether v is asked for: its index is listed or its type matches a
// listed type (RFC 3652 §3.2.2: the union, as the reference server's resolution).
func wanted(q *hsmsg.ResolutionRequest, v *handlev.Value) bool {
	for _, i := range q.Indexes {
		if i == v.Index {
			return true
		}
	}
	for _, t := range q.Types {
		if hsmsg.MatchType(t, v.Type) {
			return true
		}
	}
	return false
}
