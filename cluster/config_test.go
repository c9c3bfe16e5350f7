package cluster

import (
	"context"
	"errors"
	"testing"
)

// TestConfigError: a Config that Dial or Reclaim refuses, and a name
// CheckNodeName or CheckShardName refuses, is a *ConfigError naming the
// field and wrapping ErrConfig, before any etcd is dialled.
func TestConfigError(t *testing.T) {
	reclaimErr := func(cfg Config) error { _, err := Reclaim(context.Background(), cfg); return err }
	dialErr := func(cfg Config) error { _, err := Dial(cfg); return err }
	for _, tc := range []struct {
		name, field string
		err         error
	}{
		{"no endpoints", "Endpoints", dialErr(Config{})},
		{"no DB", "DB", dialErr(Config{Endpoints: []string{"http://127.0.0.1:1"}})},
		{"reclaim without endpoints", "Endpoints", reclaimErr(Config{})},
		{"empty node name", "NodeName", CheckNodeName("")},
		{"seed node name", "NodeName", CheckNodeName(SeedNodeName)},
		{"bad shard name", "Shards.Name", CheckShardName("A_B")},
	} {
		var ce *ConfigError
		if !errors.Is(tc.err, ErrConfig) || !errors.As(tc.err, &ce) || ce.Field != tc.field || ce.Pkg != "cluster" || ce.Reason == "" {
			t.Errorf("%s: error = %v, want a *ConfigError of cluster for %s", tc.name, tc.err, tc.field)
		}
	}
}
