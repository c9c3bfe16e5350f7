package resolver

import (
	"errors"
	"strconv"

	"pidnode/internal/cfgerr"
)

// Configuration errors returned by New, wrapped in *ConfigError.
var (
	// ErrNoCache: Config.Cache is nil.
	ErrNoCache = errors.New("resolver: no cache")
	// ErrNoNamer: Config.Namer is nil.
	ErrNoNamer = errors.New("resolver: no namer")
	// ErrBadBaseURL: Config.PublicURL or Config.ProxyURL is not an absolute
	// http or https URL without query or fragment.
	ErrBadBaseURL = errors.New("resolver: bad base URL")
	// ErrBadLimit: a negative timeout or size limit.
	ErrBadLimit = errors.New("resolver: bad limit")
)

// Request errors. They never leave the package as Go errors: the handler maps
// each to a page or a Handle JSON responseCode in one place (respond.go).
var (
	// ErrBadParam: a query or body parameter has a value of the wrong kind
	// (index=x). Returned as *ParamError.
	ErrBadParam = errors.New("resolver: bad parameter")
)

// ConfigError says which Config field New rejected and why; it wraps
// ErrNoCache, ErrNoNamer, ErrBadBaseURL or ErrBadLimit.
type ConfigError = cfgerr.Error

// ParamError names a request parameter whose value is unusable. Value is the
// decoded value as the client sent it.
type ParamError struct {
	Name  string
	Value string
}

func (e *ParamError) Error() string {
	return "resolver: bad parameter " + e.Name + "=" + strconv.Quote(e.Value)
}

// Unwrap returns ErrBadParam.
func (e *ParamError) Unwrap() error { return ErrBadParam }
