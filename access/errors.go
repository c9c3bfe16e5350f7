package access

import (
	"errors"
	"time"

	"pidnode/internal/cfgerr"
	"pidnode/internal/refusal"
)

// Sentinel errors of a key look-up. The fronts map them to their replies in
// their own place (the admin API to a 401 with WWW-Authenticate).
var (
	// ErrConfig is wrapped by every *ConfigError New and NewSessions return.
	ErrConfig = errors.New("access: invalid configuration")
	// ErrUnknownKey: no key has this secret (or the secret is malformed).
	ErrUnknownKey = errors.New("access: unknown API key")
	// ErrRevokedKey: the key was revoked; a *RevokedError says when.
	ErrRevokedKey = errors.New("access: API key revoked")

	// ErrNoSNAA: the SNAA named does not exist.
	ErrNoSNAA = errors.New("access: no such SNAA")
	// ErrNoKey: the SNAA has no key of this id.
	ErrNoKey = errors.New("access: no such key")
	// ErrKeyLimit: the SNAA already holds as many unrevoked keys as it may.
	ErrKeyLimit = errors.New("access: too many keys")

	// ErrSuspended: the key's SNAA is suspended (Admission).
	ErrSuspended = errors.New("access: SNAA suspended")
	// ErrRateLimited: a rate limit refused the request; the *Error's
	// RetryAfter says when it can succeed (Admission, AddrLimit).
	ErrRateLimited = errors.New("access: rate limited")
	// ErrMaintenance: the node is in maintenance mode and refuses writes.
	ErrMaintenance = errors.New("access: maintenance")

	// ErrSessionUnknown: no session has this token (it ended, or never was).
	ErrSessionUnknown = errors.New("access: unknown session")
	// ErrSessionExpired: the session reached its absolute lifetime.
	ErrSessionExpired = errors.New("access: session expired")
	// ErrSessionIdle: the session was not used for its idle lifetime.
	ErrSessionIdle = errors.New("access: session idle")
	// ErrSessionKeyRevoked: the key the session was started with is
	// revoked (or gone).
	ErrSessionKeyRevoked = errors.New("access: session's key revoked")
	// ErrSessionOperatorChanged: the operator key has changed since the
	// operator's session started.
	ErrSessionOperatorChanged = errors.New("access: operator key changed")
	// ErrSessionPersonRemoved: the person the session was started for was
	// removed.
	ErrSessionPersonRemoved = errors.New("access: session's person removed")
)

// RevokedError is the look-up of a revoked key.
type RevokedError struct {
	At time.Time // when the key was revoked
}

func (e *RevokedError) Error() string {
	return "this API key was revoked on " + e.At.UTC().Format(time.RFC3339)
}

// Unwrap returns ErrRevokedKey.
func (e *RevokedError) Unwrap() error { return ErrRevokedKey }

// Error is a refused write of keys: Kind is one of the sentinels above,
// Detail what the client is told.
type Error = refusal.Error

func refuse(kind error, detail string) *Error { return &Error{Kind: kind, Detail: detail} }

// ConfigError reports a Config field New or NewSessions rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
