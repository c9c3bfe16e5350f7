package hdl_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

func signKey(t testing.TB) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		testKey = k
	})
	return testKey
}

func records() []handlev.Record {
	small := handlev.Record{Handle: "20.500.1/SMALL", Values: []handlev.Value{
		val(1, "URL", "https://example.org/small"),
		val(2, "EMAIL", "pid@example.org"),
		val(3, "URL.jp", "https://example.jp/"),
		val(4, "SECRET", "admin eyes only"),
		{Index: 100, Type: "HS_ADMIN", Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/20.500.1", Index: 200}), TTL: 86400, Perm: handlev.PermDefault},
	}}
	small.Values[3].Perm = handlev.PermAdminRead | handlev.PermAdminWrite
	big := handlev.Record{Handle: "20.500.1/BIG"}
	for i := int32(1); i <= 30; i++ {
		big.Values = append(big.Values, val(i, "URL", fmt.Sprintf("https://example.org/a/fairly/long/path/%03d", i)))
	}
	secret := handlev.Record{Handle: "20.500.1/SECRET", Values: []handlev.Value{val(1, "SECRET", "x")}}
	secret.Values[0].Perm = handlev.PermAdminRead
	submitted := handlev.Record{Handle: "21.T11148/svc/TEST/0001", Values: []handlev.Value{
		val(1, "URL", "https://example.org/draft"), val(2, "STATUS", "SUBMITTED")}}
	registered := handlev.Record{Handle: "21.T11148/svc/TEST/0002", Values: []handlev.Value{
		val(1, "URL", "https://example.org/registered"), val(2, "STATUS", "REGISTERED")}}
	return []handlev.Record{small, big, secret, submitted, registered}
}

func indexes(vs []handlev.Value) []int32 {
	var out []int32
	for _, v := range vs {
		out = append(out, v.Index)
	}
	return out
}

func TestResolve(t *testing.T) {
	n := startNode(t, nil, records()...)
	tests := []struct {
		name    string
		handle  string
		idx     []int32
		types   []string
		flags   uint32
		rc      uint32
		wantIdx []int32
	}{
		{"all public values", "20.500.1/SMALL", nil, nil, 0, 1, []int32{1, 2, 3, 100}},
		{"case-insensitive handle", "20.500.1/small", nil, nil, 0, 1, []int32{1, 2, 3, 100}},
		{"without PO restricted values stay out", "20.500.1/SMALL", nil, nil, hsmsg.FlagREC | hsmsg.FlagCA, 1, []int32{1, 2, 3, 100}},
		{"index filter", "20.500.1/SMALL", []int32{2}, nil, 0, 1, []int32{2}},
		{"exact type filter", "20.500.1/SMALL", nil, []string{"url"}, 0, 1, []int32{1}},
		{"subtype filter", "20.500.1/SMALL", nil, []string{"URL."}, 0, 1, []int32{1, 3}},
		{"index or type", "20.500.1/SMALL", []int32{2}, []string{"HS_ADMIN"}, 0, 1, []int32{2, 100}},
		{"restricted index asked", "20.500.1/SMALL", []int32{4}, nil, 0, 200, nil},
		{"filter matches nothing", "20.500.1/SMALL", []int32{77}, []string{"NOPE"}, 0, 200, nil},
		{"only restricted values", "20.500.1/SECRET", nil, nil, 0, 200, nil},
		{"big record", "20.500.1/BIG", nil, nil, 0, 1, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30}},
		{"big record filtered", "20.500.1/BIG", []int32{30, 1}, nil, 0, 1, []int32{1, 30}},
		{"unknown handle", "20.500.1/NOPE", nil, nil, 0, 100, nil},
		{"prefix not served", "99.999/X", nil, nil, 0, 301, nil},
		{"no slash, 0.NA not served", "nohandle", nil, nil, 0, 301, nil},
		{"control byte", "20.500.1/a\x01b", nil, nil, 0, 102, nil},
		{"submitted is not public", "21.T11148/svc/TEST/0001", nil, nil, 0, 100, nil},
		{"registered", "21.T11148/svc/TEST/0002", nil, nil, 0, 1, []int32{1, 2}},
		{"registered by short form", "21.T11148/TEST/0002", nil, nil, 0, 1, []int32{1, 2}},
	}
	for _, udp := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("udp=%v/%s", udp, tc.name), func(t *testing.T) {
				rep, err := n.client(udp).Resolve(context.Background(), tc.handle, tc.idx, tc.types, tc.flags)
				if err != nil {
					t.Fatal(err)
				}
				if rc := rep.Header.ResponseCode; rc != tc.rc {
					t.Fatalf("Resolve(%q) RC = %d (%q), want %d", tc.handle, rc, rep.ErrorMessage, tc.rc)
				}
				if tc.rc != 1 {
					return
				}
				if string(rep.Handle) != tc.handle {
					t.Errorf("reply handle = %q, want the request's %q", rep.Handle, tc.handle)
				}
				got := indexes(rep.Values)
				slices.Sort(got)
				if !slices.Equal(got, tc.wantIdx) {
					t.Errorf("Resolve(%q, %v, %v) indexes = %v, want %v", tc.handle, tc.idx, tc.types, got, tc.wantIdx)
				}
			})
		}
	}
}

