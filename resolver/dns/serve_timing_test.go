package hdldns_test

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	hdldns "pidnode/resolver/dns"
)

// discardWriter is a UDP ResponseWriter that drops replies.
type discardWriter struct{ captureWriter }

func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// WriteMsg packs like miekg/dns's own writer, then drops the bytes.
func (w *discardWriter) WriteMsg(m *dns.Msg) error {
	_, err := m.Pack()
	return err
}

// mapHandler is bench/dns/baseline's handler (a bare miekg/dns server
// answering TXT from a map), repeated here for an in-process comparison.
type mapHandler map[string]string

func (h mapHandler) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) == 1 {
		q := r.Question[0]
		if u, ok := h[strings.ToLower(q.Name)]; ok {
			if q.Qtype == dns.TypeTXT {
				m.Answer = append(m.Answer, &dns.TXT{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 86400},
					Txt: []string{u},
				})
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
	}
	w.WriteMsg(m)
}

// BenchmarkServeDNS measures the handler alone (no sockets, no unpacking): a
// warm cache, replies packed and discarded.
func BenchmarkServeDNS(b *testing.B) {
	fx := newOffline(b, nil)
	loadAnswerData(b, fx)
	cases := []struct {
		name  string
		q     *dns.Msg
		h     dns.Handler
		rcode int
	}{
		{"TXT", query(strings.ToLower(nameRef), dns.TypeTXT, 0), fx.srv, dns.RcodeSuccess},
		{"TXT-EDNS0", query(nameRef, dns.TypeTXT, 1232), fx.srv, dns.RcodeSuccess},
		{"URI", query(nameRef, dns.TypeURI, 0), fx.srv, dns.RcodeSuccess},
		{"NXDOMAIN", query("NOSUCHID0.K7Q.svc."+zoneTest, dns.TypeTXT, 0), fx.srv, dns.RcodeNameError},
		{"DNS.A", query(nameDNS, dns.TypeA, 0), fx.srv, dns.RcodeSuccess},
		{"baseline-map-TXT", query(strings.ToLower(nameRef), dns.TypeTXT, 0),
			mapHandler{strings.ToLower(nameRef): urlRef}, dns.RcodeSuccess},
	}
	for _, c := range cases {
		w := &captureWriter{}
		c.h.ServeDNS(w, c.q) // warm the cache, check the answer
		r := new(dns.Msg)
		if len(w.out) != 1 || r.Unpack(w.out[0]) != nil || r.Rcode != c.rcode {
			b.Fatalf("%s: reply %v, want rcode %d", c.name, r, c.rcode)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				w := &discardWriter{}
				for pb.Next() {
					c.h.ServeDNS(w, c.q)
				}
			})
			reportCPU(b, cpu)
		})
	}
}

// cpuTime is the process's user+system CPU time. The wall-clock ns/op of a
// benchmark on a shared machine counts time other processes took; cpu-ns/op
// (CPU time of this process per operation, GC included) does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.Helper()
	if d := cpuTime() - start; d > 0 && b.N > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkServeUDP measures a whole query over loopback UDP, client
// included: "loop" is ServeUDP on a *net.UDPConn (udp.go), "miekg-server" the
// same handler behind miekg/dns's server, "baseline-map" bench/dns/baseline's
// bare map handler behind miekg/dns's server. The client's share is the same
// in all three, so the differences in cpu-ns/op are the servers'.
func BenchmarkServeUDP(b *testing.B) {
	fx := newOffline(b, nil)
	loadAnswerData(b, fx)
	q, err := query(strings.ToLower(nameRef), dns.TypeTXT, 0).Pack()
	if err != nil {
		b.Fatal(err)
	}
	listen := func() net.PacketConn {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		return pc
	}
	type target struct {
		name  string
		start func(pc net.PacketConn) (stop func())
	}
	serveHdl := func(wrap bool) func(pc net.PacketConn) func() {
		return func(pc net.PacketConn) func() {
			srv, err := hdldns.New(hdldns.Config{Cache: fx.cache, Namer: fx.namer, Zones: []hdldns.Zone{{Name: zoneTest, Prefix: prefTest}}})
			if err != nil {
				b.Fatal(err)
			}
			if wrap {
				pc = plainPacketConn{pc}
			}
			go srv.ServeUDP(pc)
			return func() { srv.Shutdown(context.Background()) }
		}
	}
	targets := []target{
		{"loop", serveHdl(false)},
		{"miekg-server", serveHdl(true)},
		{"baseline-map", func(pc net.PacketConn) func() {
			srv := &dns.Server{PacketConn: pc, Handler: mapHandler{strings.ToLower(nameRef): urlRef}}
			go srv.ActivateAndServe()
			return func() { srv.Shutdown() }
		}},
	}
	for _, tg := range targets {
		pc := listen()
		stop := tg.start(pc)
		b.Run(tg.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				buf := make([]byte, 4096)
				for pb.Next() {
					if _, err := c.Write(q); err != nil {
						b.Error(err)
						return
					}
					c.SetReadDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Read(buf); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCPU(b, cpu)
		})
		stop()
	}
}
