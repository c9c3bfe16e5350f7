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
