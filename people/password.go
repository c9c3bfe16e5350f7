package people

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are argon2id's costs (RFC 9106): Memory in KiB, Time
// (passes), Threads. DefaultArgon2 is OWASP's recommended minimum.
type Argon2Params struct {
	Memory  uint32
	Time    uint32
	Threads uint8
}

// DefaultArgon2 is used when Config.Argon2 is zero.
var DefaultArgon2 = Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	hashLen = 32
	// maxArgonMemory bounds the memory a stored hash may ask for (1 GiB),
	// so that a corrupt record cannot exhaust the node.
	maxArgonMemory = 1 << 20
	maxArgonTime   = 64
)

var errPHC = errors.New("people: malformed argon2id hash")

// hashPassword returns the PHC string of password with a fresh salt from
// rnd: $argon2id$v=19$m=…,t=…,p=…$salt$hash (unpadded standard base64).
func hashPassword(rnd io.Reader, p Argon2Params, password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(rnd, salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, hashLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// phc is a parsed argon2id PHC string.
type phc struct {
	p          Argon2Params
	salt, hash []byte
}

// parsePHC parses what hashPassword writes; anything else, or costs beyond
// maxArgonMemory and maxArgonTime, is errPHC.
func parsePHC(s string) (phc, error) {
	var out phc
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return out, errPHC
	}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return out, errPHC
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return out, errPHC
		}
		switch k {
		case "m":
			out.p.Memory = uint32(n)
		case "t":
			out.p.Time = uint32(n)
		case "p":
			if n > 255 {
				return out, errPHC
			}
			out.p.Threads = uint8(n)
		default:
			return out, errPHC
		}
	}
	p := out.p
	if p.Time == 0 || p.Time > maxArgonTime || p.Threads == 0 || p.Memory < 8*uint32(p.Threads) || p.Memory > maxArgonMemory {
		return out, errPHC
	}
	var err error
	if out.salt, err = base64.RawStdEncoding.Strict().DecodeString(parts[4]); err != nil || len(out.salt) < 8 || len(out.salt) > 64 {
		return out, errPHC
	}
	if out.hash, err = base64.RawStdEncoding.Strict().DecodeString(parts[5]); err != nil || len(out.hash) < 16 || len(out.hash) > 64 {
		return out, errPHC
	}
	return out, nil
}

// checkPassword reports whether password matches the PHC string stored
// (constant time in the comparison); a malformed string matches nothing.
func checkPassword(stored, password string) bool {
	h, err := parsePHC(stored)
	if err != nil {
		return false
	}
	sum := argon2.IDKey([]byte(password), h.salt, h.p.Time, h.p.Memory, h.p.Threads, uint32(len(h.hash)))
	return subtle.ConstantTimeCompare(sum, h.hash) == 1
}
