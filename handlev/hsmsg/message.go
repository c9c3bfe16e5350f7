package hsmsg

import (
	"encoding/binary"
	"time"
)

// Sizes and limits (docs/handle-protocol.md §3.1, §3.2).
const (
	EnvelopeLen   = 20                         // bytes of the message envelope
	HeaderLen     = 24                         // bytes of the message header
	MaxMessageLen = 262144                     // largest MessageLength (and any int4 length) accepted
	MaxUDPPacket  = 512                        // bytes per datagram
	MaxUDPPayload = MaxUDPPacket - EnvelopeLen // 492 message bytes per datagram
	MaxHandleLen  = 2048                       // clients cap the handle at 2048 bytes
	MaxValues     = 2048                       // clients cap the value count at 2048
	MaxFilters    = 2048                       // largest index or type list accepted in a request
	MaxAttributes = 1024                       // largest attribute or server count in HS_SITE data
)

// Protocol version this package speaks.
const (
	MajorVersion = 2
	MinorVersion = 11
)

// ExpirationWindow is how far ahead replies set ExpirationTime (the Java client's
// own default for messages; docs/handle-protocol.md §3.2).
const ExpirationWindow = 12 * time.Hour

// OpCodes (docs/handle-protocol.md §3.2).
const (
	OpResolution  uint32 = 1
	OpGetSiteInfo uint32 = 2
)

// Response codes (docs/handle-protocol.md §3.2). The Java client throws on codes outside
// its list; use these.
const (
	RCReserved              uint32 = 0 // requests
	RCSuccess               uint32 = 1
	RCError                 uint32 = 2
	RCServerTooBusy         uint32 = 3
	RCProtocolError         uint32 = 4
	RCOperationNotSupported uint32 = 5
	RCRecursionCountTooHigh uint32 = 6
	RCHandleNotFound        uint32 = 100
	RCInvalidHandle         uint32 = 102
	RCValuesNotFound        uint32 = 200
	RCServerNotResp         uint32 = 301
)

// OpFlag bits (docs/handle-protocol.md §3.2).
const (
	FlagAT   uint32 = 0x80000000 // authoritative
	FlagCT   uint32 = 0x40000000 // certify: sign the reply
	FlagENC  uint32 = 0x20000000 // encrypt the reply
	FlagREC  uint32 = 0x10000000 // recursive
	FlagCA   uint32 = 0x08000000 // cache-certify
	FlagCN   uint32 = 0x04000000 // continuous
	FlagKC   uint32 = 0x02000000 // keep connection alive
	FlagPO   uint32 = 0x01000000 // public values only
	FlagRD   uint32 = 0x00800000 // return request digest
	FlagOVRW uint32 = 0x00400000 // overwrite (CNRI)
	FlagMINT uint32 = 0x00200000 // mint suffix (CNRI)
	FlagDNRF uint32 = 0x00100000 // do not refer (CNRI)

	// FlagsEchoed are the request flags a reply copies (AbstractResponse.takeValuesFrom).
	FlagsEchoed = FlagCT | FlagCA | FlagAT | FlagENC | FlagPO | FlagDNRF | FlagRD
	// FlagsJava is what the stock Java client sends with a resolution request.
	FlagsJava = FlagREC | FlagCA | FlagPO
)

// Envelope flag bits (byte 2, high bits).
const (
	EnvCompressed uint8 = 0x80
	EnvEncrypted  uint8 = 0x40
	EnvTruncated  uint8 = 0x20
)

// SerialUnknown is the SiteInfoSerialNumber meaning "unknown" (int2 -1).
const SerialUnknown uint16 = 0xFFFF

// Envelope is the 20-byte message envelope. SuggestMajor/SuggestMinor are as on the
// wire: 0 in both means "same as Major.Minor" (see Suggested).
type Envelope struct {
	Major, Minor               uint8
	Flags                      uint8 // EnvCompressed | EnvEncrypted | EnvTruncated
	SuggestMajor, SuggestMinor uint8 // SuggestMajor uses the low 2 bits of byte 2
	SessionID                  uint32
	RequestID                  uint32
	SequenceNumber             uint32
	MessageLength              uint32
}

// Truncated reports whether the TC flag is set (message spans several datagrams).
func (e *Envelope) Truncated() bool { return e.Flags&EnvTruncated != 0 }

// Suggested returns the protocol version the sender suggests: the envelope's
// suggested version, or its actual version when the suggestion is 0.
func (e *Envelope) Suggested() (major, minor uint8) {
	if e.SuggestMajor == 0 {
		return e.Major, e.Minor
	}
	return e.SuggestMajor, e.SuggestMinor
}

