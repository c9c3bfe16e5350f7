package shed

import (
	"errors"

	"pidnode/internal/cfgerr"
)

// ErrBadConfig is wrapped by every *ConfigError NewBudget returns.
var ErrBadConfig = errors.New("shed: bad config")

// ConfigError reports a BudgetConfig field NewBudget rejected; it wraps
// ErrBadConfig.
type ConfigError = cfgerr.Error
