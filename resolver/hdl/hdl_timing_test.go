package hdl_test

import (
	"io"
	"net"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
)

func benchRequest(b *testing.B) []byte {
	q := hsmsg.AppendResolutionRequest(nil, &hsmsg.ResolutionRequest{Handle: []byte("20.500.1/SMALL")})
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava, SiteInfoSerial: 0xFFFF, BodyLength: uint32(len(q))})
	msg = append(append(msg, q...), 0, 0, 0, 0)
	env := hsmsg.Envelope{Major: 2, Minor: 10, SuggestMajor: 2, SuggestMinor: 11, RequestID: 1, MessageLength: uint32(len(msg))}
	return append(hsmsg.AppendEnvelope(nil, &env), msg...)
}

func benchNode(b *testing.B) *node {
	rec := handlev.Record{Handle: "20.500.1/SMALL", Values: []handlev.Value{
		val(1, "URL", "https://example.org/small"), val(2, "EMAIL", "pid@example.org"),
		{Index: 100, Type: "HS_ADMIN", Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/20.500.1", Index: 200}), TTL: 86400, Perm: handlev.PermDefault},
	}}
	return startNode(b, nil, rec)
}

// BenchmarkResolveUDP: resolutions per second on a cache hit over loopback UDP,
// one connected socket per parallel client, one request in flight per client.
func BenchmarkResolveUDP(b *testing.B) {
	n := benchNode(b)
	req := benchRequest(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("udp", n.addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		buf := make([]byte, 1024)
		for pb.Next() {
			if _, err := conn.Write(req); err != nil {
				b.Error(err)
				return
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, err := conn.Read(buf)
			if err != nil || k < hsmsg.EnvelopeLen+hsmsg.HeaderLen || buf[hsmsg.EnvelopeLen+7] != 1 {
				b.Errorf("reply %d bytes, %v", k, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkResolveTCP: resolutions per second on a cache hit over loopback TCP,
// one connection per request as the protocol and the Java client do.
func BenchmarkResolveTCP(b *testing.B) {
	n := benchNode(b)
	req := benchRequest(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 1024)
		for pb.Next() {
			conn, err := net.Dial("tcp", n.addr)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := conn.Write(req); err != nil {
				b.Error(err)
				conn.Close()
				return
			}
			k, err := io.ReadAtLeast(conn, buf, hsmsg.EnvelopeLen+hsmsg.HeaderLen)
			conn.Close()
			if err != nil || buf[hsmsg.EnvelopeLen+7] != 1 {
				b.Errorf("reply %d bytes, %v", k, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
