package hdl

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// KeyBits is the size of keys GenerateKey makes.
const KeyBits = 2048

// GenerateKey writes a new RSA-2048 private key to path as a PKCS #8 PEM block
// ("PRIVATE KEY"), mode 0600, for `pidnode keygen FILE` and the key a node
// creates in its data directory on its first start. It refuses to overwrite an
// existing file (an error matching fs.ErrExist).
func GenerateKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// LoadKey reads an RSA private key from a PEM file (PKCS #8 "PRIVATE KEY" as
// GenerateKey writes, or PKCS #1 "RSA PRIVATE KEY"), for `--hdl-key FILE`.
func LoadKey(path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoKey, path)
		}
		switch blk.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("hdl: %s: %w", path, err)
			}
			rk, ok := k.(*rsa.PrivateKey)
			if !ok {
				return nil, fmt.Errorf("%w: %s holds a %T", ErrNoKey, path, k)
			}
			return rk, nil
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("hdl: %s: %w", path, err)
			}
			return k, nil
		}
	}
}
