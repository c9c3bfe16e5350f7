package admin

import (
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	"pidnode/handlev"
	"pidnode/store"
)

// TestConfigError: a Config, ListenerConfig or Policy that New, NewListener
// or CheckPolicy refuses is a *ConfigError naming the field and wrapping
// ErrConfig; the operator key, a secret, is never in the message.
func TestConfigError(t *testing.T) {
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pidnode.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: testPrefix})
	if err != nil {
		t.Fatal(err)
	}
	newErr := func(cfg Config) error { _, err := New(cfg); return err }
	listenerErr := func(cfg ListenerConfig) error { _, err := NewListener(cfg); return err }
	const shortKey = "short-secret"
	for _, tc := range []struct {
		name, field string
		err         error
	}{
		{"no DB", "DB", newErr(Config{Namer: namer, OperatorKey: testOpKey})},
		{"no Namer", "Namer", newErr(Config{DB: db, OperatorKey: testOpKey})},
		{"short operator key", "OperatorKey", newErr(Config{DB: db, Namer: namer, OperatorKey: shortKey})},
		{"no handler", "Handler", listenerErr(ListenerConfig{})},
		{"negative timeout", "ReadTimeout", listenerErr(ListenerConfig{Handler: http.NotFoundHandler(), ReadTimeout: -1})},
		{"policy without text", "Policy", CheckPolicy(&Policy{Version: "1", Title: "T"})},
	} {
		var ce *ConfigError
		if !errors.Is(tc.err, ErrConfig) || !errors.As(tc.err, &ce) || ce.Field != tc.field || ce.Pkg != "admin" {
			t.Errorf("%s: error = %v, want a *ConfigError of admin for %s", tc.name, tc.err, tc.field)
			continue
		}
		if ce.Reason == "" || ce.Value == shortKey || ce.Value == testOpKey {
			t.Errorf("%s: ConfigError %+v: want a reason and no secret", tc.name, ce)
		}
	}
}
