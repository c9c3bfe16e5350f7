package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFromEnv: the settings bench/README.md lists are read from the
// environment, and a value that is not a number is refused naming the
// variable.
func TestFromEnv(t *testing.T) {
	t.Setenv("N", "20000")
	t.Setenv("DUR", "2.5")
	t.Setenv("ROUNDS", "2")
	t.Setenv("EXTRA_ROUNDS", "0")
	t.Setenv("SPREAD_MAX", "7.5")
	t.Setenv("NGINX_WAIT", "1500")
	t.Setenv("HIT_BUDGETS", "1 5")
	t.Setenv("PROFILE", "0")
	t.Setenv("KEEP", "1")
	cfg, err := fromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 20000 || cfg.Dur != 2500*time.Millisecond || cfg.Rounds != 2 || cfg.ExtraRounds != 0 || cfg.SpreadMax != 7.5 ||
		cfg.NginxWait != 1500*time.Second || !slices.Equal(cfg.HitBudgets, []float64{1, 5}) || cfg.Profile || !cfg.Keep {
		t.Errorf("fromEnv = %+v", cfg)
	}
	if cfg.Root == "" || cfg.LoadCPU != 1 || cfg.ServerCPU != 0 {
		t.Errorf("root %q, CPUs %d/%d", cfg.Root, cfg.ServerCPU, cfg.LoadCPU)
	}

	t.Setenv("EXTRA_ROUNDS", "")
	if cfg, _ := fromEnv(); cfg.ExtraRounds != 2 {
		t.Errorf("EXTRA_ROUNDS unset: %d extra rounds, want 2", cfg.ExtraRounds)
	}

	t.Setenv("N", "1e6x")
	t.Setenv("DUR", "-1")
	t.Setenv("HIT_BUDGETS", "1 five")
	_, err = fromEnv()
	for _, want := range []string{`N="1e6x"`, `DUR="-1"`, `HIT_BUDGETS="1 five"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fromEnv error %v, want it to name %s", err, want)
		}
	}
}
