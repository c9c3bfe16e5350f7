package hdldns_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
	hdldns "pidnode/resolver/dns"
	"pidnode/store"
)

// Test data: the zones and handles every test uses.
const (
	zoneTest = "hdl.example.org."
	zoneProd = "prod.example.org."
	prefTest = "21.T12345"
	prefProd = "21.12345"

	hRef     = "21.T12345/svc/K7Q/4XJ29MPAC" // the reference example
	nameRef  = "4XJ29MPAC.K7Q.svc." + zoneTest
	urlRef   = "https://example.org/landing/4XJ29MPAC"
	startSec = 1_800_000_000 // the fixture clock, unix seconds
)

// fixture is a real server on 127.0.0.1 over a real cache over a real store.
type fixture struct {
	srv   *hdldns.Server
	db    *store.DB
	cache *cache.Cache
	namer *handlev.Namer
	udp   string
	tcp   string
	clock atomic.Int64 // unix nanoseconds
	done  chan error   // ServeUDP and ServeTCP results
}

func (f *fixture) now() time.Time { return time.Unix(0, f.clock.Load()) }

// newFixture starts a server; mutate may change its Config before New.
func newFixture(t *testing.T, mutate func(*hdldns.Config)) *fixture {
	t.Helper()
	f := newOffline(t, mutate)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.udp, f.tcp = pc.LocalAddr().String(), ln.Addr().String()
	f.done = make(chan error, 2)
	go func() { f.done <- f.srv.ServeUDP(pc) }()
	go func() { f.done <- f.srv.ServeTCP(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for range 2 {
			if err := <-f.done; !errors.Is(err, hdldns.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		}
	})
	return f
}

// newOffline builds the server without listeners (for ServeDNS-level tests).
func newOffline(t testing.TB, mutate func(*hdldns.Config)) *fixture {
	t.Helper()
	f := &fixture{}
	f.clock.Store(startSec * int64(time.Second))
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pid.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	f.namer, err = handlev.NewNamer(handlev.NamerConfig{Prefix: prefProd, TestPrefix: prefTest})
	if err != nil {
		t.Fatal(err)
	}
	f.cache, err = cache.New(cache.Config{Source: db, Alt: f.namer.AppendAltKey, Now: f.now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hdldns.Config{
		Cache: f.cache,
		Namer: f.namer,
		Zones: []hdldns.Zone{
			{Name: "hdl.example.org", Prefix: prefTest},
			{Name: "PROD.example.org.", Prefix: prefProd},
		},
		NS:      []string{"ns1.example.org", "ns2.example.org."},
		RName:   "hostmaster.example.org",
		Serial:  2026112201,
		Minimum: 30 * time.Second,
		TTL:     time.Hour,
		Now:     f.now,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	f.srv, err = hdldns.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// put stores a record (replacing any) and drops it from the cache.
func (f *fixture) put(t testing.TB, handle string, vals ...handlev.Value) {
	t.Helper()
	key, _, err := f.namer.Key(handle)
	if err != nil {
		t.Fatalf("Key(%q): %v", handle, err)
	}
	for i := range vals {
		if vals[i].Index == 0 {
			vals[i].Index = int32(i + 1)
		}
		if vals[i].Perm == 0 {
			vals[i].Perm = handlev.PermDefault
		}
	}
	err = f.db.Update(func(tx *store.Tx) error {
		return tx.PutRecord(key, &store.Stored{Record: handlev.Record{Handle: handle, Values: vals}, Version: 1})
	})
	if err != nil {
		t.Fatalf("PutRecord(%q): %v", handle, err)
	}
	f.cache.Invalidate(key)
}

func val(typ, data string, ttl int32) handlev.Value {
	return handlev.Value{Type: typ, Data: []byte(data), TTL: ttl}
}

func status(s handlev.Status) handlev.Value { return val(handlev.TypeStatus, s.String(), 600) }

// query builds a question; edns > 0 adds an OPT with that UDP size.
func query(name string, qtype uint16, edns uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	return m
}

// exchange sends q over network ("udp" or "tcp") and returns the reply.
func (f *fixture) exchange(t testing.TB, network string, q *dns.Msg) *dns.Msg {
	t.Helper()
	addr := f.udp
	if network == "tcp" {
		addr = f.tcp
	}
	c := &dns.Client{Net: network, Timeout: 3 * time.Second}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		t.Fatalf("%s exchange %s %s: %v", network, q.Question[0].Name, dns.TypeToString[q.Question[0].Qtype], err)
	}
	if r.Id != q.Id {
		t.Fatalf("reply id %d, want %d", r.Id, q.Id)
	}
	return r
}

// rawUDP sends packed query bytes over UDP and returns the raw reply.
func (f *fixture) rawUDP(t testing.TB, q *dns.Msg) []byte {
	t.Helper()
	b, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp", f.udp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("raw udp read: %v", err)
	}
	return buf[:n]
}

// nets are the transports every answer is checked over.
var nets = []string{"udp", "tcp"}
