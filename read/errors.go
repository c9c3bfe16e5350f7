package read

import (
	"errors"

	"pidnode/internal/cfgerr"
	"pidnode/internal/refusal"
)

// Sentinel errors of the reads, wrapped in an *Error whose Detail is the
// message for the client; other errors are the store's.
var (
	// ErrConfig is wrapped by every *ConfigError New returns.
	ErrConfig = errors.New("read: invalid configuration")
	// ErrNotFound: no identifier has this id (or the id makes none).
	ErrNotFound = errors.New("read: no such identifier")
	// ErrBadCursor: a list cursor that no page of this namespace gave.
	ErrBadCursor = errors.New("read: invalid cursor")
	// ErrBadQuery: a search's sort, page or page size is invalid, or its
	// words match too many identifiers.
	ErrBadQuery = errors.New("read: invalid search")
)

// Error is a refused read: Kind is one of the sentinels above, Detail what
// the client is told.
type Error = refusal.Error

func refuse(kind error, detail string) *Error { return &Error{Kind: kind, Detail: detail} }

// ConfigError reports a Config field New rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
