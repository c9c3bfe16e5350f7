//go:build !linux

package hdldns

import (
	"net"
	"net/netip"
)

// rawSender exists on Linux only (udp_linux.go); elsewhere replies take the
// ordinary write.
type rawSender struct{}

func newRawSender(*net.UDPConn) *rawSender { return nil }

func (*rawSender) sendTo([]byte, netip.AddrPort) (bool, error) { return false, nil }

// ownLoopWildcard: elsewhere, sockets bound to a wildcard address keep
// miekg/dns's server, which sets the platform's control-message options.
const ownLoopWildcard = false

func setPktinfo(*net.UDPConn) error { return nil }
