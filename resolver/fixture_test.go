package resolver

import (
	"bufio"
	"bytes"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Fixed test data: prefixes, a generated id with its check character, times.
const (
	tPrefix     = "21.12345"
	tTestPrefix = "21.T12345"
	tExtra      = "10.1000"
	tNS         = "K7Q"
	tStamp      = 1741686194 // 2025-03-11T09:43:14Z
	tPublicURL  = "https://pid.example.org"
)

var (
	tID      = "4XJ2-9MPA-" + string(handlev.CheckChar(tNS+"4XJ29MPA"))
	tBadID   = "4XJ2-9MPA-" + string(otherCheck(handlev.CheckChar(tNS+"4XJ29MPA")))
	tHandle  = tPrefix + "/svc/" + tNS + "/" + tID // canonical display form
	tAdminHS = tPrefix + "/svc/" + tNS + "/ADMIN"
)

func otherCheck(c byte) byte {
	if c == 'A' {
		return 'B'
	}
	return 'A'
}

func sv(index int32, typ, data string) handlev.Value {
	return handlev.Value{Index: index, Type: typ, Data: []byte(data), TTL: 86400, Timestamp: tStamp, Perm: handlev.PermDefault}
}

func adminValue(index int32) handlev.Value {
	v := sv(index, handlev.TypeAdmin, "")
	v.Data = handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: tAdminHS, Index: 300})
	return v
}

// pid4cat builds a record in the docs/product.md §3 layout.
func pid4cat(handle, url, status string, extra ...handlev.Value) handlev.Record {
	vs := []handlev.Value{
		sv(1, "URL", url),
		sv(10, "EMAIL", "pids@example.org"),
		sv(11, "STATUS", status),
		sv(12, "SCHEMA_VER", "v1.0.1"),
		sv(13, "METADATA_LICENSE", "CC0-1.0"),
		sv(14, "RESOURCE", `{"label":"Sample <42> & co","description":"A catalyst sample \"A\"","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://example.org/resource","media_type":"text/turtle","encoding_format":"UTF-8","size":12345}]}`),
	}
	vs = append(vs, extra...)
	vs = append(vs, adminValue(100))
	return handlev.Record{Handle: handle, Values: vs}
}

func related(items string) handlev.Value { return sv(15, "RELATED", items) }

