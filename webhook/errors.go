package webhook

import (
	"errors"

	"pidnode/internal/cfgerr"
)

// ErrConfig is wrapped by every *ConfigError New returns.
var ErrConfig = errors.New("webhook: invalid configuration")

// ConfigError reports a Config field New rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error

// errConflict: the endpoint's cursor or attempt count changed since it was
// read (another deliverer during a lead's overlap); the caller re-reads.
var errConflict = errors.New("webhook: endpoint changed since it was read")

// errGone: the endpoint was deleted or disabled since it was read.
var errGone = errors.New("webhook: endpoint gone")
