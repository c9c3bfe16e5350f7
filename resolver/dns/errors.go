package hdldns

import (
	"errors"
	"strconv"
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

// ConfigError reports a Config field New rejected.
type ConfigError struct {
	Field  string // Config field, e.g. "Zones[1].Prefix"
	Value  string // the rejected value
	Reason string // what is required
}

func (e *ConfigError) Error() string {
	return "hdldns: invalid Config." + e.Field + " " + strconv.Quote(e.Value) + ": " + e.Reason
}

// Unwrap returns ErrBadConfig.
func (e *ConfigError) Unwrap() error { return ErrBadConfig }
