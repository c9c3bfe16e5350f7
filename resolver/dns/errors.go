package hdldns

import (
	"errors"

	"pidnode/internal/cfgerr"
)

var (
	// ErrServerClosed is returned by ServeUDP and ServeTCP after Shutdown, like
	// http.ErrServerClosed.
	ErrServerClosed = errors.New("hdldns: server closed")

	// ErrBadConfig is wrapped by every *ConfigError New returns.
	ErrBadConfig = errors.New("hdldns: invalid config")

	// errBadName is the internal reason a name under a zone maps to no handle
	// (malformed hx-- label, empty label); the query is answered NXDOMAIN.
	errBadName = errors.New("hdldns: name maps to no handle")
)

// ConfigError reports a Config field New rejected; it wraps ErrBadConfig.
type ConfigError = cfgerr.Error

// configError is New's *ConfigError for field, with the rejected value v.
func configError(field, v, reason string) *ConfigError {
	return &ConfigError{Pkg: "hdldns", Field: field, Value: v, Reason: reason, Err: ErrBadConfig}
}