// testRecords is the fixture every test serves.
func testRecords() []handlev.Record {
	private := sv(3, "SECRET", "not for anonymous eyes")
	private.Perm = handlev.PermAdminRead | handlev.PermAdminWrite
	bin := sv(4, "BLOB", "")
	bin.Data = []byte{0x00, 0x01, 0xfe, 0xff}
	abs := sv(1, "URL", "https://example.org/abs")
	abs.TTLType, abs.TTL = handlev.TTLAbsolute, int32(time.Now().Unix()+600)
	vlist := sv(5, handlev.TypeVList, "")
	vlist.Data = handlev.AppendVList(nil, []handlev.Ref{{Handle: tExtra + "/a", Index: 1}, {Handle: tExtra + "/b", Index: 2}})
	return []handlev.Record{
		pid4cat(tHandle, "https://landing.example.org/item/42?a=1&b=<2>", "REGISTERED"),
		pid4cat(tTestPrefix+"/svc/"+tNS+"/OLD1", "https://landing.example.org/old", "OBSOLETED",
			related(`[{"relation_type":"IS_OBSOLETED_BY","related_identifier":{"type":"HandleIdentifier","identifier":"`+tHandle+`","resolving_url":"https://hdl.handle.net/`+tHandle+`"}},`+
				`{"relation_type":"CITES","related_identifier":{"type":"ExampleIdentifier","identifier":"ex:<b>x</b>","resolving_url":"javascript:alert(1)"}}]`)),
		pid4cat(tTestPrefix+"/svc/"+tNS+"/DEP1", "https://landing.example.org/dep", "DEPRECATED"),
		pid4cat(tTestPrefix+"/svc/"+tNS+"/NEW1", "https://landing.example.org/new", "SUBMITTED"),
		{Handle: tExtra + "/order", Values: []handlev.Value{
			sv(2, "URL.mirror", "https://mirror.example.org/x"), sv(5, "url", "https://primary.example.org/x"), sv(6, "URL", "https://second.example.org/x")}},
		{Handle: tExtra + "/sub", Values: []handlev.Value{sv(1, "EMAIL", "a@b.example"), sv(7, "URL.alt", "http://alt.example.org/")}},
		{Handle: tExtra + "/js", Values: []handlev.Value{sv(1, "URL", "javascript:alert(document.cookie)"), sv(2, "URL.b", "https://b.example.org/")}},
		{Handle: tExtra + "/split", Values: []handlev.Value{sv(1, "URL", "https://example.org/a b\r\nSet-Cookie: x=1")}},
		{Handle: tExtra + "/idn", Values: []handlev.Value{sv(1, "URL", "https://bücher.example/straße?q=ä")}},
		{Handle: tExtra + "/abs", Values: []handlev.Value{abs}},
		{Handle: tExtra + "/mixed", Values: []handlev.Value{sv(1, "URL", "https://example.org/m"), private, bin, vlist, adminValue(100)}},
		{Handle: tExtra + "/none", Values: []handlev.Value{sv(1, "EMAIL", "only@example.org")}},
		{Handle: tExtra + "/alias", Values: []handlev.Value{sv(1, handlev.TypeAlias, tExtra+"/order")}},
		{Handle: tExtra + "/loop1", Values: []handlev.Value{sv(1, handlev.TypeAlias, tExtra+"/loop2")}},
		{Handle: tExtra + "/loop2", Values: []handlev.Value{sv(1, handlev.TypeAlias, tExtra+"/loop1")}},
		{Handle: tExtra + "/away", Values: []handlev.Value{sv(1, handlev.TypeAlias, "20.500/elsewhere")}},
		{Handle: tExtra + "/empty", Values: nil},
		{Handle: tExtra + "/private", Values: []handlev.Value{private}},
		{Handle: tExtra + "/ünï", Values: []handlev.Value{sv(1, "URL", "https://example.org/unicode")}},
		{Handle: tExtra + "/a+b c", Values: []handlev.Value{sv(1, "URL", "https://example.org/plus")}},
		{Handle: tExtra + "/loc", Values: []handlev.Value{sv(1, "URL", "https://legacy.example.org/item"), sv(2, handlev.TypeLoc, tLoc)}},
		{Handle: tExtra + "/weighted", Values: []handlev.Value{sv(1, handlev.TypeLoc, `<locations><location href="https://w1.example.org/" weight="1"/><location href="https://w2.example.org/" weight="2"/></locations>`)}},
		{Handle: tExtra + "/badloc", Values: []handlev.Value{sv(1, "URL", "https://legacy.example.org/bad"), sv(2, handlev.TypeLoc, `<locations><location href="https://never.example.org/"></locations>`)}},
		{Handle: tExtra + "/links", Values: []handlev.Value{sv(1, "URL", "https://example.org/linked"),
			sv(2, handlev.TypeLinks, `<https://example.org/author>; rel="author"; title="The \"author\"", <https://example.org/a.json>; rel="alternate describedby"; type="application/ld+json"`+"\n"+
				`<javascript:alert(1)>; rel="author", <https://example.org/x>; rel="cite-as", <https://example.org/y>; rel="bad rel!"; anchor="https://other.example/"`),
			sv(3, handlev.TypeHeaders, "X-Robots-Tag: noindex\r\nCache-Control: max-age=60\nSet-Cookie: a=1\nContent-Type: text/plain\nX-Bad: a\rb\nAccess-Control-Allow-Origin: *\nbad name: x")}},
	}
}

