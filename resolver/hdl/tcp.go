package hdl

import (
	"errors"
	"io"
	"net"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/internal/connlimit"
)

// ServeTCP accepts connections on ln and answers one request on each
// (docs/handle-protocol.md §3.1). It returns ErrServerClosed after Shutdown, or the accept error.
func (s *Server) ServeTCP(ln net.Listener) error {
	if !s.track(ln, nil, true) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.track(ln, nil, false)
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		// One source may hold only so many slots, and above the high-water
		// mark heavy sources are refused first (internal/connlimit), so one
		// client holding idle connections cannot lock the others out.
		key, why := s.slots.Acquire(connlimit.AddrOf(c.RemoteAddr()))
		if why != connlimit.OK {
			s.stats.dropped.Add(1)
			c.Close()
			continue
		}
		if !s.trackConn(c, true) {
			s.slots.Release(key)
			c.Close()
			return ErrServerClosed
		}
		go s.serveConn(c, key)
	}
}

func (s *Server) serveConn(c net.Conn, key connlimit.Key) {
	defer func() {
		c.Close()
		s.trackConn(c, false)
		s.slots.Release(key)
	}()
	w := s.works.Get().(*work)
	defer s.works.Put(w)
	w.src = connlimit.AddrOf(c.RemoteAddr())
	now := time.Now()
	// A connection that has not sent its envelope yet holds its slot for
	// HeaderTimeout only; the whole request may take ReadTimeout.
	c.SetReadDeadline(now.Add(s.cfg.HeaderTimeout))
	var envb [hsmsg.EnvelopeLen]byte
	if _, err := io.ReadFull(c, envb[:]); err != nil {
		return
	}
	c.SetReadDeadline(now.Add(s.cfg.ReadTimeout))
	env, err := hsmsg.ParseEnvelope(envb[:])
	if err != nil {
		s.stats.dropped.Add(1)
		return
	}
	n := int(env.MessageLength)
	if cap(w.in) < n {
		w.in = make([]byte, n)
	}
	w.in = w.in[:n]
	if _, err := io.ReadFull(c, w.in); err != nil {
		s.stats.dropped.Add(1)
		return
	}
	s.paceTCP(w, w.in)
	rep, renv, ok := s.respond(w, &env, w.in)
	if !ok {
		return
	}
	w.pkt = hsmsg.AppendEnvelope(w.pkt[:0], &renv)
	w.pkt = append(w.pkt, rep...)
	c.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	c.Write(w.pkt)
	if cap(w.in) > 64<<10 { // do not keep rare large buffers in the pool
		w.in = nil
	}
	if cap(w.pkt) > 64<<10 {
		w.pkt = nil
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track registers (add) or forgets a listener or packet conn; it reports false when
// the server is already shut down.
func (s *Server) track(ln net.Listener, pc net.PacketConn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add && s.closed {
		return false
	}
	switch {
	case ln != nil && add:
		s.lns[ln] = struct{}{}
	case ln != nil:
		delete(s.lns, ln)
	case pc != nil && add:
		s.pcs[pc] = struct{}{}
	case pc != nil:
		delete(s.pcs, pc)
	}
	return true
}

func (s *Server) trackConn(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closed {
			return false
		}
		s.conns[c] = struct{}{}
		s.inflight.Add(1)
		return true
	}
	delete(s.conns, c)
	s.inflight.Done()
	return true
}
