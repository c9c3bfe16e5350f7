package people

import (
	"errors"

	"pidnode/internal/cfgerr"
	"pidnode/internal/refusal"
)

// Sentinel errors; a refusal is an *Error of one of them.
var (
	// ErrConfig is wrapped by every *ConfigError New and NewOIDC return.
	ErrConfig = errors.New("people: invalid configuration")
	// ErrNotFound: no such person, SNAA or invitation (or the invitation
	// has expired or was used).
	ErrNotFound = errors.New("people: not found")
	// ErrConflict: the e-mail address (or OpenID Connect subject) is
	// already another person's.
	ErrConflict = errors.New("people: conflict")
	// ErrDenied: the e-mail address, password or code is wrong, or the
	// subject is nobody's. One error for all, so that the answer does not
	// tell which.
	ErrDenied = errors.New("people: sign-in denied")
	// ErrLocked: the account is locked after repeated failures; RetryAfter
	// says for how long.
	ErrLocked = errors.New("people: account locked")
	// ErrOIDC: the OpenID Connect sign-in failed (the provider's answer,
	// the ID token's signature, issuer, audience, expiry or nonce).
	ErrOIDC = errors.New("people: OpenID Connect sign-in failed")
)

// Error is a refused request: Kind is one of the sentinels above, Detail
// what the person is told.
type Error = refusal.Error

func refuse(kind error, detail string) *Error { return &Error{Kind: kind, Detail: detail} }

// ConfigError reports a Config (or OIDCConfig) field New or NewOIDC
// rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error
