package hdl_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"

	"pidnode/cache"
	"pidnode/resolver/hdl"
	"pidnode/store"
)

// TestConfigErrors: every Config New refuses is a *ConfigError naming the
// field and wrapping ErrBadConfig.
func TestConfigErrors(t *testing.T) {
	db, err := store.Open(store.Config{Path: t.TempDir() + "/pid.db", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := cache.New(cache.Config{Source: db})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	bad.E = 1 // Validate refuses a public exponent below 2
	for _, tt := range []struct {
		name, field string
		mutate      func(*hdl.Config)
	}{
		{"no cache", "Cache", func(c *hdl.Config) { c.Cache = nil }},
		{"no namer", "Namer", func(c *hdl.Config) { c.Namer = nil }},
		{"negative signed rate", "SignedRate", func(c *hdl.Config) { c.SignedRate = -1 }},
		{"negative signed burst", "SignedBurst", func(c *hdl.Config) { c.SignedBurst = -1 }},
		{"negative read timeout", "ReadTimeout", func(c *hdl.Config) { c.ReadTimeout = -1 }},
		{"negative connections per source", "MaxConnsPerSource", func(c *hdl.Config) { c.MaxConnsPerSource = -1 }},
		{"port out of range", "Site.Port", func(c *hdl.Config) { c.Site.Port = 70000 }},
		{"invalid key", "SignKey", func(c *hdl.Config) { c.SignKey = bad }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := hdl.Config{Cache: c, Namer: newNamer(t)}
			tt.mutate(&cfg)
			_, err := hdl.New(cfg)
			var ce *hdl.ConfigError
			if !errors.Is(err, hdl.ErrBadConfig) || !errors.As(err, &ce) {
				t.Fatalf("New = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field {
				t.Errorf("New = %v: field %q, want %q", err, ce.Field, tt.field)
			}
		})
	}
}
