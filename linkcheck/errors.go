package linkcheck

import (
	"errors"

	"pidnode/internal/cfgerr"
)

// ErrConfig is wrapped by every *ConfigError New returns.
var ErrConfig = errors.New("linkcheck: invalid configuration")

// ConfigError reports a Config field New rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
