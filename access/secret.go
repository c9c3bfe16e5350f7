package access

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"io"
	"strings"
)

// KeyPrefix starts every SNAA API key; KeyRandomBytes of randomness follow in
// lower-case base32 without padding (docs/product.md §4.1).
const (
	KeyPrefix      = "pid_"
	KeyRandomBytes = 32
)

var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// KeySecretLen is the length of a well-formed key: "pid_" + 52 base32
// characters.
var KeySecretLen = len(KeyPrefix) + keyEncoding.EncodedLen(KeyRandomBytes)

// NewSecret returns a fresh key secret read from rnd.
func NewSecret(rnd io.Reader) (string, error) {
	var b [KeyRandomBytes]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("access: key randomness: %w", err)
	}
	return KeyPrefix + strings.ToLower(keyEncoding.EncodeToString(b[:])), nil
}

// WellFormed reports whether tok has the shape of a key secret.
func WellFormed(tok string) bool {
	if len(tok) != KeySecretLen || !strings.HasPrefix(tok, KeyPrefix) {
		return false
	}
	_, err := keyEncoding.DecodeString(strings.ToUpper(tok[len(KeyPrefix):]))
	return err == nil
}

// Hash is what is stored of a secret: its SHA-256.
func Hash(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }
