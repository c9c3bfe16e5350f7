package hdl

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"pidnode/handlev/hsmsg"
)

// Client is a minimal native-protocol client (pidctl hdl resolve, tests). It sends
// one request per TCP connection or UDP exchange, as the Java client does, and
// reassembles fragmented UDP replies.
type Client struct {
	// Addr is the server's host:port.
	Addr string
	// UDP selects UDP instead of TCP.
	UDP bool
	// Timeout bounds one exchange. If zero, 10s.
	Timeout time.Duration
	// LocalIP, if set, is the address the client sends from (e.g. 127.0.0.2
	// to be another source on loopback).
	LocalIP net.IP
	// Major, Minor is the version the request is sent with and SuggestMajor,
	// SuggestMinor the version it suggests (0 = none, i.e. the same). If Major is
	// zero, the request is sent as 2.10 suggesting 2.11, like the Java client.
	Major, Minor, SuggestMajor, SuggestMinor uint8
}

// Request is one request to send. Body is the encoded body (e.g.
// hsmsg.AppendResolutionRequest); Header.BodyLength and Expiration are filled in.
type Request struct {
	Header    hsmsg.Header
	Body      []byte
	SessionID uint32
}

// Response is a decoded reply with what a caller needs to check it.
type Response struct {
	Envelope hsmsg.Envelope
	hsmsg.Reply
	Raw       []byte // reply message bytes (after the envelope)
	ReqSigned []byte // the request's header+body, what its digest covers
}

// VerifyDigest checks the reply's request digest against the request sent.
func (r *Response) VerifyDigest() error {
	if r.Digest == nil {
		return errors.New("hdl: reply has no request digest")
	}
	want := hsmsg.AppendDigest(nil, r.Digest.Alg, r.ReqSigned)
	if string(want[1:]) != string(r.Digest.Sum) {
		return errors.New("hdl: request digest does not match")
	}
	return nil
}

// VerifySignature checks the reply's HS_SIGNED credential with pub.
func (r *Response) VerifySignature(pub *rsa.PublicKey) error {
	return hsmsg.VerifyCredential(pub, &r.Envelope, r.Signed, r.Credential)
}

// Resolve sends an OC_RESOLUTION request for handle with the given filters and
// OpFlag (0 = hsmsg.FlagsJava).
func (c *Client) Resolve(ctx context.Context, handle string, indexes []int32, types []string, flags uint32) (*Response, error) {
	q := hsmsg.ResolutionRequest{Handle: []byte(handle), Indexes: indexes}
	for _, t := range types {
		q.Types = append(q.Types, []byte(t))
	}
	if flags == 0 {
		flags = hsmsg.FlagsJava
	}
	return c.Do(ctx, &Request{
		Header: hsmsg.Header{OpCode: hsmsg.OpResolution, OpFlag: flags, SiteInfoSerial: hsmsg.SerialUnknown},
		Body:   hsmsg.AppendResolutionRequest(nil, &q),
	})
}

// SiteInfo sends OC_GET_SITE_INFO (body: the handle "/", as the Java client).
func (c *Client) SiteInfo(ctx context.Context, flags uint32) (*Response, error) {
	return c.Do(ctx, &Request{
		Header: hsmsg.Header{OpCode: hsmsg.OpGetSiteInfo, OpFlag: flags, SiteInfoSerial: hsmsg.SerialUnknown},
		Body:   []byte{0, 0, 0, 1, '/'},
	})
}

// Do sends req and returns the decoded reply. A reply whose RequestId differs is
// ErrRequestID.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	h := req.Header
	h.BodyLength = uint32(len(req.Body))
	if h.Expiration == 0 {
		h.Expiration = uint32(time.Now().Add(hsmsg.ExpirationWindow).Unix())
	}
	msg := hsmsg.AppendHeader(nil, &h)
	msg = append(msg, req.Body...)
	signed := msg
	msg = append(msg[:len(msg):len(msg)], 0, 0, 0, 0)
	var idb [4]byte
	rand.Read(idb[:])
	env := hsmsg.Envelope{
		Major: c.Major, Minor: c.Minor, SuggestMajor: c.SuggestMajor, SuggestMinor: c.SuggestMinor,
		SessionID: req.SessionID, RequestID: binary.BigEndian.Uint32(idb[:]) & 0x7FFFFFFF,
		MessageLength: uint32(len(msg)),
	}
	if env.Major == 0 {
		env.Major, env.Minor = hsmsg.MajorVersion, 10
		env.SuggestMajor, env.SuggestMinor = hsmsg.MajorVersion, hsmsg.MinorVersion
	}
	network := "tcp"
	if c.UDP {
		network = "udp"
	}
	var d net.Dialer
	if c.LocalIP != nil {
		if c.UDP {
			d.LocalAddr = &net.UDPAddr{IP: c.LocalIP}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: c.LocalIP}
		}
	}
	conn, err := d.DialContext(ctx, network, c.Addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var renv hsmsg.Envelope
	var raw []byte
	if c.UDP {
		renv, raw, err = exchangeUDP(conn, env, msg)
	} else {
		renv, raw, err = exchangeTCP(conn, env, msg)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hdl: %s %s: %w", network, c.Addr, ctx.Err())
		}
		return nil, err
	}
	if renv.RequestID != env.RequestID {
		return nil, ErrRequestID
	}
	rep, err := hsmsg.ParseReply(raw)
	if err != nil {
		return nil, err
	}
	return &Response{Envelope: renv, Reply: rep, Raw: raw, ReqSigned: signed}, nil
}

func exchangeTCP(conn net.Conn, env hsmsg.Envelope, msg []byte) (hsmsg.Envelope, []byte, error) {
	out := hsmsg.AppendEnvelope(nil, &env)
	if _, err := conn.Write(append(out, msg...)); err != nil {
		return env, nil, err
	}
	var eb [hsmsg.EnvelopeLen]byte
	if _, err := io.ReadFull(conn, eb[:]); err != nil {
		return env, nil, err
	}
	renv, err := hsmsg.ParseEnvelope(eb[:])
	if err != nil {
		return renv, nil, err
	}
	raw := make([]byte, renv.MessageLength)
	_, err = io.ReadFull(conn, raw)
	return renv, raw, err
}

func exchangeUDP(conn net.Conn, env hsmsg.Envelope, msg []byte) (hsmsg.Envelope, []byte, error) {
	for i, k := 0, hsmsg.NumPieces(len(msg)); i < k; i++ {
		if _, err := conn.Write(hsmsg.AppendPiece(nil, env, msg, i)); err != nil {
			return env, nil, err
		}
	}
	buf := make([]byte, 2*hsmsg.MaxUDPPacket)
	var a *hsmsg.Assembly
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return env, nil, err
		}
		renv, err := hsmsg.ParseEnvelope(buf[:n])
		if err != nil || renv.RequestID != env.RequestID {
			continue // not ours
		}
		payload := buf[hsmsg.EnvelopeLen:n]
		if a == nil {
			if !renv.Truncated() && int(renv.MessageLength) == len(payload) {
				return renv, append([]byte(nil), payload...), nil
			}
			a = hsmsg.NewAssembly(renv)
		}
		done, err := a.Add(&renv, payload)
		if err != nil {
			return renv, nil, err
		}
		if done {
			e := a.Envelope
			e.SequenceNumber = 0
			return e, a.Message(), nil
		}
	}
}
