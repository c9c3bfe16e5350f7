package operator

import (
	"errors"

	"pidnode/internal/refusal"
)

// Sentinel errors of the operator's service.
var (
	// ErrConfig: Config is missing a required field.
	ErrConfig = errors.New("operator: invalid configuration")
	// ErrNotFound: no application or SNAA has the id (or, for an
	// applicant, the id and status token do not match).
	ErrNotFound = errors.New("operator: not found")
	// ErrBadRequest: a query no record can answer (an unknown state).
	ErrBadRequest = errors.New("operator: bad request")
	// ErrConflict: the decision cannot be made in the record's state (an
	// application already decided, a namespace taken, too many open
	// applications).
	ErrConflict = errors.New("operator: conflict")
)

// Error is a refused decision: Kind is one of the sentinels above, Detail
// what the client is told.
type Error = refusal.Error

func refuse(kind error, detail string) *Error { return &Error{Kind: kind, Detail: detail} }
