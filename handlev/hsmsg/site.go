package hsmsg

import (
	"bytes"
	"crypto/rsa"
	"math/big"
	"net/netip"
)

// HS_SITE constants (docs/handle-protocol.md §3.4, CNRI SiteInfo/Interface).
const (
	SiteDataFormatVersion uint16 = 1

	SitePrimary      uint8 = 0x80
	SiteMultiPrimary uint8 = 0x40

	IfAdmin uint8 = 1 // interface type: administration
	IfQuery uint8 = 2 // interface type: resolution
	IfBoth  uint8 = 3

	ProtoUDP   uint8 = 0
	ProtoTCP   uint8 = 1
	ProtoHTTP  uint8 = 2
	ProtoHTTPS uint8 = 3
)

// Site is the data of an HS_SITE value: one service site and its servers.
type Site struct {
	DataFormatVersion uint16 // 1
	Major, Minor      uint8  // protocol version the site speaks
	Serial            uint16
	Primary           bool
	MultiPrimary      bool
	HashOption        uint8
	HashFilter        []byte
	Attributes        []Attribute
	Servers           []Server
}

// Attribute is one name/value description attribute of a site ("desc" …).
type Attribute struct {
	Name, Value string
}

// Server is one server of a site.
type Server struct {
	ID         uint32
	Address    [16]byte // IPv6, or IPv4 in the last four bytes (see AddrBytes)
	PublicKey  []byte   // HS_PUBKEY encoding (AppendRSAPublicKey), empty when none
	Interfaces []Interface
}

// Interface is one listener of a server.
type Interface struct {
	Type     uint8 // IfAdmin, IfQuery, IfBoth
	Protocol uint8 // ProtoUDP, ProtoTCP, ProtoHTTP, ProtoHTTPS
	Port     uint32
}

// AddrBytes returns the 16-byte address field for a: IPv6 as is, IPv4 right-aligned
// after twelve zero bytes, as CNRI's encoder writes a 4-byte address.
func AddrBytes(a netip.Addr) [16]byte {
	var b [16]byte
	if a.Is4() || a.Is4In6() {
		v4 := a.Unmap().As4()
		copy(b[12:], v4[:])
		return b
	}
	return a.As16()
}

// Addr returns the server's address: IPv4 when the field holds an IPv4 address
// (twelve zero bytes or a v4-mapped prefix before it), IPv6 otherwise.
func (s *Server) Addr() netip.Addr {
	a := netip.AddrFrom16(s.Address)
	var zero [12]byte
	if bytes.Equal(s.Address[:12], zero[:]) && !bytes.Equal(s.Address[12:], zero[:4]) {
		return netip.AddrFrom4([4]byte(s.Address[12:]))
	}
	return a.Unmap()
}

// AppendSite appends the HS_SITE value data of s (CNRI Encoder.encodeSiteInfoRecord).
func AppendSite(dst []byte, s *Site) []byte {
	dst = appendU16(dst, s.DataFormatVersion)
	dst = append(dst, s.Major, s.Minor)
	dst = appendU16(dst, s.Serial)
	var mask uint8
	if s.Primary {
		mask |= SitePrimary
	}
	if s.MultiPrimary {
		mask |= SiteMultiPrimary
	}
	dst = append(dst, mask, s.HashOption)
	dst = appendBytes(dst, s.HashFilter)
	dst = appendU32(dst, uint32(len(s.Attributes)))
	for _, a := range s.Attributes {
		dst = appendString(dst, a.Name)
		dst = appendString(dst, a.Value)
	}
	dst = appendU32(dst, uint32(len(s.Servers)))
	for i := range s.Servers {
		sv := &s.Servers[i]
		dst = appendU32(dst, sv.ID)
		dst = append(dst, sv.Address[:]...)
		dst = appendBytes(dst, sv.PublicKey)
		dst = appendU32(dst, uint32(len(sv.Interfaces)))
		for _, f := range sv.Interfaces {
			dst = append(dst, f.Type, f.Protocol)
			dst = appendU32(dst, f.Port)
		}
	}
	return dst
}

