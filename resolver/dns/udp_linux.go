package hdldns

import (
	"net"
	"net/netip"
	"syscall"
)

// rawSender sends replies with sendto(2) on the socket's descriptor, taken
// through RawConn.Control: that holds a reference to the descriptor (so a
// concurrent Close waits for the call) but not the descriptor's write lock,
// which every worker would otherwise take in turn for each reply. Under load
// the workers' writes overlapped, and each hand-over of that lock woke a
// parked goroutine and often a thread: about a tenth of the server's CPU. The
// kernel serialises what needs serialising on a UDP socket itself.
//
// A send the socket cannot take now (EAGAIN: its buffer is full) falls back to
// the ordinary write, which waits.
type rawSender struct {
	rc    syscall.RawConn
	inet6 bool // the socket is AF_INET6: IPv4 peers are IPv4-mapped
	sa4   syscall.SockaddrInet4
	sa6   syscall.SockaddrInet6
	send  func(fd uintptr) // s.sendFD, bound once: no closure per reply
	b     []byte
	err   error
}

func newRawSender(conn *net.UDPConn) *rawSender {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSender{rc: rc}
	domain := -1
	if err := rc.Control(func(fd uintptr) {
		domain, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_DOMAIN)
	}); err != nil || domain < 0 {
		return nil
	}
	switch domain {
	case syscall.AF_INET:
	case syscall.AF_INET6:
		s.inet6 = true
	default:
		return nil
	}
	s.send = s.sendFD
	return s
}

func (s *rawSender) sendFD(fd uintptr) {
	if s.inet6 {
		s.err = syscall.Sendto(int(fd), s.b, 0, &s.sa6)
	} else {
		s.err = syscall.Sendto(int(fd), s.b, 0, &s.sa4)
	}
}

// sendTo sends b to addr; handled is false if the caller must send it the
// ordinary way (EAGAIN, or an address the socket's family cannot reach).
func (s *rawSender) sendTo(b []byte, addr netip.AddrPort) (handled bool, err error) {
	ip := addr.Addr()
	if s.inet6 {
		s.sa6.Port, s.sa6.Addr, s.sa6.ZoneId = int(addr.Port()), ip.As16(), 0
		if z := ip.Zone(); z != "" {
			return false, nil // a scoped address: let net resolve the zone
		}
	} else {
		if !ip.Unmap().Is4() {
			return false, nil
		}
		s.sa4.Port, s.sa4.Addr = int(addr.Port()), ip.Unmap().As4()
	}
	s.b = b
	cerr := s.rc.Control(s.send)
	s.b = nil
	if cerr != nil {
		return true, cerr // closed
	}
	if s.err == syscall.EAGAIN || s.err == syscall.EINTR {
		return false, nil
	}
	return true, s.err
}

// ownLoopWildcard: the UDP loop serves wildcard sockets too (with setPktinfo).
const ownLoopWildcard = true

// setPktinfo asks for each datagram's destination address and interface, as
// miekg/dns does for its UDP sockets (IP_PKTINFO, IPV6_RECVPKTINFO; an error
// only if neither family takes it), so that a socket bound to a wildcard
// address can answer from the address a query was sent to.
func setPktinfo(conn *net.UDPConn) error {
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var err4, err6 error
	if cerr := rc.Control(func(fd uintptr) {
		err6 = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVPKTINFO, 1)
		err4 = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_PKTINFO, 1)
	}); cerr != nil {
		return cerr
	}
	if err4 != nil && err6 != nil {
		return err4
	}
	return nil
}
