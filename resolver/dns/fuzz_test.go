package hdldns_test

import (
	"net"
	"testing"

	"github.com/miekg/dns"
)

// captureWriter is a dns.ResponseWriter that keeps what the handler writes.
type captureWriter struct {
	tcp bool
	out [][]byte
}

var (
	clientUDP = &net.UDPAddr{IP: net.IPv4(192, 0, 2, 53), Port: 5353}
	clientTCP = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 53), Port: 5353}
	serverUDP = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	serverTCP = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
)

func (w *captureWriter) LocalAddr() net.Addr {
	if w.tcp {
		return serverTCP
	}
	return serverUDP
}

func (w *captureWriter) RemoteAddr() net.Addr {
	if w.tcp {
		return clientTCP
	}
	return clientUDP
}

func (w *captureWriter) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.out = append(w.out, append([]byte(nil), b...))
	return len(b), nil
}

func (w *captureWriter) Close() error        { return nil }
func (w *captureWriter) TsigStatus() error   { return nil }
func (w *captureWriter) TsigTimersOnly(bool) {}
func (w *captureWriter) Hijack()             {}

// sizeLimit is the largest reply req allows over UDP or TCP.
func sizeLimit(req *dns.Msg, tcp bool) int {
	if tcp {
		return dns.MaxMsgSize
	}
	var opt *dns.OPT
	n := 0
	for _, rr := range req.Extra {
		if o, ok := rr.(*dns.OPT); ok {
			opt, n = o, n+1
		}
	}
	if n != 1 {
		return dns.MinMsgSize
	}
	return min(max(int(opt.UDPSize()), dns.MinMsgSize), 1232)
}

// FuzzServeDNS feeds arbitrary packets to the handler: it must not panic, must
// write at most one reply, and every reply must unpack, match the request id
// and fit the size the request allows.
func FuzzServeDNS(f *testing.F) {
	fx := newOffline(f, nil)
	loadAnswerData(f, fx)
	loadBigData(f, fx)
	seeds := []struct {
		name  string
		qtype uint16
		edns  uint16
	}{
		{nameRef, dns.TypeTXT, 0},
		{nameRef, dns.TypeURI, 1232},
		{"4xj2-9mpa-c.k7q.SVC.hdl.example.org.", dns.TypeTXT, 4096},
		{nameDNS, dns.TypeA, 1232},
		{nameDNS, dns.TypeTXT, 512},
		{nameDNS, 65280, 0},
		{"ALIAS0001.DNS.svc." + zoneTest, dns.TypeAAAA, 0},
		{nameObs, dns.TypeTXT, 0},
		{"hx--a-20b-2fc.legacy." + zoneTest, dns.TypeTXT, 0},
		{`v1\.2.doc.` + zoneTest, dns.TypeURI, 0},
		{zoneTest, dns.TypeSOA, 0},
		{zoneTest, dns.TypeNS, 1232},
		{zoneTest, dns.TypeAXFR, 0},
		{nameLong, dns.TypeTXT, 0},
		{nameMany, dns.TypeTXT, 1232},
		{"www.example.com.", dns.TypeA, 0},
	}
	for i, s := range seeds {
		q := query(s.name, s.qtype, s.edns)
		q.Id = uint16(i)
		b, err := q.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, packet []byte, tcp bool) {
		req := new(dns.Msg)
		if err := req.Unpack(packet); err != nil {
			return // miekg's server answers FORMERR before any handler runs
		}
		w := &captureWriter{tcp: tcp}
		fx.srv.ServeDNS(w, req)
		if len(w.out) > 1 {
			t.Fatalf("%d replies, want at most one", len(w.out))
		}
		if len(w.out) == 0 {
			if !req.Response {
				t.Fatalf("no reply to a request")
			}
			return
		}
		out := w.out[0]
		if lim := sizeLimit(req, tcp); len(out) > lim {
			t.Fatalf("reply of %d bytes, limit %d", len(out), lim)
		}
		r := new(dns.Msg)
		if err := r.Unpack(out); err != nil {
			t.Fatalf("reply does not unpack: %v\n% x", err, out)
		}
		if r.Id != req.Id || !r.Response || r.RecursionAvailable {
			t.Fatalf("reply header %+v for request id %d", r.MsgHdr, req.Id)
		}
		if _, err := r.Pack(); err != nil {
			t.Fatalf("reply does not pack again: %v", err)
		}
	})
}
