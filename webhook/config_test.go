package webhook

import (
	"errors"
	"testing"
)

// TestConfigError: a Config without a required field is a *ConfigError
// naming it and wrapping the package's sentinel, not a panic later.
func TestConfigError(t *testing.T) {
	_, err := New(Config{})
	var ce *ConfigError
	if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != "Registry" {
		t.Errorf("New(Config{}) = %v, want a *ConfigError for Registry", err)
	}
}
