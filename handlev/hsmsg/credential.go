package hsmsg

import (
	"crypto"
	_ "crypto/md5" // registers crypto.MD5 for VerifyCredential
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha1"
	_ "crypto/sha256"
	"encoding/binary"
)

// CredentialSigned is the credential type of a message signed with a public-key
// pair (CNRI Common.CREDENTIAL_TYPE_SIGNED).
const CredentialSigned = "HS_SIGNED"

// Hash algorithm names carried in HS_SIGNED credentials (CNRI Common.HASH_ALG_*).
const (
	HashSHA256 = "SHA-256"
	HashSHA1   = "SHA1"
)

// Credential is the credential section of a message (RFC 3652 §2.2.4 as CNRI
// writes it, AbstractMessage.signMessage):
//
//	Version octet (0) | Reserved octet (0) | Options int2 (0) |
//	Signer: handle UTF8-String (empty) + index int4 (CNRI: session counter, 0) |
//	Type UTF8-String ("HS_SIGNED") | int4 length of the signature section |
//	signature section: hash algorithm UTF8-String ("SHA-256") + int4 + signature bytes
//
// Byte slices alias the decoded input.
type Credential struct {
	Version      uint8
	Reserved     uint8
	Options      uint16
	SignerHandle []byte
	SignerIndex  uint32
	Type         []byte
	HashAlg      []byte
	Signature    []byte
}

// AppendCredential appends the credential bytes (without the message's int4
// credential length, which the caller writes).
func AppendCredential(dst []byte, c *Credential) []byte {
	dst = append(dst, c.Version, c.Reserved)
	dst = appendU16(dst, c.Options)
	dst = appendBytes(dst, c.SignerHandle)
	dst = appendU32(dst, c.SignerIndex)
	dst = appendBytes(dst, c.Type)
	dst = appendU32(dst, uint32(8+len(c.HashAlg)+len(c.Signature)))
	dst = appendBytes(dst, c.HashAlg)
	return appendBytes(dst, c.Signature)
}

// ParseCredential decodes credential bytes (Message.Credential).
func ParseCredential(b []byte) (Credential, error) {
	r := reader{b: b}
	var c Credential
	var err error
	if c.Version, err = r.u8("credential version"); err != nil {
		return c, err
	}
	if c.Reserved, err = r.u8("credential reserved"); err != nil {
		return c, err
	}
	if c.Options, err = r.u16("credential options"); err != nil {
		return c, err
	}
	if c.SignerHandle, err = r.bytes("credential signer handle", MaxHandleLen); err != nil {
		return c, err
	}
	if c.SignerIndex, err = r.u32("credential signer index"); err != nil {
		return c, err
	}
	if c.Type, err = r.bytes("credential type", MaxHandleLen); err != nil {
		return c, err
	}
	start := r.off
	n, err := r.length("credential signature section length", MaxMessageLen)
	if err != nil {
		return c, err
	}
	if n != r.remaining() {
		return c, ferr(start, "credential signature section length", ErrBadCredential)
	}
	if c.HashAlg, err = r.bytes("credential hash algorithm", 64); err != nil {
		return c, err
	}
	if c.Signature, err = r.bytes("credential signature", MaxMessageLen); err != nil {
		return c, err
	}
	return c, nil
}

// AppendSigningPrefix appends the envelope fields CNRI signs before header+body
// (AbstractMessage.signMessage(Signature)): nothing below protocol 2.6; for 2.6 the
// historical layout of its "painful bug" (major, minor, the first two bytes of the
// session id, then zeros: 14 bytes); from 2.7 major, minor, [suggested major and
// minor from 2.8], session id, request id and the session counter (always 0 here).
func AppendSigningPrefix(dst []byte, env *Envelope) []byte {
	if !AtLeast(env.Major, env.Minor, 2, 6) {
		return dst
	}
	if !AtLeast(env.Major, env.Minor, 2, 7) {
		var b [14]byte
		b[0], b[1] = env.Major, env.Minor
		binary.BigEndian.PutUint32(b[2:], env.SessionID)
		binary.BigEndian.PutUint32(b[4:], env.RequestID)
		binary.BigEndian.PutUint32(b[4:], 0) // session counter overwrites the request id
		return append(dst, b[:]...)
	}
	dst = append(dst, env.Major, env.Minor)
	if AtLeast(env.Major, env.Minor, 2, 8) {
		sm, sn := env.Suggested()
		dst = append(dst, sm, sn)
	}
	dst = appendU32(dst, env.SessionID)
	dst = appendU32(dst, env.RequestID)
	return appendU32(dst, 0)
}

// SignatureHashFor returns the hash a signer uses for a message of protocol version
// major.minor: SHA-256 from 2.7 (LightWeightHandleServer.supportsSha256Signature for
// RSA keys), SHA-1 below.
func SignatureHashFor(major, minor uint8) (crypto.Hash, string) {
	if AtLeast(major, minor, 2, 7) {
		return crypto.SHA256, HashSHA256
	}
	return crypto.SHA1, HashSHA1
}

// AppendSignedCredential signs a message whose envelope is env and whose header+body
// is signed with key (RSA PKCS #1 v1.5), and appends the credential bytes (without
// their int4 length). env.MessageLength is not covered and may be set afterwards.
func AppendSignedCredential(dst []byte, key *rsa.PrivateKey, env *Envelope, signed []byte) ([]byte, error) {
	h, name := SignatureHashFor(env.Major, env.Minor)
	hh := h.New()
	var pre [32]byte
	hh.Write(AppendSigningPrefix(pre[:0], env))
	hh.Write(signed)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, h, hh.Sum(nil))
	if err != nil {
		return dst, err
	}
	return AppendCredential(dst, &Credential{
		Type:      []byte(CredentialSigned),
		HashAlg:   []byte(name),
		Signature: sig,
	}), nil
}

// VerifyCredential checks that cred (Message.Credential) is an HS_SIGNED credential
// whose signature over env's signing prefix and signed (Message.Signed) verifies
// with pub. This is what the Java client does with a reply to a certified request.
func VerifyCredential(pub *rsa.PublicKey, env *Envelope, signed, cred []byte) error {
	if len(cred) == 0 {
		return ferr(0, "credential", ErrBadCredential)
	}
	c, err := ParseCredential(cred)
	if err != nil {
		return err
	}
	if string(c.Type) != CredentialSigned {
		return ferr(0, "credential type", ErrBadCredential)
	}
	var h crypto.Hash
	switch string(c.HashAlg) {
	case "SHA-256", "SHA256":
		h = crypto.SHA256
	case "SHA1", "SHA-1":
		h = crypto.SHA1
	case "MD5":
		h = crypto.MD5
	default:
		return ferr(0, "credential hash algorithm", ErrBadCredential)
	}
	hh := h.New()
	var pre [32]byte
	hh.Write(AppendSigningPrefix(pre[:0], env))
	hh.Write(signed)
	if err := rsa.VerifyPKCS1v15(pub, h, hh.Sum(nil), c.Signature); err != nil {
		return ErrBadSignature
	}
	return nil
}
