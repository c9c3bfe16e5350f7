package cache

import (
	"errors"
	"strconv"

	"pidnode/internal/cfgerr"
)

var (
	// ErrNoSource is wrapped by New's *ConfigError when Config.Source is nil.
	ErrNoSource = errors.New("cache: Config.Source is nil")

	// ErrBadConfig is wrapped by every other *ConfigError.
	ErrBadConfig = errors.New("cache: invalid config")
)

// ConfigError reports a Config field New rejected; it wraps ErrBadConfig, or
// ErrNoSource for a missing Source.
type ConfigError = cfgerr.Error

// configError is New's *ConfigError for field, with the rejected value v.
func configError(field string, v int64, reason string) *ConfigError {
	return &ConfigError{Pkg: "cache", Field: field, Value: strconv.FormatInt(v, 10), Reason: reason, Err: ErrBadConfig}
}

// LoadError is returned by Get when Source.Load fails. Nothing is cached for it:
// the next Get for the key loads again.
type LoadError struct {
	Key string // the key passed to Source.Load (the requested key or its Alt)
	Err error  // the Source's error
}

func (e *LoadError) Error() string {
	return "cache: load " + strconv.Quote(e.Key) + ": " + e.Err.Error()
}

// Unwrap returns the Source's error, so errors.Is(err, store.ErrX) works.
func (e *LoadError) Unwrap() error { return e.Err }
