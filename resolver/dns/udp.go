package hdldns

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"pidnode/internal/unsafeconv"
)

// The UDP loop. miekg/dns's server reads each datagram in one goroutine and
// answers it in a new one, sets a read deadline before every read, and
// allocates per query a session with its out-of-band buffer, a response
// writer, the request message and the control message of the reply. On a
// node whose heap holds a large cache, that garbage costs more in collection
// than the answer itself. ServeUDP on a *net.UDPConn therefore runs its own
// loop: a few workers, each reading a datagram into its own buffer, answering
// it in place and reading the next, with a reused request message and writer.
//
// What a query gets is what miekg's server would send: the same acceptance
// rules (dns.DefaultMsgAcceptFunc), the same FORMERR and NOTIMP replies to
// requests it rejects or cannot unpack, silence for datagrams shorter than a
// header, and a 4096-byte read buffer. A socket bound to a wildcard address
// answers from the address the query was sent to, through miekg's own session
// functions (as miekg does for every socket); a socket bound to one address
// needs no control messages, since the kernel sends from that address; on
// Linux its replies go out through sendto(2) without the descriptor's write
// lock (udp_linux.go).

// udpReadSize is the read buffer: queries up to 4096 bytes (dns.DefaultMsgSize).
const udpReadSize = dns.DefaultMsgSize

// udpWorkers is the number of goroutines reading one socket: one per P, and
// at least four, so that queries waiting on cache misses (store reads) do not
// hold up the others. (dnsperf on 2 CPUs: 2, 4 and 8 workers cost the same
// CPU per query within the noise; 1 worker costs more, as it parks on the
// socket more often.)
func udpWorkers() int { return max(4, runtime.GOMAXPROCS(0)) }

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

type udpServer struct {
	s       *Server
	conn    *net.UDPConn
	local   net.Addr
	session bool // wildcard address: reply from the query's destination (PKTINFO)
	workers int
	wg      sync.WaitGroup
	closing atomic.Bool
	errOnce sync.Once
	err     error
	done    chan struct{}
}

// isWildcard reports whether conn is bound to an unspecified address, so that
// replies must name their source address (the query's destination).
func isWildcard(conn *net.UDPConn) bool {
	a, ok := conn.LocalAddr().(*net.UDPAddr)
	return ok && (a.IP == nil || a.IP.IsUnspecified())
}

func (s *Server) newUDPServer(conn *net.UDPConn) *udpServer {
	u := &udpServer{s: s, conn: conn, local: conn.LocalAddr(), workers: udpWorkers(), done: make(chan struct{})}
	u.session = isWildcard(conn)
	u.wg.Add(u.workers)
	return u
}

// run serves until the socket is closed; it returns the error that stopped a
// worker, or nil once closed by shutdown.
func (u *udpServer) run() error {
	if u.session {
		// As miekg's ActivateAndServe does: ask for the destination address
		// of each datagram (udp_linux.go).
		if err := setPktinfo(u.conn); err != nil {
			u.fail(err)
		}
	}
	for range u.workers {
		go u.work()
	}
	u.wg.Wait()
	u.conn.Close()
	close(u.done)
	return u.err
}

// fail records the first error that stops the loop and closes the socket,
// which stops the other workers.
func (u *udpServer) fail(err error) {
	u.errOnce.Do(func() { u.err = err })
	u.closing.Store(true)
	u.conn.Close()
}