// DecodeSite decodes HS_SITE value data. The result owns its memory. Bytes left
// after the last server are ErrTrailingData, as in the reference decoder.
func DecodeSite(b []byte) (Site, error) {
	r := reader{b: b}
	var s Site
	var err error
	if s.DataFormatVersion, err = r.u16("site data format version"); err != nil {
		return Site{}, err
	}
	if s.Major, err = r.u8("site major version"); err != nil {
		return Site{}, err
	}
	if s.Minor, err = r.u8("site minor version"); err != nil {
		return Site{}, err
	}
	if s.Serial, err = r.u16("site serial number"); err != nil {
		return Site{}, err
	}
	mask, err := r.u8("site primary mask")
	if err != nil {
		return Site{}, err
	}
	s.Primary, s.MultiPrimary = mask&SitePrimary != 0, mask&SiteMultiPrimary != 0
	if s.HashOption, err = r.u8("site hash option"); err != nil {
		return Site{}, err
	}
	hf, err := r.bytes("site hash filter", MaxMessageLen)
	if err != nil {
		return Site{}, err
	}
	s.HashFilter = bytes.Clone(hf)
	n, err := r.length("site attribute count", MaxAttributes)
	if err != nil {
		return Site{}, err
	}
	for i := 0; i < n; i++ {
		name, err := r.bytes("site attribute name", MaxMessageLen)
		if err != nil {
			return Site{}, err
		}
		val, err := r.bytes("site attribute value", MaxMessageLen)
		if err != nil {
			return Site{}, err
		}
		s.Attributes = append(s.Attributes, Attribute{Name: string(name), Value: string(val)})
	}
	n, err = r.length("site server count", MaxAttributes)
	if err != nil {
		return Site{}, err
	}
	for i := 0; i < n; i++ {
		var sv Server
		if sv.ID, err = r.u32("server id"); err != nil {
			return Site{}, err
		}
		addr, err := r.raw("server address", 16)
		if err != nil {
			return Site{}, err
		}
		copy(sv.Address[:], addr)
		pk, err := r.bytes("server public key", MaxMessageLen)
		if err != nil {
			return Site{}, err
		}
		sv.PublicKey = bytes.Clone(pk)
		k, err := r.length("server interface count", MaxAttributes)
		if err != nil {
			return Site{}, err
		}
		for j := 0; j < k; j++ {
			var f Interface
			if f.Type, err = r.u8("interface type"); err != nil {
				return Site{}, err
			}
			if f.Protocol, err = r.u8("interface protocol"); err != nil {
				return Site{}, err
			}
			if f.Port, err = r.u32("interface port"); err != nil {
				return Site{}, err
			}
			sv.Interfaces = append(sv.Interfaces, f)
		}
		s.Servers = append(s.Servers, sv)
	}
	if r.remaining() != 0 {
		return Site{}, ferr(r.off, "site end", ErrTrailingData)
	}
	return s, nil
}

// KeyTypeRSAPublic is the key-type string of CNRI's RSA public-key encoding.
const KeyTypeRSAPublic = "RSA_PUB_KEY"

// AppendRSAPublicKey appends pub in the Handle System's public-key encoding
// (HS_PUBKEY data, the PublicKey field of an HS_SITE server; CNRI
// Util.getBytesFromPublicKey): UTF8 "RSA_PUB_KEY" | int2 flags (0) | exponent
// (int4 + two's-complement big-endian bytes) | modulus (likewise) | int4 0. The
// trailing zero int4 is what the reference encoder writes (its buffer has room for
// four lengths but fills three); readers ignore it.
func AppendRSAPublicKey(dst []byte, pub *rsa.PublicKey) []byte {
	dst = appendString(dst, KeyTypeRSAPublic)
	dst = appendU16(dst, 0)
	dst = appendBytes(dst, signedBytes(big.NewInt(int64(pub.E))))
	dst = appendBytes(dst, signedBytes(pub.N))
	return appendU32(dst, 0)
}

// signedBytes is Java's BigInteger.toByteArray for a non-negative value: minimal
// big-endian bytes with a leading zero when the top bit is set.
func signedBytes(x *big.Int) []byte {
	b := x.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		return append([]byte{0}, b...)
	}
	return b
}

// ParseRSAPublicKey decodes an RSA_PUB_KEY encoding (bytes after the modulus are
// ignored, as the reference decoder does).
func ParseRSAPublicKey(b []byte) (*rsa.PublicKey, error) {
	r := reader{b: b}
	t, err := r.bytes("key type", 64)
	if err != nil {
		return nil, err
	}
	if string(t) != KeyTypeRSAPublic {
		return nil, ferr(0, "key type", ErrBadKey)
	}
	if _, err := r.u16("key flags"); err != nil {
		return nil, err
	}
	e, err := r.bytes("key exponent", 64)
	if err != nil {
		return nil, err
	}
	n, err := r.bytes("key modulus", 8192)
	if err != nil {
		return nil, err
	}
	ei := new(big.Int).SetBytes(e)
	if !ei.IsInt64() || ei.Int64() < 3 || ei.Int64() > 1<<31-1 || len(n) == 0 {
		return nil, ferr(0, "key exponent", ErrBadKey)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(ei.Int64())}, nil
}
