//go:build !linux

package store

import "errors"

// populate has no equivalent of MADV_POPULATE_READ here: Warm reads the
// file instead.
var populate = func(uintptr, int64, int64) error { return errors.ErrUnsupported }

// adviseSequential has no portable equivalent: faults read as the system
// decides.
func adviseSequential(uintptr, int64) error { return errors.ErrUnsupported }
