package write

import (
	"errors"

	"pidnode/internal/cfgerr"
	refused "pidnode/internal/refusal"
)

// Sentinel errors a Service's writes fail with, wrapped in an *Error whose
// Detail is the message for the client. Validation failures are model's
// *ValidationError and *SyntaxError instead; errors of the Writer (a cluster
// that cannot decide a write) are returned as they are.
var (
	// ErrConfig is wrapped by every *ConfigError New returns.
	ErrConfig = errors.New("write: invalid configuration")
	// ErrForbidden: the Actor may not make this write (an SNAA that may not
	// choose custom ids).
	ErrForbidden = errors.New("write: forbidden")
	// ErrNotFound: the identifier to update does not exist, or its id makes
	// no identifier.
	ErrNotFound = errors.New("write: no such identifier")
	// ErrExists: the custom id of a create is taken.
	ErrExists = errors.New("write: identifier exists")
	// ErrPrecondition: an update's If-Match names another version, or a
	// create that asked for an absent identifier (CreateRequest.IfAbsent)
	// found it taken.
	ErrPrecondition = errors.New("write: precondition failed")
	// ErrIdempotencyMismatch: an Idempotency-Key was used before with a
	// different request.
	ErrIdempotencyMismatch = errors.New("write: idempotency key reused")
)

// Error is a refused write: Kind is one of the sentinels above, Detail what
// the client is told.
type Error = refused.Error

func refuse(kind error, detail string) *Error { return &Error{Kind: kind, Detail: detail} }

// ConfigError reports a Config field New rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
