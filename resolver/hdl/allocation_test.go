package hdl

import (
	"net"
	"path/filepath"
	"testing"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/store"
)

func internalServer(t testing.TB) *Server {
	t.Helper()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.11148", Extra: []string{"20.500.1"}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pid.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := handlev.Record{Handle: "20.500.1/HOT", Values: []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://example.org/hot"), TTL: 86400, Perm: handlev.PermDefault},
		{Index: 2, Type: "EMAIL", Data: []byte("a@example.org"), TTL: 86400, Perm: handlev.PermDefault},
	}}
	if err := db.Update(func(tx *store.Tx) error {
		return tx.PutRecord("20.500.1/HOT", &store.Stored{Record: rec, Version: 1})
	}); err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(cache.Config{Source: db})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Cache: c, Namer: namer})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func request(q *hsmsg.ResolutionRequest, flags uint32) (hsmsg.Envelope, []byte) {
	body := hsmsg.AppendResolutionRequest(nil, q)
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: flags, SiteInfoSerial: 0xFFFF, BodyLength: uint32(len(body))})
	msg = append(append(msg, body...), 0, 0, 0, 0)
	return hsmsg.Envelope{Major: 2, Minor: 10, SuggestMajor: 2, SuggestMinor: 11, RequestID: 1, MessageLength: uint32(len(msg))}, msg
}

// The hot path allocates nothing (docs/architecture.md practice 6): a cache hit answered by
// splicing the pre-encoded values, and the filtered and digest variants too.
func TestRespondAllocs(t *testing.T) {
	s := internalServer(t)
	tests := []struct {
		name  string
		q     hsmsg.ResolutionRequest
		flags uint32
		rc    uint32
	}{
		{"hit", hsmsg.ResolutionRequest{Handle: []byte("20.500.1/hot")}, hsmsg.FlagsJava, 1},
		{"hit with RD", hsmsg.ResolutionRequest{Handle: []byte("20.500.1/hot")}, hsmsg.FlagsJava | hsmsg.FlagRD, 1},
		{"type filter", hsmsg.ResolutionRequest{Handle: []byte("20.500.1/hot"), Types: [][]byte{[]byte("URL")}}, hsmsg.FlagsJava, 1},
		{"not found", hsmsg.ResolutionRequest{Handle: []byte("20.500.1/cold")}, hsmsg.FlagsJava, 100},
	}
	w := s.works.Get().(*work)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, msg := request(&tc.q, tc.flags)
			rep, _, ok := s.respond(w, &env, msg)
			if !ok {
				t.Fatal("no reply")
			}
			r, err := hsmsg.ParseReply(rep)
			if err != nil || r.Header.ResponseCode != tc.rc {
				t.Fatalf("reply RC %d, %v", r.Header.ResponseCode, err)
			}
			if n := testing.AllocsPerRun(200, func() { s.respond(w, &env, msg) }); n != 0 {
				t.Errorf("respond allocates %v times per request", n)
			}
		})
	}
}

// The UDP datagram path (parse, respond, write to a real socket) allocates nothing.
func TestDatagramAllocs(t *testing.T) {
	s := internalServer(t)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	to := sink.LocalAddr().(*net.UDPAddr).AddrPort()
	env, msg := request(&hsmsg.ResolutionRequest{Handle: []byte("20.500.1/HOT")}, hsmsg.FlagsJava)
	dgram := append(hsmsg.AppendEnvelope(nil, &env), msg...)
	w := &work{out: make([]byte, 0, 1024), key: make([]byte, 0, 256), pkt: make([]byte, 0, hsmsg.MaxUDPPacket)}
	go func() { // drain
		b := make([]byte, 1024)
		for {
			if _, err := sink.Read(b); err != nil {
				return
			}
		}
	}()
	s.datagram(pc, pc, w, dgram, to, nil)
	if n := testing.AllocsPerRun(200, func() { s.datagram(pc, pc, w, dgram, to, nil) }); n != 0 {
		t.Errorf("datagram allocates %v times per request", n)
	}
}

// FuzzRespond: no request makes the server panic; every reply it sends parses and
// echoes the request id.
func FuzzRespond(f *testing.F) {
	s := internalServer(f)
	for _, q := range []hsmsg.ResolutionRequest{
		{Handle: []byte("20.500.1/HOT")},
		{Handle: []byte("20.500.1/HOT"), Indexes: []int32{2}, Types: [][]byte{[]byte("URL.")}},
		{Handle: []byte("99/X")},
	} {
		_, msg := request(&q, hsmsg.FlagsJava|hsmsg.FlagRD)
		f.Add(msg)
	}
	w := s.works.Get().(*work)
	f.Fuzz(func(t *testing.T, msg []byte) {
		env := hsmsg.Envelope{Major: 2, Minor: 11, RequestID: 5, MessageLength: uint32(len(msg))}
		rep, renv, ok := s.respond(w, &env, msg)
		if !ok {
			return
		}
		if renv.RequestID != 5 || int(renv.MessageLength) != len(rep) {
			t.Fatalf("reply envelope %+v for %d bytes", renv, len(rep))
		}
		if _, err := hsmsg.ParseReply(rep); err != nil {
			t.Fatalf("server reply does not parse: %v", err)
		}
	})
}
