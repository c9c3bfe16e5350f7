package hdl_test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/resolver/hdl"
)

// Reference vectors for successful and signed native replies, assembled here
// field by field from the layout of RFC 3651 (HandleValue) and RFC 3652
// (envelope, header, bodies, credential) as docs/handle-protocol.md §3
// describes it. Nothing in this file encodes with pidnode's own code: the
// requests are hand-assembled too, the request digest and the signature's hash
// are computed with crypto/sha256, and the signature is checked with
// crypto/rsa. Only the ExpirationTime (now+12h, checked against the clock) and
// the RSA signature bytes (checked with the public key) are taken from the
// reply; every other byte must be the vector's.

// be is a tiny big-endian writer for the vectors.
type be []byte

func (b be) u8(v uint8) be   { return append(b, v) }
func (b be) u16(v uint16) be { return binary.BigEndian.AppendUint16(b, v) }
func (b be) u32(v uint32) be { return binary.BigEndian.AppendUint32(b, v) }

// str is an RFC 3652 UTF8-String: int4 byte count, then the bytes.
func (b be) str(s string) be { return append(b.u32(uint32(len(s))), s...) }
func (b be) raw(p []byte) be { return append(b, p...) }

const (
	vecSerial    = 7      // the site's HS_SITE serial number, echoed in every reply header
	vecRequestID = 0x5EC7 // echoed in the reply envelope
	vecStamp     = 1700000000
)

// vecRecord: two public values and one an anonymous client must not see.
func vecRecord(values int) handlev.Record {
	r := handlev.Record{Handle: "20.500.1/VEC"}
	for i := 1; i <= values; i++ {
		data := "https://example.org/vector/" + strings.Repeat("x", i)
		r.Values = append(r.Values, handlev.Value{Index: int32(i), Type: "URL", Data: []byte(data), TTL: 86400, Perm: handlev.PermDefault, Timestamp: vecStamp})
	}
	r.Values = append(r.Values, handlev.Value{Index: 90, Type: "EMAIL", Data: []byte("pid@example.org"), TTL: 3600, Perm: handlev.PermDefault, Timestamp: vecStamp})
	r.Values = append(r.Values, handlev.Value{Index: 91, Type: "SECRET", Data: []byte("hidden"), TTL: 3600, Perm: handlev.PermAdminRead | handlev.PermAdminWrite, Timestamp: vecStamp})
	return r
}

// vecValues is the reply's value list for vecRecord(values): int4 count, then each
// public HandleValue (RFC 3651 §3.1 as docs/handle-protocol.md §3.4 lays it out).
func vecValues(values int) be {
	b := be{}.u32(uint32(values + 1)) // SECRET (admin read only) is left out
	for i := 1; i <= values; i++ {
		b = b.u32(uint32(i)). // Index
					u32(vecStamp).                                               // Timestamp, 4 bytes
					u8(0).                                                       // TTLType: relative
					u32(86400).                                                  // TTL
					u8(0x0E).                                                    // Permission: admin read | admin write | public read
					str("URL").                                                  // Type
					str("https://example.org/vector/" + strings.Repeat("x", i)). // Data
					u32(0)                                                       // no references
	}
	return b.u32(90).u32(vecStamp).u8(0).u32(3600).u8(0x0E).str("EMAIL").str("pid@example.org").u32(0)
}

// vecRequest is a RESOLUTION request for 20.500.1/VEC with every value asked for,
// as the Java client 2.10 suggesting 2.11 sends it: envelope, then the message.
// It returns the datagram/stream bytes and the request's header+body (what a
// request digest covers).
func vecRequest(opFlag uint32) (wire, headerBody []byte) {
	body := be{}.
		str("20.500.1/VEC"). // Handle
		u32(0).              // no indexes
		u32(0)               // no types
	hb := be{}.
		u32(1).      // OpCode RESOLUTION
		u32(0).      // ResponseCode: 0 in a request
		u32(opFlag). // OpFlag
		u16(0xFFFF). // SiteInfoSerialNumber: unknown
		u8(0).       // RecursionCount
		u8(0).       // reserved
		u32(0).      // ExpirationTime
		u32(uint32(len(body))).
		raw(body)
	msg := be(append([]byte(nil), hb...)).u32(0) // no credential
	env := be{}.
		u8(2).u8(10). // version 2.10
		u8(2).u8(11). // no CP/EC/TC; suggests 2.11
		u32(0).       // SessionId
		u32(vecRequestID).
		u32(0). // SequenceNumber
		u32(uint32(len(msg)))
	return env.raw(msg), hb
}

// vecHeader is a reply header: RESOLUTION, RC 1, the given flags, the site's
// serial, no recursion, ExpirationTime exp, and the body length.
func vecHeader(opFlag, exp uint32, bodyLen int) be {
	return be{}.u32(1).u32(1).u32(opFlag).u16(vecSerial).u8(0).u8(0).u32(exp).u32(uint32(bodyLen))
}

