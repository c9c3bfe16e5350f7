package hdl_test

import (
	"context"
	"crypto/rsa"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/resolver/hdl"
	"pidnode/store"
)

// node is a real server on 127.0.0.1 (TCP and UDP on the same port) over a cache
// over a bbolt store in t.TempDir().
type node struct {
	srv   *hdl.Server
	addr  string
	namer *handlev.Namer
	cache *cache.Cache
	db    *store.DB
	key   *rsa.PrivateKey
}

func newNamer(t testing.TB) *handlev.Namer {
	t.Helper()
	n, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.11148", TestPrefix: "21.T11148", Extra: []string{"123", "20.500.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func startNode(t testing.TB, key *rsa.PrivateKey, recs ...handlev.Record) *node {
	t.Helper()
	return startSiteNode(t, hdl.SiteConfig{Description: "pidnode test"}, key, recs...)
}

// startSiteNode is startNode with the node's HS_SITE described by site (its
// Port is set to the listeners').
func startSiteNode(t testing.TB, site hdl.SiteConfig, key *rsa.PrivateKey, recs ...handlev.Record) *node {
	t.Helper()
	return startNodeWith(t, func(c *hdl.Config) { c.Site = site; c.SignKey = key }, recs...)
}

// startNodeWith starts a node whose Config mutate may change (the Site's Port
// is set to the listeners').
func startNodeWith(t testing.TB, mutate func(*hdl.Config), recs ...handlev.Record) *node {
	t.Helper()
	namer := newNamer(t)
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pid.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *store.Tx) error {
		for i := range recs {
			k, _, err := namer.Key(recs[i].Handle)
			if err != nil {
				return err
			}
			if err := tx.PutRecord(k, &store.Stored{Record: recs[i], Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(cache.Config{Source: db, Entries: 1000, Alt: namer.AppendAltKey})
	if err != nil {
		t.Fatal(err)
	}
	tcp, udp := listenPair(t)
	cfg := hdl.Config{
		Cache: c, Namer: namer,
		ReadTimeout: 500 * time.Millisecond,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	cfg.Site.Port = tcp.Addr().(*net.TCPAddr).Port
	srv, err := hdl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tcpDone, udpDone := make(chan error, 1), make(chan error, 1)
	go func() { tcpDone <- srv.ServeTCP(tcp) }()
	go func() { udpDone <- srv.ServeUDP(udp) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for _, ch := range []chan error{tcpDone, udpDone} {
			if err := <-ch; !errors.Is(err, hdl.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		}
	})
	return &node{srv: srv, addr: tcp.Addr().String(), namer: namer, cache: c, db: db, key: cfg.SignKey}
}

// listenPair listens on TCP and UDP on the same free loopback port.
func listenPair(t testing.TB) (net.Listener, net.PacketConn) {
	t.Helper()
	for i := 0; i < 20; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			return ln, pc
		}
		ln.Close()
	}
	t.Fatal("no free TCP+UDP port pair")
	return nil, nil
}

func (n *node) client(udp bool) *hdl.Client {
	return &hdl.Client{Addr: n.addr, UDP: udp, Timeout: 3 * time.Second}
}

func val(i int32, typ, data string) handlev.Value {
	return handlev.Value{Index: i, Type: typ, Data: []byte(data), TTL: 86400, Perm: handlev.PermDefault, Timestamp: 1700000000}
}
