package linkcheck

import "errors"

// ErrConfig: Config is missing a required field.
var ErrConfig = errors.New("linkcheck: invalid configuration")
