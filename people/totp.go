package people

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// TOTP as RFC 6238 with the parameters every authenticator app knows
// (HMAC-SHA-1, 30-second steps, 6 digits; RFC 6238 §4, RFC 4226 §5.3),
// accepting the step before and after for clock drift (RFC 6238 §5.2).
const (
	totpStep   = 30
	totpDigits = 6
	totpSkew   = 1
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newTOTPSecret returns 20 random bytes (RFC 4226 §4: 160 bits) in base32.
func newTOTPSecret(rnd io.Reader) (string, error) {
	var b [20]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", err
	}
	return b32.EncodeToString(b[:]), nil
}

// totpCode is the code of secret (base32) at step.
func totpCode(key []byte, step uint64) string {
	m := hmac.New(sha1.New, key)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], step)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1000000)
}

// TOTPCode is the code of secret at t, for a person's authenticator (and
// for tests, which stand in for one).
func TOTPCode(secret string, t time.Time) (string, error) {
	key, err := b32.DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", err
	}
	return totpCode(key, uint64(t.Unix())/totpStep), nil
}

// checkTOTP returns the step code matches at now (within totpSkew steps),
// and whether it does.
func checkTOTP(secret, code string, now time.Time) (uint64, bool) {
	key, err := b32.DecodeString(secret)
	if err != nil || len(code) != totpDigits {
		return 0, false
	}
	cur := uint64(now.Unix()) / totpStep
	for d := -totpSkew; d <= totpSkew; d++ {
		step := uint64(int64(cur) + int64(d))
		if subtle.ConstantTimeCompare([]byte(totpCode(key, step)), []byte(code)) == 1 {
			return step, true
		}
	}
	return 0, false
}

// TOTPURI is the otpauth:// URI an authenticator app reads (as a QR code
// or typed in): the node's name as issuer, the person's address as
// account.
func TOTPURI(issuer, account, secret string) string {
	label := url.PathEscape(issuer + ":" + account)
	q := url.Values{"secret": {secret}, "issuer": {issuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + label + "?" + q.Encode()
}
