package main

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// TestReplay: a request for a captured handle gets the captured bytes with
// the request's own RequestId (resolver/hdl.Client refuses a reply to
// another request), an unknown handle gets the connection closed.
func TestReplay(t *testing.T) {
	body := hsmsg.AppendErrorBody(nil, "captured")
	h := hsmsg.Header{OpCode: hsmsg.OpResolution, ResponseCode: hsmsg.RCHandleNotFound, OpFlag: hsmsg.FlagsJava, BodyLength: uint32(len(body))}
	msg := append(hsmsg.AppendHeader(nil, &h), body...)
	env := hsmsg.Envelope{Major: 2, Minor: 10, RequestID: 12345, MessageLength: uint32(len(msg))}
	capture := filepath.Join(t.TempDir(), "replies.jsonl")
	line := `{"handle":"21.T1/x","reply":"` + b64(append(hsmsg.AppendEnvelope(nil, &env), msg...)) + `"}` + "\n"
	if err := os.WriteFile(capture, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	replies, err := load(capture)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answer(c, replies)
		}
	}()
	c := &hdl.Client{Addr: ln.Addr().String(), Timeout: 5 * time.Second}
	r, err := c.Resolve(context.Background(), "21.T1/x", nil, nil, 0)
	if err != nil {
		t.Fatalf("Resolve of a captured handle: %v", err)
	}
	if string(r.Raw) != string(msg) || r.Header.ResponseCode != hsmsg.RCHandleNotFound {
		t.Errorf("reply %x, want the captured message %x", r.Raw, msg)
	}
	if _, err := c.Resolve(context.Background(), "21.T1/unknown", nil, nil, 0); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Resolve of an unknown handle: %v, want the connection closed", err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