// AppendEnvelope appends the 20-byte encoding of e.
func AppendEnvelope(dst []byte, e *Envelope) []byte {
	dst = append(dst, e.Major, e.Minor, e.Flags&0xE0|e.SuggestMajor&0x03, e.SuggestMinor)
	dst = appendU32(dst, e.SessionID)
	dst = appendU32(dst, e.RequestID)
	dst = appendU32(dst, e.SequenceNumber)
	return appendU32(dst, e.MessageLength)
}

// ParseEnvelope decodes the first 20 bytes of b. A MessageLength that is negative or
// above MaxMessageLen is an error (docs/handle-protocol.md §3.1).
func ParseEnvelope(b []byte) (Envelope, error) {
	if len(b) < EnvelopeLen {
		return Envelope{}, ferr(len(b), "envelope", ErrTruncated)
	}
	e := Envelope{
		Major:          b[0],
		Minor:          b[1],
		Flags:          b[2] & 0xE0,
		SuggestMajor:   b[2] & 0x03,
		SuggestMinor:   b[3],
		SessionID:      binary.BigEndian.Uint32(b[4:]),
		RequestID:      binary.BigEndian.Uint32(b[8:]),
		SequenceNumber: binary.BigEndian.Uint32(b[12:]),
		MessageLength:  binary.BigEndian.Uint32(b[16:]),
	}
	if int32(e.MessageLength) < 0 {
		return e, ferr(16, "envelope message length", ErrNegativeLength)
	}
	if e.MessageLength > MaxMessageLen {
		return e, ferr(16, "envelope message length", ErrTooLong)
	}
	return e, nil
}

// Header is the 24-byte message header.
type Header struct {
	OpCode         uint32
	ResponseCode   uint32
	OpFlag         uint32
	SiteInfoSerial uint16
	RecursionCount uint8
	Expiration     uint32 // unix seconds
	BodyLength     uint32
}

// AppendHeader appends the 24-byte encoding of h.
func AppendHeader(dst []byte, h *Header) []byte {
	dst = appendU32(dst, h.OpCode)
	dst = appendU32(dst, h.ResponseCode)
	dst = appendU32(dst, h.OpFlag)
	dst = appendU16(dst, h.SiteInfoSerial)
	dst = append(dst, h.RecursionCount, 0)
	dst = appendU32(dst, h.Expiration)
	return appendU32(dst, h.BodyLength)
}

// ParseHeader decodes the first 24 bytes of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, ferr(len(b), "header", ErrTruncated)
	}
	h := Header{
		OpCode:         binary.BigEndian.Uint32(b[0:]),
		ResponseCode:   binary.BigEndian.Uint32(b[4:]),
		OpFlag:         binary.BigEndian.Uint32(b[8:]),
		SiteInfoSerial: binary.BigEndian.Uint16(b[12:]),
		RecursionCount: b[14],
		Expiration:     binary.BigEndian.Uint32(b[16:]),
		BodyLength:     binary.BigEndian.Uint32(b[20:]),
	}
	if int32(h.BodyLength) < 0 {
		return h, ferr(20, "header body length", ErrNegativeLength)
	}
	if h.BodyLength > MaxMessageLen {
		return h, ferr(20, "header body length", ErrTooLong)
	}
	return h, nil
}

// SetBodyLength patches the BodyLength field of an encoded header at msg[0:24].
func SetBodyLength(msg []byte, n int) { binary.BigEndian.PutUint32(msg[20:], uint32(n)) }

// Message is one decoded message (the bytes after the envelope). Body and
// Credential alias the input; Signed is header+body, the bytes request digests and
// signatures cover.
type Message struct {
	Header     Header
	Body       []byte
	Credential []byte // credential bytes without their int4 length; nil when absent or empty
	Signed     []byte // header + body
}

// ParseMessage decodes msg = header | body | [int4 credential length + credential].
// A message that ends right after the body has no credential (older peers omit the
// trailer); anything after the credential is ErrTrailingData.
func ParseMessage(msg []byte) (Message, error) {
	h, err := ParseHeader(msg)
	if err != nil {
		return Message{}, err
	}
	end := HeaderLen + int(h.BodyLength)
	if end > len(msg) {
		return Message{}, ferr(20, "header body length", ErrTruncated)
	}
	m := Message{Header: h, Body: msg[HeaderLen:end:end], Signed: msg[:end:end]}
	if end == len(msg) {
		return m, nil
	}
	r := reader{b: msg, off: end}
	cred, err := r.bytes("credential length", MaxMessageLen)
	if err != nil {
		return Message{}, err
	}
	if r.remaining() != 0 {
		return Message{}, ferr(r.off, "message end", ErrTrailingData)
	}
	if len(cred) > 0 {
		m.Credential = cred
	}
	return m, nil
}
