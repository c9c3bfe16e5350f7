// Package refusal holds the one shape of a refused request in the services
// below the fronts (write, read, access): the sentinel saying what kind of
// refusal it is and the detail the client is told. Each service declares
// `type Error = refusal.Error` and its own sentinels; a front maps Kind to
// its answer in one place (admin's problemOf). It imports nothing.
package refusal

// Error is a refused request: Kind is the refusing package's sentinel,
// Detail what the client is told.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap returns Kind, so that errors.Is(err, write.ErrExists) works.
func (e *Error) Unwrap() error { return e.Kind }
