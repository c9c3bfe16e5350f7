package hdl

import (
	"errors"

	"pidnode/internal/cfgerr"
)

var (
	// ErrServerClosed is returned by ServeTCP and ServeUDP after Shutdown.
	ErrServerClosed = errors.New("hdl: server closed")
	// ErrBadConfig is wrapped by every *ConfigError New returns.
	ErrBadConfig = errors.New("hdl: bad config")
	// ErrRequestID: a reply whose RequestId differs from the request's.
	ErrRequestID = errors.New("hdl: reply request id differs")
	// ErrNoKey: a key file that holds no RSA private key.
	ErrNoKey = errors.New("hdl: no RSA private key in file")
)

// ConfigError reports a Config field New rejected; it wraps ErrBadConfig.
type ConfigError = cfgerr.Error

// configError is New's *ConfigError for field, with the rejected value v.
func configError(field, v, reason string) *ConfigError {
	return &ConfigError{Pkg: "hdl", Field: field, Value: v, Reason: reason, Err: ErrBadConfig}
}