// tLoc is the 10320/loc value of the fixture record 10.1000/loc: the
// weighted choice goes to the only location with a weight (eu), the legacy
// URL value joins with weight 0.
const tLoc = `<locations chooseby="locatt,country,weighted">
<location href="https://eu.example.org/item" weight="1" country="de" view="html"/>
<location href="https://us.example.org/item" weight="0" country="us"/>
<location href="https://meta.example.org/item.ttl" role="metadata" media-type="text/turtle" weight="0" http_sc="303"/>
</locations>`

// fixture is a resolver over a real bbolt store and cache.
type fixture struct {
	namer *handlev.Namer
	db    *store.DB
	cache *cache.Cache
	srv   *Server
	ln    *fasthttputil.InmemoryListener
}

func newNamer(t testing.TB) *handlev.Namer {
	t.Helper()
	n, err := handlev.NewNamer(handlev.NamerConfig{Prefix: tPrefix, TestPrefix: tTestPrefix, Extra: []string{tExtra}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newFixture(t testing.TB, mod func(*Config)) *fixture {
	t.Helper()
	f := &fixture{namer: newNamer(t)}
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	err = db.Update(func(tx *store.Tx) error {
		for _, r := range testRecords() {
			key, _, err := f.namer.Key(r.Handle)
			if err != nil {
				return err
			}
			if err := tx.PutRecord(key, &store.Stored{Record: r, Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.cache, err = cache.New(cache.Config{Source: db, Alt: f.namer.AppendAltKey, Render: Render})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Cache: f.cache, Namer: f.namer, PublicURL: tPublicURL}
	if mod != nil {
		mod(&cfg)
	}
	f.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.ln = fasthttputil.NewInmemoryListener()
	go f.srv.Serve(f.ln) //nolint:errcheck // returns when the listener closes
	t.Cleanup(func() { f.ln.Close() })
	return f
}

// raw sends raw request bytes on a fresh connection and reads one response.
func (f *fixture) raw(t testing.TB, req string) *fasthttp.Response {
	t.Helper()
	c, err := f.ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return readResponse(t, c, req)
}

func readResponse(t testing.TB, c net.Conn, req string) *fasthttp.Response {
	t.Helper()
	resp, err := roundTrip(c, req)
	if err != nil {
		t.Fatalf("%q: %v", firstLine(req), err)
	}
	return resp
}

// roundTrip writes req on c and reads one response. Safe in any goroutine.
func roundTrip(c net.Conn, req string) (*fasthttp.Response, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		return nil, err
	}
	resp := &fasthttp.Response{}
	resp.SkipBody = strings.HasPrefix(req, "HEAD ")
	if err := resp.Read(bufio.NewReader(c)); err != nil {
		return nil, err
	}
	return resp, nil
}

func firstLine(s string) string {
	if i := strings.Index(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// get sends "GET target HTTP/1.1".
func (f *fixture) get(t testing.TB, target string) *fasthttp.Response {
	t.Helper()
	return f.raw(t, "GET "+target+" HTTP/1.1\r\nHost: resolver.test\r\n\r\n")
}

func (f *fixture) key(t testing.TB, h string) string {
	t.Helper()
	k, _, err := f.namer.Key(h)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// record returns the fixture record with handle h.
func record(t testing.TB, h string) handlev.Record {
	t.Helper()
	for _, r := range testRecords() {
		if r.Handle == h {
			return r
		}
	}
	t.Fatalf("no fixture record %q", h)
	return handlev.Record{}
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./resolver -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./resolver -update and review the diff)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func newTCPListener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// memConn is an in-memory net.Conn: requests are read from r, responses
// written to w (as fasthttp's own allocation_test.go does).
type memConn struct {
	r, w bytes.Buffer
}

func (c *memConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *memConn) Write(b []byte) (int, error)      { return c.w.Write(b) }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return memAddr }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

var memAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4242}
