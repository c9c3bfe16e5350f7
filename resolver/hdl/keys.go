package hdl

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyBits is the size of keys GenerateKey makes.
const KeyBits = 2048

// GenerateKey writes a new RSA-2048 private key to path as a PKCS #8 PEM block
// ("PRIVATE KEY"), mode 0600, for `pidnode keygen FILE` and the key a node
// creates in its data directory on its first start. It refuses to overwrite an
// existing file (an error matching fs.ErrExist). The key is written to a
// temporary file beside path and linked into place, so path never holds half
// a key, whether the process dies while writing or another reads it at once.
// A path that already exists is refused before a key is made: a node calls
// this on every start, and making an RSA key is slow.
func GenerateKey(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(f.Name(), path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			return &fs.PathError{Op: "create", Path: path, Err: le.Err} // not the temporary name
		}
		return err
	}
	return nil
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