// shutdown stops the workers' reads (a read deadline in the past, as miekg's
// server does) and waits until each has answered the query it holds and run
// has closed the socket, or until ctx is done.
func (u *udpServer) shutdown(ctx context.Context) error {
	u.closing.Store(true)
	u.conn.SetReadDeadline(aLongTimeAgo)
	select {
	case <-u.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (u *udpServer) work() {
	defer u.wg.Done()
	w := &udpWriter{conn: u.conn, local: u.local}
	if !u.session {
		w.raw = newRawSender(u.conn)
	}
	buf := make([]byte, udpReadSize)
	req := new(dns.Msg)
	for {
		var (
			n   int
			err error
		)
		if u.session {
			var sess *dns.SessionUDP
			n, sess, err = dns.ReadFromSessionUDP(u.conn, buf)
			w.session = sess
			if sess != nil {
				w.remote = sess.RemoteAddr().(*net.UDPAddr).AddrPort()
			}
		} else {
			n, _, _, w.remote, err = u.conn.ReadMsgUDPAddrPort(buf, nil)
		}
		if err != nil {
			if u.closing.Load() {
				return
			}
			if isTemporary(err) {
				continue
			}
			u.fail(err)
			return
		}
		u.s.servePacket(w, req, buf[:n])
	}
}

// isTemporary is miekg's test for read errors to read past.
func isTemporary(err error) bool {
	ne, ok := err.(interface{ Temporary() bool })
	return ok && ne.Temporary()
}

// servePacket answers one datagram as miekg's server would (server.go,
// serveDNS): drop what has no header or is a response, FORMERR what the
// default accept function rejects or what does not unpack, NOTIMP unknown
// opcodes, and hand the rest to the handler. req is reused.
func (s *Server) servePacket(w *udpWriter, req *dns.Msg, m []byte) {
	if len(m) < 12 {
		return
	}
	dh := dns.Header{
		Id:      binary.BigEndian.Uint16(m[0:]),
		Bits:    binary.BigEndian.Uint16(m[2:]),
		Qdcount: binary.BigEndian.Uint16(m[4:]),
		Ancount: binary.BigEndian.Uint16(m[6:]),
		Nscount: binary.BigEndian.Uint16(m[8:]),
		Arcount: binary.BigEndian.Uint16(m[10:]),
	}
	*req = dns.Msg{}
	action := dns.DefaultMsgAcceptFunc(dh)
	switch action {
	case dns.MsgIgnore:
		return
	case dns.MsgAccept:
		if w.parser.parse(req, m) || req.Unpack(m) == nil {
			s.serveDNS(w, req, true, w.remote.Addr())
			return
		}
		// A request that does not unpack gets FORMERR, built from what did.
	default: // dns.MsgReject, dns.MsgRejectNotImplemented
		req.Unpack(m[:12]) // the header alone, as miekg has it at this point
	}
	opcode := req.Opcode
	req.SetRcodeFormatError(req)
	req.Zero = false
	if action == dns.MsgRejectNotImplemented {
		req.Opcode = opcode
		req.Rcode = dns.RcodeNotImplemented
	}
	req.Ns, req.Answer, req.Extra = nil, nil, nil
	w.WriteMsg(req)
}

// udpWriter is a worker's dns.ResponseWriter, reused for every query.
type udpWriter struct {
	conn    *net.UDPConn
	local   net.Addr
	remote  netip.AddrPort
	session *dns.SessionUDP // wildcard sockets only
	raw     *rawSender      // nil: the ordinary write (udp_linux.go)
	parser  queryParser
}

func (w *udpWriter) LocalAddr() net.Addr  { return w.local }
func (w *udpWriter) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(w.remote) }

func (w *udpWriter) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (w *udpWriter) Write(b []byte) (int, error) {
	if w.session != nil {
		return dns.WriteToSessionUDP(w.conn, b, w.session)
	}
	if w.raw != nil {
		if ok, err := w.raw.sendTo(b, w.remote); ok {
			if err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	n, _, err := w.conn.WriteMsgUDPAddrPort(b, nil, w.remote)
	return n, err
}

func (w *udpWriter) Close() error        { return nil }
func (w *udpWriter) TsigStatus() error   { return nil }
func (w *udpWriter) TsigTimersOnly(bool) {}
func (w *udpWriter) Hijack()             {}

// queryParser reads the common query without allocating: a header, one
// uncompressed question and, optionally, an OPT record without options (what
// dnsperf, dig +noedns and most stub resolvers send). Anything else is left
// to dns.Msg.Unpack. What it fills in is exactly what Unpack would
// (FuzzParseQuery), except that the question name lives in the parser's
// buffer: it is valid until the next parse, so nothing may keep it past the
// query (the handler keeps names only in its pooled reply, cleared on
// release, and clones them for logging).
type queryParser struct {
	name  []byte
	q     [1]dns.Question
	opt   dns.OPT
	extra [1]dns.RR
}

// maxPresentationName bounds the presentation form of a 255-octet name
// (every byte escaped as \DDD).
const maxPresentationName = 255 * 4

func (p *queryParser) parse(req *dns.Msg, m []byte) bool {
	if len(m) < 12 {
		return false
	}
	qd, an, ns, ar := binary.BigEndian.Uint16(m[4:]), binary.BigEndian.Uint16(m[6:]), binary.BigEndian.Uint16(m[8:]), binary.BigEndian.Uint16(m[10:])
	if qd != 1 || an != 0 || ns != 0 || ar > 1 {
		return false
	}
	// The question name, escaped as dns.UnpackDomainName escapes it.
	if cap(p.name) < maxPresentationName {
		p.name = make([]byte, 0, maxPresentationName)
	}
	s := p.name[:0]
	off, budget := 12, 255
	for {
		if off >= len(m) {
			return false
		}
		c := int(m[off])
		off++
		if c == 0 {
			break
		}
		if c&0xC0 != 0 || off+c > len(m) {
			return false // a compression pointer, a reserved label type, or short
		}
		if budget -= c + 1; budget <= 0 {
			return false
		}
		for _, b := range m[off : off+c] {
			switch {
			case b == '.' || b == ' ' || b == '\'' || b == '@' || b == ';' || b == '(' || b == ')' || b == '"' || b == '\\':
				s = append(s, '\\', b)
			case b < ' ' || b > '~':
				s = append(s, '\\', '0'+b/100, '0'+b/10%10, '0'+b%10)
			default:
				s = append(s, b)
			}
		}
		s = append(s, '.')
		off += c
	}
	if off+4 > len(m) {
		return false
	}
	q := &p.q[0]
	if len(s) == 0 {
		q.Name = "."
	} else {
		q.Name = unsafeconv.String(s)
	}
	q.Qtype = binary.BigEndian.Uint16(m[off:])
	q.Qclass = binary.BigEndian.Uint16(m[off+2:])
	off += 4
	var opt *dns.OPT
	if ar == 1 {
		// OPT: root owner, type 41, class, TTL, RDLENGTH 0.
		if off+11 > len(m) || m[off] != 0 || binary.BigEndian.Uint16(m[off+1:]) != dns.TypeOPT || binary.BigEndian.Uint16(m[off+9:]) != 0 {
			return false
		}
		opt = &p.opt
		*opt = dns.OPT{Hdr: dns.RR_Header{
			Name:   ".",
			Rrtype: dns.TypeOPT,
			Class:  binary.BigEndian.Uint16(m[off+3:]),
			Ttl:    binary.BigEndian.Uint32(m[off+5:]),
		}}
	}
	if req.Unpack(m[:12]) != nil { // the header alone: no sections, no allocation
		return false
	}
	req.Question = p.q[:1]
	if opt != nil {
		p.extra[0] = opt
		req.Extra = p.extra[:1]
		req.Rcode |= opt.ExtendedRcode()
	}
	return true
}
