package admin

import (
	"errors"
	"net/http"

	"pidnode/access"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/read"
	"pidnode/write"
)

// problemOf maps an error of a handler to the problem the client sees: the
// one place where the write service's errors (write.Error, model's
// validation errors) and the Writer's become problem+json. ok is false for
// an unexpected error (database, encoding), which only the operator's log
// may describe.
func problemOf(err error) (p *Problem, ok bool) {
	var ve *model.ValidationError
	var se *model.SyntaxError
	var we *write.Error
	var ae *access.Error
	var rde *read.Error
	var rte *route.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &we):
		return problem(writeStatus(we.Kind), "%s", we.Detail), true
	case errors.As(err, &rde):
		return readProblem(rde), true
	case errors.As(err, &rte):
		return problem(rte.Status, "%s", rte.Detail), true
	case errors.As(err, &ae):
		return accessProblem(ae), true
	case errors.Is(err, access.ErrUnknownKey):
		return invalidToken("unknown API key"), true
	case errors.Is(err, access.ErrRevokedKey):
		return invalidToken(err.Error()), true
	}
	if up, ok := unavailableProblem(err); ok {
		return up, true
	}
	if fp, ok := storageFullProblem(err); ok {
		return fp, true
	}
	switch {
	case errors.As(err, &se):
		return problem(http.StatusBadRequest, "%s", se.Msg), true
	case errors.As(err, &ve):
		p = problem(http.StatusUnprocessableEntity, "%d field(s) are invalid; see errors", len(ve.Errors))
		p.Errors = ve.Errors
		return p, true
	}
	return problem(http.StatusInternalServerError, "internal error; the operator's log has details"), false
}

// validator collects every faulty field of an operator request, as the
// model's checks do for payloads.
type validator = model.Collector

// writeStatus is the HTTP status of a write.Error's Kind.
func writeStatus(kind error) int {
	switch kind {
	case write.ErrForbidden:
		return http.StatusForbidden
	case write.ErrNotFound:
		return http.StatusNotFound
	case write.ErrExists:
		return http.StatusConflict
	case write.ErrPrecondition:
		return http.StatusPreconditionFailed
	case write.ErrIdempotencyMismatch:
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// accessProblem is the problem of a refused write of keys.
func accessProblem(e *access.Error) *Problem {
	switch e.Kind {
	case access.ErrNoSNAA, access.ErrNoKey:
		return problem(http.StatusNotFound, "%s", e.Detail)
	case access.ErrKeyLimit:
		p := problem(http.StatusConflict, "%s", e.Detail)
		p.Type, p.Title = problemKeyLimit, "Too many keys"
		return p
	}
	return problem(http.StatusInternalServerError, "%s", e.Detail)
}

// readProblem is the problem of a refused read.
func readProblem(e *read.Error) *Problem {
	if e.Kind == read.ErrBadCursor {
		return problem(http.StatusBadRequest, "%s", e.Detail)
	}
	return problem(http.StatusNotFound, "%s", e.Detail)
}