// The RC 301 reply for a handle under a prefix the node does not serve
// (docs/handle-protocol.md §3.5), byte for byte around the ExpirationTime: its
// message is the reference server's "That prefix doesn't live here", the words
// pidnode's HTTP API uses for the same case.
func TestSpecVectorRC301(t *testing.T) {
	n := startNode(t, nil)
	want := "00000001 0000012D 99000000 0001 00 00 XXXXXXXX 00000021 | 0000001D 546861742070726566697820646F65736E2774206C6976652068657265 | 00000000"
	want = strings.NewReplacer(" ", "", "|", "").Replace(want)
	for _, udp := range []bool{false, true} {
		rep, err := n.client(udp).Resolve(context.Background(), "99.999/X", nil, nil, hsmsg.FlagsJava)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ToUpper(hex.EncodeToString(rep.Raw))
		if len(got) != len(want) || got[:32] != want[:32] || got[40:] != want[40:] {
			t.Errorf("udp=%v reply = %s, want %s", udp, got, want)
		}
	}
}

// The RC 100 reply to the docs/handle-protocol.md §3.5 request for 123/abc, byte for byte around the
// ExpirationTime, over both transports. The header carries what a CNRI
// server's does (RFC 3652 §2.2.2): the node's site serial number (1 by
// default) rather than the request's "unknown" 0xFFFF, and AT (0x80000000)
// beside the echoed REC|CA|PO, since the node's site is primary.
func TestSpecVectorRC100(t *testing.T) {
	n := startNode(t, nil)
	want := "00000001 00000064 99000000 0001 00 00 XXXXXXXX 00000004 00000000 00000000"
	want = strings.ReplaceAll(want, " ", "")
	for _, udp := range []bool{false, true} {
		before := time.Now()
		rep, err := n.client(udp).Resolve(context.Background(), "123/abc", nil, nil, hsmsg.FlagsJava)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ToUpper(hex.EncodeToString(rep.Raw))
		if len(got) != len(want) || got[:32] != want[:32] || got[40:] != want[40:] {
			t.Errorf("udp=%v reply = %s, want %s", udp, got, want)
		}
		exp := time.Unix(int64(rep.Header.Expiration), 0)
		if lo, hi := before.Add(12*time.Hour-2*time.Second), time.Now().Add(12*time.Hour+2*time.Second); exp.Before(lo) || exp.After(hi) {
			t.Errorf("expiration %v not 12h ahead", exp)
		}
	}
}

