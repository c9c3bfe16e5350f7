package main

import (
	"crypto/rsa"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"pidnode/resolver/hdl"
)

const siteinfoUsage = "pidnode siteinfo --hdl-addr HOST:PORT [--hdl-key FILE | --data DIR]"

// hdlKeyFile is the native-protocol signing key's file in the data directory,
// used when --hdl-key is not set.
const hdlKeyFile = "hdl.key"

// hdlKeyPath is the signing key's file: --hdl-key, else DATA/hdl.key.
func hdlKeyPath(cfg *Config) (path, flag string) {
	if cfg.HdlKey != "" {
		return cfg.HdlKey, "hdl-key"
	}
	return filepath.Join(cfg.Data, hdlKeyFile), "data"
}

// loadSignKey returns the native protocol's signing key. A node always has
// one, so that its HS_SITE publishes a public key (the CNRI client refuses
// site information without one) and certified requests are answered signed:
// the file --hdl-key names, which must exist, or DATA/hdl.key, created on
// the first start as `pidnode keygen` makes it (RSA-2048, PKCS #8, mode 0600)
// and reused on every start after. The data directory must exist. A key file
// other users can read is refused, not fixed.
func loadSignKey(cfg *Config) (*rsa.PrivateKey, error) {
	path, flag := hdlKeyPath(cfg)
	if cfg.HdlKey == "" {
		// O_EXCL: a key already there is never replaced, and of two
		// processes starting at once one writes and both read its key.
		if err := hdl.GenerateKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fileError("native-protocol signing key", path, flag, err)
		}
	}
	if err := checkSecretFile("native-protocol signing key", path, "--hdl-key"); err != nil {
		return nil, err
	}
	k, err := hdl.LoadKey(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fileError("native-protocol signing key", path, flag, err)
	case err != nil:
		return nil, &startError{msg: "native-protocol signing key " + path + ": " + err.Error(),
			hint: "create one with pidnode keygen FILE and point --hdl-key at it", err: err}
	}
	return k, nil
}

// ensureDataDir creates the data directory as serve does, for subcommands
// that keep a file there before the first start (siteinfo's key).
func ensureDataDir(cfg *Config) error {
	if err := os.MkdirAll(cfg.Data, 0o750); err != nil {
		return fileError("data directory", cfg.Data, "data", err)
	}
	return nil
}
