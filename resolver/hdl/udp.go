package hdl

import (
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/internal/connlimit"
)

// ServeUDP answers datagrams on pc until Shutdown (then it returns ErrServerClosed)
// or a read error. It runs one reader per CPU; each answers the requests it reads.
func (s *Server) ServeUDP(pc net.PacketConn) error {
	if !s.track(nil, pc, true) {
		pc.Close()
		return ErrServerClosed
	}
	defer s.track(nil, pc, false)
	n := runtime.GOMAXPROCS(0)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- s.readUDP(pc) }()
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; first == nil {
			first = err
			pc.Close() // stop the other readers
		}
	}
	if s.isClosed() {
		return ErrServerClosed
	}
	return first
}

func (s *Server) readUDP(pc net.PacketConn) error {
	uc, _ := pc.(*net.UDPConn)
	buf := make([]byte, 2*hsmsg.MaxUDPPacket) // larger datagrams are truncated and then rejected
	w := &work{out: make([]byte, 0, 1024), key: make([]byte, 0, 256), pkt: make([]byte, 0, hsmsg.MaxUDPPacket)}
	for {
		var (
			n    int
			ap   netip.AddrPort
			addr net.Addr
			err  error
		)
		if uc != nil {
			n, ap, err = uc.ReadFromUDPAddrPort(buf)
		} else {
			n, addr, err = pc.ReadFrom(buf)
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() && !s.isClosed() {
				continue
			}
			return err
		}
		s.datagram(pc, uc, w, buf[:n], ap, addr)
	}
}

// datagram handles one received datagram from ap (UDPConn) or addr (other conns).
func (s *Server) datagram(pc net.PacketConn, uc *net.UDPConn, w *work, b []byte, ap netip.AddrPort, addr net.Addr) {
	if len(b) > hsmsg.MaxUDPPacket {
		s.stats.dropped.Add(1)
		return
	}
	env, err := hsmsg.ParseEnvelope(b)
	if err != nil {
		s.stats.dropped.Add(1)
		return
	}
	msg := b[hsmsg.EnvelopeLen:]
	if env.Truncated() || int(env.MessageLength) != len(msg) {
		var from string
		if uc != nil {
			from = ap.String()
		} else {
			from = addr.String()
		}
		full, ok := s.asm.add(from, &env, msg)
		if !ok {
			return
		}
		msg = full
	}
	if uc != nil {
		w.src = ap.Addr()
	} else {
		w.src = connlimit.AddrOf(addr)
	}
	if s.paceUDP(w, &env, msg, pc, uc, ap, addr) {
		return // answered later, when the source's signed-reply budget allows
	}
	rep, renv, ok := s.respond(w, &env, msg)
	if !ok {
		return
	}
	s.sendUDP(pc, uc, w, rep, renv, ap, addr)
}

// sendUDP sends the reply message rep with envelope renv to ap (uc) or addr
// (another PacketConn), in pieces of at most 492 bytes (docs/handle-protocol.md §3.1).
func (s *Server) sendUDP(pc net.PacketConn, uc *net.UDPConn, w *work, rep []byte, renv hsmsg.Envelope, ap netip.AddrPort, addr net.Addr) {
	var err error
	for i, k := 0, hsmsg.NumPieces(len(rep)); i < k; i++ {
		w.pkt = hsmsg.AppendPiece(w.pkt[:0], renv, rep, i)
		if uc != nil {
			_, err = uc.WriteToUDPAddrPort(w.pkt, ap)
		} else {
			_, err = pc.WriteTo(w.pkt, addr)
		}
		if err != nil {
			s.stats.dropped.Add(1)
			return
		}
	}
	if cap(w.out) > 64<<10 {
		w.out = make([]byte, 0, 1024)
	}
}

// assemblies holds partial multi-datagram requests (TC), bounded in bytes and age.
// There is no sweeper goroutine: expired entries are dropped when a new one starts.
type assemblies struct {
	mu      sync.Mutex
	m       map[asmKey]*pending
	bytes   int
	limit   int
	timeout time.Duration
}

type asmKey struct {
	from string
	id   uint32
}

type pending struct {
	a        *hsmsg.Assembly
	deadline time.Time
}

func (as *assemblies) init(limit int, timeout time.Duration) {
	as.m = map[asmKey]*pending{}
	as.limit, as.timeout = limit, timeout
}

// add places one piece; when the message is complete it returns it (and forgets it).
func (as *assemblies) add(from string, env *hsmsg.Envelope, payload []byte) ([]byte, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	now := time.Now()
	k := asmKey{from, env.RequestID}
	p := as.m[k]
	if p != nil && now.After(p.deadline) {
		as.drop(k, p)
		p = nil
	}
	if p == nil {
		for k2, p2 := range as.m { // expire stale ones before taking more memory
			if now.After(p2.deadline) {
				as.drop(k2, p2)
			}
		}
		size := int(env.MessageLength) + 64
		if as.bytes+size > as.limit {
			return nil, false
		}
		p = &pending{a: hsmsg.NewAssembly(*env), deadline: now.Add(as.timeout)}
		as.m[k] = p
		as.bytes += p.a.Size()
	}
	done, err := p.a.Add(env, payload)
	if err != nil {
		as.drop(k, p)
		return nil, false
	}
	if !done {
		return nil, false
	}
	as.drop(k, p)
	return p.a.Message(), true
}

func (as *assemblies) drop(k asmKey, p *pending) {
	delete(as.m, k)
	as.bytes -= p.a.Size()
}