func TestEnvelopeAndFlagEcho(t *testing.T) {
	n := startNode(t, nil, records()...)
	tests := []struct {
		name                   string
		major, minor, sMa, sMi uint8
		wantMa, wantMi         uint8
	}{
		{"java 2.10 suggesting 2.11", 2, 10, 2, 11, 2, 11},
		{"suggests newer", 2, 11, 2, 14, 2, 11},
		{"old client", 2, 5, 2, 6, 2, 6},
		{"no suggestion", 2, 3, 0, 0, 2, 3},
		{"major 3", 3, 0, 3, 0, 2, 11},
	}
	flags := hsmsg.FlagsJava | hsmsg.FlagAT | hsmsg.FlagENC | hsmsg.FlagDNRF | hsmsg.FlagKC | hsmsg.FlagCN | hsmsg.FlagMINT
	wantFlags := hsmsg.FlagREC | hsmsg.FlagCA | hsmsg.FlagPO | hsmsg.FlagAT | hsmsg.FlagENC | hsmsg.FlagDNRF
	for _, udp := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("udp=%v/%s", udp, tc.name), func(t *testing.T) {
				c := n.client(udp)
				c.Major, c.Minor, c.SuggestMajor, c.SuggestMinor = tc.major, tc.minor, tc.sMa, tc.sMi
				q := hsmsg.AppendResolutionRequest(nil, &hsmsg.ResolutionRequest{Handle: []byte("20.500.1/SMALL")})
				rep, err := c.Do(context.Background(), &hdl.Request{
					Header:    hsmsg.Header{OpCode: 1, OpFlag: flags, SiteInfoSerial: 0xFFFF, RecursionCount: 3},
					Body:      q,
					SessionID: 77,
				})
				if err != nil {
					t.Fatal(err)
				}
				e := rep.Envelope
				if e.Major != tc.wantMa || e.Minor != tc.wantMi || e.SessionID != 77 || e.SuggestMajor != 2 || e.SuggestMinor != 11 {
					t.Errorf("reply envelope %+v, want version %d.%d session 77 suggesting 2.11", e, tc.wantMa, tc.wantMi)
				}
				h := rep.Header
				// SiteInfoSerial is the node's site serial (1 by default), not the request's.
				if h.OpFlag != wantFlags || h.RecursionCount != 3 || h.SiteInfoSerial != 1 || h.OpCode != 1 || h.ResponseCode != 1 {
					t.Errorf("reply header %+v, want flags %08x", h, wantFlags)
				}
			})
		}
	}
}

func TestRequestDigest(t *testing.T) {
	n := startNode(t, nil, records()...)
	tests := []struct {
		name         string
		major, minor uint8
		alg          uint8
	}{
		{"2.11 SHA-256", 2, 11, hsmsg.DigestSHA256},
		{"2.7 SHA-256", 2, 7, hsmsg.DigestSHA256},
		{"2.6 SHA-1", 2, 6, hsmsg.DigestSHA1},
		{"2.1 SHA-1", 2, 1, hsmsg.DigestSHA1},
		{"2.0 MD5", 2, 0, hsmsg.DigestMD5},
	}
	for _, udp := range []bool{false, true} {
		for _, tc := range tests {
			for _, h := range []string{"20.500.1/SMALL", "20.500.1/NOPE", "20.500.1/BIG"} {
				t.Run(fmt.Sprintf("udp=%v/%s/%s", udp, tc.name, h), func(t *testing.T) {
					c := n.client(udp)
					c.Major, c.Minor, c.SuggestMajor, c.SuggestMinor = tc.major, tc.minor, tc.major, tc.minor
					rep, err := c.Resolve(context.Background(), h, nil, nil, hsmsg.FlagsJava|hsmsg.FlagRD)
					if err != nil {
						t.Fatal(err)
					}
					if rep.Digest == nil || rep.Digest.Alg != tc.alg {
						t.Fatalf("digest = %+v, want alg %d", rep.Digest, tc.alg)
					}
					if err := rep.VerifyDigest(); err != nil {
						t.Error(err)
					}
					if rep.Header.OpFlag&hsmsg.FlagRD == 0 {
						t.Error("RD not echoed")
					}
				})
			}
		}
	}
	// Without RD: no digest.
	rep, err := n.client(false).Resolve(context.Background(), "20.500.1/SMALL", nil, nil, 0)
	if err != nil || rep.Digest != nil {
		t.Errorf("no RD: digest %+v, %v", rep.Digest, err)
	}
}

