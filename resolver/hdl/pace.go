package hdl

import (
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/internal/connlimit"
	"pidnode/internal/tokenbucket"
)

// Signed replies are paced, not refused.
//
// An RSA signature costs far more CPU than a plain reply and anyone may ask
// for one, so each source gets SignedRate signatures a second. A certified request
// beyond that budget cannot be refused in a way the CNRI client reports as
// "busy": the client checks the reply's signature before it reads the reply
// code, so an unsigned RC 3 reaches its user as MISSING_OR_INVALID_SIGNATURE,
// which looks like tampering. Nor can one signature be made once and reused
// for a burst of refusals: from protocol 2.7 the signed bytes include the
// request's RequestId (docs/handle-protocol.md §3.3, hsmsg.AppendSigningPrefix),
// and they hold the header's ExpirationTime and, with RD, the request's
// digest, so no two requests share them. A refusal signed per request costs
// what the answer would.
//
// So the request waits for its turn instead: it is answered, signed, as soon
// as the source's budget allows, if that is within SignedWait. A client that
// waits for each reply before it sends the next, as the CNRI resolver and
// pidctl do, is slowed to SignedRate and never refused; the CPU spent on
// signatures per source stays at SignedRate either way, and a waiting request
// costs a timer, not CPU. Only a source with more certified requests in
// flight than its budget covers within SignedWait gets RC 3 (unsigned, CT
// cleared, counted in Stats.TooBusy). Waiting requests are bounded: over TCP
// by the source's connection slots, over UDP by maxSignedWaiters
// (perSourceSignedWaiters from one source); a UDP request that finds no
// waiting slot is refused at once. A UDP client that resends while its
// request waits has both copies answered, each from the budget.

// maxSignedWaiters bounds the UDP requests waiting for a signed reply, and
// perSourceSignedWaiters those of one source.
const (
	maxSignedWaiters       = 256
	perSourceSignedWaiters = 16
)

// Budget decisions a transport makes for a request before respond.
const (
	tokUndecided int8 = iota // respond takes a token itself, without waiting
	tokTaken                 // the transport took one (possibly after waiting)
	tokRefused               // none came within SignedWait
)

// certified reports whether msg is a request (RC 0) with CT set, the only
// kind that costs a signature; a message too short for a header is not. It
// reads the two header fields in place (docs/handle-protocol.md §3.2).
func certified(msg []byte) bool {
	if len(msg) < hsmsg.HeaderLen {
		return false
	}
	rc := binary.BigEndian.Uint32(msg[4:8])
	flags := binary.BigEndian.Uint32(msg[8:12])
	return rc == hsmsg.RCReserved && flags&hsmsg.FlagCT != 0
}

// takeSigned takes a signed-reply token for src at once.
func (s *Server) takeSigned(src netip.Addr) tokenbucket.Result {
	return s.signed.Take(connlimit.KeyOf(src), s.cfg.Now().UnixNano())
}

// awaitSigned waits, from the refused take first, until src's budget gives a
// token; false when none comes within SignedWait or the server shuts down.
// Waiters from one source compete for each token; a loser waits for the next.
func (s *Server) awaitSigned(src netip.Addr, first tokenbucket.Result) bool {
	deadline := time.Now().Add(s.cfg.SignedWait)
	for r := first; ; r = s.takeSigned(src) {
		if r.OK {
			return true
		}
		if time.Until(deadline) < r.Wait {
			return false
		}
		t := time.NewTimer(r.Wait)
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
			return false
		}
		s.stats.signedWaits.Add(1)
	}
}

// paceTCP decides the signed-reply budget for a TCP request before respond,
// waiting in the connection's own goroutine (which holds one of the source's
// connection slots) when the budget is spent.
func (s *Server) paceTCP(w *work, msg []byte) {
	if s.signed == nil || !certified(msg) {
		return
	}
	if r := s.takeSigned(w.src); r.OK || s.awaitSigned(w.src, r) {
		w.tok = tokTaken
	} else {
		w.tok = tokRefused
	}
}

// paceUDP decides the signed-reply budget for a UDP request before respond.
// When the request has to wait, it waits in a goroutine of its own (the UDP
// readers serve every source) holding a copy of msg, which answers it to ap
// (uc) or addr (another PacketConn); paceUDP then returns true and the caller
// does nothing more.
func (s *Server) paceUDP(w *work, env *hsmsg.Envelope, msg []byte, pc net.PacketConn, uc *net.UDPConn, ap netip.AddrPort, addr net.Addr) bool {
	if s.signed == nil || !certified(msg) {
		return false
	}
	r := s.takeSigned(w.src)
	if r.OK {
		w.tok = tokTaken
		return false
	}
	w.tok = tokRefused
	if r.Wait > s.cfg.SignedWait {
		return false
	}
	key, why := s.waiters.Acquire(w.src)
	if why != connlimit.OK {
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.waiters.Release(key)
		return false
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	src, renv, m := w.src, *env, append([]byte(nil), msg...)
	w.tok = tokUndecided
	go func() {
		defer s.inflight.Done()
		defer s.waiters.Release(key)
		w := s.works.Get().(*work)
		defer s.works.Put(w)
		w.src = src
		if s.awaitSigned(src, r) {
			w.tok = tokTaken
		} else {
			w.tok = tokRefused
		}
		if rep, renv, ok := s.respond(w, &renv, m); ok {
			s.sendUDP(pc, uc, w, rep, renv, ap, addr)
		}
	}()
	return true
}
