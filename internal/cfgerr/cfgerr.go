// Package cfgerr holds the one shape of a configuration error: the Config
// field a package's New rejected, the value and what is required. Each
// package that validates a Config declares `type ConfigError = cfgerr.Error`
// and wraps its own sentinel, so callers match the package's sentinel with
// errors.Is and read the field with errors.As.
//
// It imports the standard library only.
package cfgerr

import "strconv"

// Error reports a Config field that New rejected.
type Error struct {
	Pkg    string // the package whose New rejected it, e.g. "cache"
	Field  string // the Config field, e.g. "Zones[1].Prefix"
	Value  string // the rejected value as text; "" when there is none to show
	Reason string // what is required, e.g. "must not be negative"
	Err    error  // the package's sentinel this error wraps; never nil
}

func (e *Error) Error() string {
	s := e.Pkg + ": invalid Config." + e.Field
	if e.Value != "" {
		s += " " + strconv.Quote(e.Value)
	}
	return s + ": " + e.Reason
}

// Unwrap returns the package's sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Required is the Error for a required Config field left unset.
func Required(pkg, field string, sentinel error) *Error {
	return &Error{Pkg: pkg, Field: field, Reason: "required", Err: sentinel}
}