// Fragmented replies: every datagram ≤ 512 bytes with the full envelope, the total
// MessageLength, the piece number and TC; the pieces reassemble to the TCP reply.
func TestUDPFragments(t *testing.T) {
	n := startNode(t, nil, records()...)
	q := hsmsg.AppendResolutionRequest(nil, &hsmsg.ResolutionRequest{Handle: []byte("20.500.1/BIG")})
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava, SiteInfoSerial: 0xFFFF, BodyLength: uint32(len(q))})
	msg = append(append(msg, q...), 0, 0, 0, 0)
	env := hsmsg.Envelope{Major: 2, Minor: 10, SuggestMajor: 2, SuggestMinor: 11, RequestID: 4242, MessageLength: uint32(len(msg))}
	conn, err := net.Dial("udp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write(append(hsmsg.AppendEnvelope(nil, &env), msg...)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	var total uint32
	pieces := map[uint32][]byte{}
	for want := 1; len(pieces) < want; {
		k, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if k > hsmsg.MaxUDPPacket {
			t.Fatalf("datagram of %d bytes", k)
		}
		e, err := hsmsg.ParseEnvelope(buf[:k])
		if err != nil {
			t.Fatal(err)
		}
		if e.RequestID != 4242 || !e.Truncated() || e.Major != 2 || e.Minor != 11 {
			t.Fatalf("piece envelope %+v", e)
		}
		total = e.MessageLength
		want = hsmsg.NumPieces(int(total))
		if want < 2 {
			t.Fatalf("reply of %d bytes is not fragmented", total)
		}
		if int(e.SequenceNumber) < want-1 && k != hsmsg.MaxUDPPacket {
			t.Errorf("piece %d has %d bytes, want 512", e.SequenceNumber, k)
		}
		pieces[e.SequenceNumber] = append([]byte(nil), buf[hsmsg.EnvelopeLen:k]...)
	}
	var whole []byte
	for i := 0; i < len(pieces); i++ {
		whole = append(whole, pieces[uint32(i)]...)
	}
	if len(whole) != int(total) {
		t.Fatalf("assembled %d bytes, MessageLength %d", len(whole), total)
	}
	rep, err := hsmsg.ParseReply(whole)
	if err != nil || len(rep.Values) != 30 {
		t.Fatalf("ParseReply: %d values, %v", len(rep.Values), err)
	}
	tcp, err := n.client(false).Resolve(context.Background(), "20.500.1/BIG", nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Same bytes but for the expiration time.
	if !bytes.Equal(whole[:16], tcp.Raw[:16]) || !bytes.Equal(whole[20:], tcp.Raw[20:]) {
		t.Error("UDP reply differs from the TCP reply")
	}
}

// A request spanning several datagrams (TC) is reassembled, whatever the order of
// its pieces; an incomplete one gets no answer.
func TestUDPMultiDatagramRequest(t *testing.T) {
	n := startNode(t, nil, records()...)
	var types []string
	for i := 0; i < 60; i++ {
		types = append(types, fmt.Sprintf("NOT_A_TYPE_%02d", i))
	}
	types = append(types, "EMAIL")
	rep, err := n.client(true).Resolve(context.Background(), "20.500.1/SMALL", nil, types, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Header.ResponseCode != 1 || !slices.Equal(indexes(rep.Values), []int32{2}) {
		t.Fatalf("RC %d values %v", rep.Header.ResponseCode, indexes(rep.Values))
	}
	if len(rep.ReqSigned) <= hsmsg.MaxUDPPayload {
		t.Fatalf("request of %d bytes fits one datagram", len(rep.ReqSigned))
	}

	// Pieces in reverse order, by hand; then a request missing its last piece.
	q := hsmsg.ResolutionRequest{Handle: []byte("20.500.1/SMALL")}
	for _, ty := range types {
		q.Types = append(q.Types, []byte(ty))
	}
	body := hsmsg.AppendResolutionRequest(nil, &q)
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava, BodyLength: uint32(len(body))})
	msg = append(append(msg, body...), 0, 0, 0, 0)
	conn, err := net.Dial("udp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	env := hsmsg.Envelope{Major: 2, Minor: 11, RequestID: 9}
	for i := hsmsg.NumPieces(len(msg)) - 1; i >= 0; i-- {
		conn.Write(hsmsg.AppendPiece(nil, env, msg, i))
	}
	buf := make([]byte, 1024)
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	k, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	r, err := hsmsg.ParseReply(buf[hsmsg.EnvelopeLen:k])
	if err != nil || r.Header.ResponseCode != 1 {
		t.Fatalf("reversed pieces: %+v %v", r.Header, err)
	}
	env.RequestID = 10
	for i := 0; i < hsmsg.NumPieces(len(msg))-1; i++ {
		conn.Write(hsmsg.AppendPiece(nil, env, msg, i))
	}
	conn.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
	if k, err := conn.Read(buf); err == nil {
		t.Fatalf("incomplete request answered with %d bytes", k)
	}
}

func TestCertified(t *testing.T) {
	t.Run("without key", func(t *testing.T) {
		n := startNode(t, nil, records()...)
		for _, udp := range []bool{false, true} {
			rep, err := n.client(udp).Resolve(context.Background(), "20.500.1/SMALL", nil, nil, hsmsg.FlagsJava|hsmsg.FlagCT)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Header.ResponseCode != hsmsg.RCError || string(rep.ErrorMessage) != "server has no signing key" {
				t.Errorf("RC %d %q, want 2 %q", rep.Header.ResponseCode, rep.ErrorMessage, "server has no signing key")
			}
			if rep.Header.OpFlag&hsmsg.FlagCT != 0 || len(rep.Credential) != 0 {
				t.Error("unsigned reply claims CT")
			}
		}
	})
	t.Run("with key", func(t *testing.T) {
		key := signKey(t)
		n := startNode(t, key, records()...)
		// The client learns the key from the site info, as a real one does.
		si, err := n.client(false).SiteInfo(context.Background(), 0)
		if err != nil || si.Site == nil {
			t.Fatal(err)
		}
		pub, err := hsmsg.ParseRSAPublicKey(si.Site.Servers[0].PublicKey)
		if err != nil || !pub.Equal(&key.PublicKey) {
			t.Fatalf("site public key: %v", err)
		}
		versions := []struct{ ma, mi uint8 }{{2, 10}, {2, 7}, {2, 6}, {2, 5}}
		for _, udp := range []bool{false, true} {
			for _, v := range versions {
				for _, h := range []string{"20.500.1/SMALL", "20.500.1/NOPE", "20.500.1/BIG"} {
					t.Run(fmt.Sprintf("udp=%v/%d.%d/%s", udp, v.ma, v.mi, h), func(t *testing.T) {
						c := n.client(udp)
						c.Major, c.Minor, c.SuggestMajor, c.SuggestMinor = v.ma, v.mi, v.ma, v.mi
						rep, err := c.Resolve(context.Background(), h, nil, nil, hsmsg.FlagsJava|hsmsg.FlagCT|hsmsg.FlagRD)
						if err != nil {
							t.Fatal(err)
						}
						if rep.Header.OpFlag&hsmsg.FlagCT == 0 {
							t.Error("CT not echoed")
						}
						if err := rep.VerifySignature(pub); err != nil {
							t.Errorf("signature: %v", err)
						}
						cred, _ := hsmsg.ParseCredential(rep.Credential)
						wantAlg := "SHA-256"
						if v.mi < 7 {
							wantAlg = "SHA1"
						}
						if string(cred.Type) != "HS_SIGNED" || string(cred.HashAlg) != wantAlg {
							t.Errorf("credential type %q alg %q", cred.Type, cred.HashAlg)
						}
						if err := rep.VerifyDigest(); err != nil {
							t.Error(err)
						}
					})
				}
			}
		}
		// A reply with no CT is unsigned even with a key.
		rep, err := n.client(false).Resolve(context.Background(), "20.500.1/SMALL", nil, nil, 0)
		if err != nil || len(rep.Credential) != 0 {
			t.Errorf("unrequested signature: %d bytes, %v", len(rep.Credential), err)
		}
	})
}

func TestOtherOpcodes(t *testing.T) {
	n := startNode(t, nil, records()...)
	body := []byte{0, 0, 0, 14}
	body = append(body, "20.500.1/SMALL"...)
	for _, udp := range []bool{false, true} {
		for _, op := range []uint32{100, 101, 102, 103, 104, 105, 200, 201, 300, 400, 402, 1000, 1003, 7777} {
			rep, err := n.client(udp).Do(context.Background(), &hdl.Request{Header: hsmsg.Header{OpCode: op, OpFlag: hsmsg.FlagsJava}, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Header.ResponseCode != hsmsg.RCOperationNotSupported || rep.Header.OpCode != op {
				t.Errorf("udp=%v op %d: RC %d op %d", udp, op, rep.Header.ResponseCode, rep.Header.OpCode)
			}
		}
	}
}

func TestMalformedRequest(t *testing.T) {
	n := startNode(t, nil, records()...)
	tests := []struct {
		name string
		body []byte
	}{
		{"truncated handle", []byte{0, 0, 0, 50, 'a'}},
		{"negative index count", append([]byte{0, 0, 0, 1, 'a'}, 0xFF, 0xFF, 0xFF, 0xFF)},
		{"empty body", nil},
	}
	for _, tc := range tests {
		for _, udp := range []bool{false, true} {
			rep, err := n.client(udp).Do(context.Background(), &hdl.Request{Header: hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava | hsmsg.FlagRD}, Body: tc.body})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if rep.Header.ResponseCode != hsmsg.RCProtocolError {
				t.Errorf("%s udp=%v: RC %d, want 4", tc.name, udp, rep.Header.ResponseCode)
			}
		}
	}
	// A header whose BodyLength overruns the message: RC 4, no digest even with RD.
	msg := hsmsg.AppendHeader(nil, &hsmsg.Header{OpCode: 1, OpFlag: hsmsg.FlagsJava | hsmsg.FlagRD, BodyLength: 999})
	msg = append(msg, 0, 0, 0, 0)
	env := hsmsg.Envelope{Major: 2, Minor: 11, RequestID: 31, MessageLength: uint32(len(msg))}
	uc, err := net.Dial("udp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	uc.Write(append(hsmsg.AppendEnvelope(nil, &env), msg...))
	uc.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 512)
	k, err := uc.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	r, err := hsmsg.ParseReply(buf[hsmsg.EnvelopeLen:k])
	if err != nil || r.Header.ResponseCode != hsmsg.RCProtocolError || r.Digest != nil {
		t.Errorf("overrunning body: %+v %v", r.Header, err)
	}

	// Garbage on TCP: the connection is closed without a reply.
	conn, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(bytes.Repeat([]byte{0xFF}, 20))
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if k, err := conn.Read(make([]byte, 64)); err == nil {
		t.Errorf("garbage answered with %d bytes", k)
	}
}

func TestSiteInfo(t *testing.T) {
	n := startNode(t, nil)
	for _, udp := range []bool{false, true} {
		rep, err := n.client(udp).SiteInfo(context.Background(), hsmsg.FlagRD)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Header.ResponseCode != 1 || rep.Site == nil {
			t.Fatalf("RC %d site %v", rep.Header.ResponseCode, rep.Site)
		}
		if err := rep.VerifyDigest(); err != nil {
			t.Error(err)
		}
		s := rep.Site
		port := uint32(n.srvPort(t))
		if s.Major != 2 || s.Minor != 11 || s.Serial != 1 || !s.Primary || len(s.Servers) != 1 ||
			s.Attributes[0] != (hsmsg.Attribute{Name: "desc", Value: "pidnode test"}) {
			t.Errorf("site %+v", s)
		}
		sv := s.Servers[0]
		if sv.Addr().String() != "127.0.0.1" || len(sv.PublicKey) != 0 || len(sv.Interfaces) != 2 ||
			sv.Interfaces[0] != (hsmsg.Interface{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoTCP, Port: port}) ||
			sv.Interfaces[1] != (hsmsg.Interface{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoUDP, Port: port}) {
			t.Errorf("server %+v", sv)
		}
		if !bytes.Equal(rep.Rest, nil) || !bytes.Equal(hsmsg.AppendSite(nil, s), n.srv.Site()) {
			t.Error("site bytes do not round-trip")
		}
	}
}

func (n *node) srvPort(t *testing.T) int {
	_, p, _ := net.SplitHostPort(n.addr)
	var port int
	fmt.Sscan(p, &port)
	return port
}

func TestTCPReadTimeout(t *testing.T) {
	n := startNode(t, nil)
	conn, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte{2, 10}) // then stall
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	if _, err := conn.Read(make([]byte, 8)); err == nil {
		t.Fatal("stalled request answered")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("server kept a stalled connection open past its read timeout")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %v", d)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := hdl.New(hdl.Config{}); err == nil {
		t.Error("New without Cache and Namer succeeded")
	}
}
