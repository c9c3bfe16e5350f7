package cache

import (
	"errors"
	"strconv"
)

var (
	// ErrNoSource is returned by New when Config.Source is nil.
	ErrNoSource = errors.New("cache: Config.Source is nil")

	// ErrBadConfig is wrapped by every *ConfigError.
	ErrBadConfig = errors.New("cache: invalid config")
)

// ConfigError reports a Config field New rejected.
type ConfigError struct {
	Field  string // Config field name, e.g. "Shards"
	Value  int64  // the rejected value (durations in nanoseconds)
	Reason string // what is required
}

func (e *ConfigError) Error() string {
	return "cache: invalid Config." + e.Field + " " + strconv.FormatInt(e.Value, 10) + ": " + e.Reason
}

// Unwrap returns ErrBadConfig.
func (e *ConfigError) Unwrap() error { return ErrBadConfig }

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
