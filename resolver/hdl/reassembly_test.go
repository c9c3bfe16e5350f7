package hdl_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
	"pidnode/store"
)

// startBoundedNode is startNode with MaxPendingBytes set and a ReadTimeout
// long enough that no partial request expires during the test.
func startBoundedNode(t *testing.T, maxPending int, recs ...handlev.Record) *node {
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
	srv, err := hdl.New(hdl.Config{
		Cache: c, Namer: namer,
		Site:            hdl.SiteConfig{Port: tcp.Addr().(*net.TCPAddr).Port, Description: "pidnode test"},
		ReadTimeout:     time.Hour,
		MaxPendingBytes: maxPending,
	})
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
	return &node{srv: srv, addr: tcp.Addr().String(), namer: namer, cache: c, db: db}
}

// TestUDPReassemblyMemoryBound: partial multi-datagram requests hold at most
// MaxPendingBytes. With room for exactly three partial requests (each
// reserves its MessageLength plus 64 bytes), a fourth is dropped whole while
// single-datagram requests are still answered; once one of the three
// completes, its room is free and the next fragmented request is answered.
func TestUDPReassemblyMemoryBound(t *testing.T) {
	// A resolution request of three pieces.
	q := hsmsg.ResolutionRequest{Handle: []byte("20.500.1/SMALL")}
	for i := range 60 {
		q.Types = append(q.Types, fmt.Appendf(nil, "NOT_A_TYPE_%02d", i))
	}
	q.Types = append(q.Types, []byte("EMAIL"))
	body := hsmsg.AppendResolutionRequest(nil, &q)
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava, BodyLength: uint32(len(body))})
	msg = append(append(msg, body...), 0, 0, 0, 0)
	pieces := hsmsg.NumPieces(len(msg))
	if pieces < 3 {
		t.Fatalf("request of %d bytes is %d pieces, want at least 3", len(msg), pieces)
	}
	// Room for three reservations, not four.
	n := startBoundedNode(t, 3*(len(msg)+64)+len(msg)/2, records()...)

	conn, err := net.Dial("udp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(id uint32, from, to int) {
		t.Helper()
		env := hsmsg.Envelope{Major: 2, Minor: 11, RequestID: id, MessageLength: uint32(len(msg))}
		for i := from; i < to; i++ {
			if _, err := conn.Write(hsmsg.AppendPiece(nil, env, msg, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	single := func(id uint32) {
		t.Helper()
		q := hsmsg.ResolutionRequest{Handle: []byte("20.500.1/SMALL")}
		b := hsmsg.AppendResolutionRequest(nil, &q)
		m := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava, BodyLength: uint32(len(b))})
		m = append(append(m, b...), 0, 0, 0, 0)
		env := hsmsg.Envelope{Major: 2, Minor: 11, RequestID: id, MessageLength: uint32(len(m))}
		if _, err := conn.Write(hsmsg.AppendPiece(nil, env, m, 0)); err != nil {
			t.Fatal(err)
		}
	}
	// replies reads until a reply with request id until arrives (waiting as
	// long as a loaded machine may need), then for 300 ms more, and returns
	// the request ids answered with RC 1. A straggler later than that would
	// escape the check, but no slowness can fail it.
	replies := func(until uint32) map[uint32]bool {
		t.Helper()
		got := map[uint32]bool{}
		buf := make([]byte, 64<<10)
		wait := 10 * time.Second
		for {
			conn.SetReadDeadline(time.Now().Add(wait))
			k, err := conn.Read(buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() && got[until] {
					return got
				}
				t.Fatalf("waiting for the reply to request %d (have %v): %v", until, got, err)
			}
			env, err := hsmsg.ParseEnvelope(buf[:k])
			if err != nil {
				t.Fatalf("reply envelope: %v", err)
			}
			if env.Truncated() {
				t.Fatalf("reply to %d is fragmented; this test expects one datagram", env.RequestID)
			}
			r, err := hsmsg.ParseReply(buf[hsmsg.EnvelopeLen:k])
			if err != nil || r.Header.ResponseCode != 1 {
				t.Fatalf("reply to %d: %+v %v", env.RequestID, r.Header, err)
			}
			got[env.RequestID] = true
			if env.RequestID == until {
				wait = 300 * time.Millisecond
			}
		}
	}

	for id := uint32(1); id <= 3; id++ {
		send(id, 0, pieces-1) // all but the last piece: pending
	}
	send(4, 0, pieces) // complete, but there is no room to assemble it
	single(100)
	if got := replies(100); got[1] || got[2] || got[3] || got[4] {
		t.Fatalf("answered %v: with three partial requests pending, want only the single-datagram request 100", got)
	}
	send(1, pieces-1, pieces) // the first completes and frees its room
	if got := replies(1); got[4] {
		t.Fatalf("answered %v: request 4 was assembled although it did not fit", got)
	}
	send(5, 0, pieces)
	if got := replies(5); len(got) != 1 {
		t.Fatalf("answered %v, want request 5 alone", got)
	}
}