// vecEnvelope is the reply envelope: version 2.11 (the client's suggestion),
// suggesting 2.11, the echoed request id, piece seq of a message of msgLen bytes
// (TC, 0x20, when the message spans several datagrams).
func vecEnvelope(tc bool, seq uint32, msgLen int) be {
	flags := uint8(0x02) // suggested major in the low two bits
	if tc {
		flags |= 0x20
	}
	return be{}.u8(2).u8(11).u8(flags).u8(11).u32(0).u32(vecRequestID).u32(seq).u32(uint32(msgLen))
}

// exchangeRaw sends wire over TCP or UDP and returns the reply's datagrams (UDP)
// or its envelope+message (TCP, as one element). UDP collects datagrams until
// their envelopes' MessageLength is covered.
func exchangeRaw(t *testing.T, addr string, udp bool, wire []byte) [][]byte {
	t.Helper()
	network := "tcp"
	if udp {
		network = "udp"
	}
	conn, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(wire); err != nil {
		t.Fatal(err)
	}
	if !udp {
		env := make([]byte, 20)
		if _, err := io.ReadFull(conn, env); err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, binary.BigEndian.Uint32(env[16:20]))
		if _, err := io.ReadFull(conn, msg); err != nil {
			t.Fatal(err)
		}
		return [][]byte{append(env, msg...)}
	}
	var out [][]byte
	got := 0
	for {
		buf := make([]byte, 2048)
		k, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("after %d datagrams: %v", len(out), err)
		}
		if k < 20 {
			t.Fatalf("datagram of %d bytes", k)
		}
		out = append(out, buf[:k])
		got += k - 20
		if got >= int(binary.BigEndian.Uint32(buf[16:20])) {
			return out
		}
	}
}

// replyExpiration reads the ExpirationTime of a reply message (header bytes
// 16–19) and checks that it is 12 hours ahead.
func replyExpiration(t *testing.T, msg []byte, before time.Time) uint32 {
	t.Helper()
	if len(msg) < 24 {
		t.Fatalf("reply message of %d bytes", len(msg))
	}
	exp := binary.BigEndian.Uint32(msg[16:20])
	at := time.Unix(int64(exp), 0)
	if lo, hi := before.Add(12*time.Hour-2*time.Second), time.Now().Add(12*time.Hour+2*time.Second); at.Before(lo) || at.After(hi) {
		t.Fatalf("ExpirationTime %v not 12h ahead of %v", at, before)
	}
	return exp
}

func diffBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; first difference at byte %d\n got %x\nwant %x", what, len(got), len(want), i, got, want)
}

func vecNode(t *testing.T, key *rsa.PrivateKey, values int) *node {
	return startSiteNode(t, hdl.SiteConfig{Serial: vecSerial, Description: "vector"}, key, vecRecord(values))
}

// TestReplyVectorRC1: an RC 1 resolution reply over TCP and in one UDP
// datagram, without and with RD (RequestDigest: algorithm 3, SHA-256, for a
// 2.11 reply, over the request's header and body).
func TestReplyVectorRC1(t *testing.T) {
	n := vecNode(t, nil, 2)
	const javaFlags = 0x19000000 // REC | CA | PO
	for _, rd := range []bool{false, true} {
		for _, udp := range []bool{false, true} {
			flags := uint32(javaFlags)
			if rd {
				flags |= 0x00800000
			}
			wire, reqHB := vecRequest(flags)
			before := time.Now()
			got := exchangeRaw(t, n.addr, udp, wire)
			if len(got) != 1 {
				t.Fatalf("rd=%v udp=%v: %d datagrams, want 1", rd, udp, len(got))
			}
			exp := replyExpiration(t, got[0][20:], before)

			body := be{}
			// Reply flags: AT (primary site) | REC | CA | PO, and RD echoed.
			replyFlags := uint32(0x99000000)
			if rd {
				d := sha256.Sum256(reqHB)
				body = body.u8(3).raw(d[:]) // RequestDigest: SHA-256
				replyFlags |= 0x00800000
			}
			body = body.str("20.500.1/VEC").raw(vecValues(2))
			msg := vecHeader(replyFlags, exp, len(body)).raw(body).u32(0) // no credential
			want := vecEnvelope(false, 0, len(msg)).raw(msg)
			diffBytes(t, "rd="+boolStr(rd)+" udp="+boolStr(udp), got[0], want)
		}
	}
}

