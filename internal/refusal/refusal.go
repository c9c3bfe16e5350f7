// Package refusal holds the one shape of a refused request in the services
// below the fronts (write, read, access): the sentinel saying what kind of
// refusal it is and the detail the client is told. Each service declares
// `type Error = refusal.Error` and its own sentinels; a front maps Kind to
// its answer in one place (admin's problemOf). It imports the standard library only.
package refusal

import "time"

// Error is a refused request: Kind is the refusing package's sentinel,
// Detail what the client is told, RetryAfter (if not zero) how long the
// client should wait before the same request can succeed (a rate limit,
// maintenance).
type Error struct {
	Kind       error
	Detail     string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap returns Kind, so that errors.Is(err, write.ErrExists) works.
func (e *Error) Unwrap() error { return e.Kind }