// TestReplyVectorFragments: a reply longer than one datagram goes out as
// 492-byte pieces, each behind the whole envelope with TC, the piece's number
// and the whole message's length; concatenated, the pieces are the vector.
func TestReplyVectorFragments(t *testing.T) {
	const values = 12
	n := vecNode(t, nil, values)
	wire, _ := vecRequest(0x19000000)
	body := be{}.str("20.500.1/VEC").raw(vecValues(values))
	msgLen := 24 + len(body) + 4
	if msgLen <= 492 || msgLen > 3*492 {
		t.Fatalf("vector message of %d bytes does not cross a fragment boundary", msgLen)
	}
	before := time.Now()
	got := exchangeRaw(t, n.addr, true, wire)
	pieces := (msgLen + 491) / 492
	if len(got) != pieces {
		t.Fatalf("%d datagrams, want %d", len(got), pieces)
	}
	// Datagrams may arrive in any order: place each by its SequenceNumber.
	bySeq := make([][]byte, pieces)
	for _, d := range got {
		seq := binary.BigEndian.Uint32(d[12:16])
		if int(seq) >= pieces || bySeq[seq] != nil {
			t.Fatalf("piece with SequenceNumber %d", seq)
		}
		bySeq[seq] = d
	}
	exp := replyExpiration(t, bySeq[0][20:], before)
	msg := vecHeader(0x99000000, exp, len(body)).raw(body).u32(0)
	for i := 0; i < pieces; i++ {
		lo, hi := i*492, min((i+1)*492, len(msg))
		want := vecEnvelope(true, uint32(i), len(msg)).raw(msg[lo:hi])
		diffBytes(t, "piece "+string(rune('0'+i)), bySeq[i], want)
	}
}

// TestReplyVectorSigned: a reply to a certified (CT) request carries an
// HS_SIGNED credential (RFC 3652 §2.2.4): version 0, reserved 0, options 0,
// signer handle (empty) and index 0, type "HS_SIGNED", then the signed data:
// its length, the digest algorithm "SHA-256" and the RSA PKCS #1 v1.5
// signature. The signature is checked with crypto/rsa against the node's
// public key over the hand-assembled header+body, preceded by the envelope
// fields a 2.7+ signer covers (CNRI's AbstractMessage.signMessage: major,
// minor, suggested major and minor from 2.8, SessionId, RequestId, a session
// counter of 0); every other byte is compared with the vector.
func TestReplyVectorSigned(t *testing.T) {
	key := signKey(t)
	n := vecNode(t, key, 2)
	for _, udp := range []bool{false, true} {
		wire, reqHB := vecRequest(0x19000000 | 0x40000000 | 0x00800000) // Java flags | CT | RD
		before := time.Now()
		got := exchangeRaw(t, n.addr, udp, wire)
		var whole []byte
		if udp {
			// 256 signature bytes push the reply past one datagram: reassemble.
			bySeq := map[uint32][]byte{}
			for _, d := range got {
				bySeq[binary.BigEndian.Uint32(d[12:16])] = d
			}
			if bySeq[0] == nil {
				t.Fatalf("no piece 0 among %d datagrams", len(got))
			}
			whole = append([]byte(nil), bySeq[0][:20]...)
			for i := 0; i < len(got); i++ {
				whole = append(whole, bySeq[uint32(i)][20:]...)
			}
		} else {
			whole = got[0]
		}
		msgGot := whole[20:]
		exp := replyExpiration(t, msgGot, before)

		d := sha256.Sum256(reqHB)
		body := be{}.u8(3).raw(d[:]).str("20.500.1/VEC").raw(vecValues(2))
		// AT | CT | REC | CA | PO | RD
		headerBody := vecHeader(0xD9800000, exp, len(body)).raw(body)

		const sigLen = 256 // RSA-2048
		cred := be{}.
			u8(0).   // CredentialVersion
			u8(0).   // Reserved
			u16(0).  // Options
			str(""). // Signer: handle (none: the server's own key)
			u32(0).  // Signer: index
			str("HS_SIGNED").
			u32(uint32(4 + len("SHA-256") + 4 + sigLen)). // signed data length
			str("SHA-256").                               // digest algorithm
			u32(sigLen)                                   // signature length; the signature follows
		sigAt := 20 + len(headerBody) + 4 + len(cred)
		if len(whole) != sigAt+sigLen {
			t.Fatalf("udp=%v: reply of %d bytes, want %d", udp, len(whole), sigAt+sigLen)
		}
		sig := whole[sigAt:]
		msg := be(append([]byte(nil), headerBody...)).u32(uint32(len(cred) + sigLen)).raw(cred).raw(sig)
		tc := udp && len(msg) > 492
		want := vecEnvelope(tc, 0, len(msg)).raw(msg)
		if udp {
			// The reassembled reply carries piece 0's envelope.
			diffBytes(t, "signed udp", whole, want)
		} else {
			diffBytes(t, "signed tcp", whole, want)
		}

		prefix := be{}.u8(2).u8(11).u8(2).u8(11).u32(0).u32(vecRequestID).u32(0)
		h := sha256.New()
		h.Write(prefix)
		h.Write(headerBody)
		if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, h.Sum(nil), sig); err != nil {
			t.Errorf("udp=%v: signature over the hand-assembled header+body: %v", udp, err)
		}
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
