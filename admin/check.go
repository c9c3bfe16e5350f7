package admin

import (
	"errors"
	"net/http"

	"pidnode/access"
	"pidnode/internal/refusal"
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
	var rf *refusal.Error
	var rte *route.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &rf):
		return refusalProblem(rf), true
	case errors.As(err, &rte):
		p = problem(rte.Status, "%s", rte.Detail)
		for _, f := range rte.Fields {
			p.Errors = append(p.Errors, FieldError{Field: f.Field, Message: f.Message})
		}
		for k, v := range rte.Header {
			p.with(k, v)
		}
		return p, true
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

// refusalProblem is the problem of a request the write, read or access
// service refused: the one map from their sentinels to statuses.
func refusalProblem(e *refusal.Error) *Problem {
	status := http.StatusInternalServerError
	switch e.Kind {
	case write.ErrForbidden:
		status = http.StatusForbidden
	case write.ErrNotFound, read.ErrNotFound, access.ErrNoSNAA, access.ErrNoKey:
		status = http.StatusNotFound
	case write.ErrExists:
		status = http.StatusConflict
	case write.ErrPrecondition:
		status = http.StatusPreconditionFailed
	case write.ErrIdempotencyMismatch:
		status = http.StatusUnprocessableEntity
	case read.ErrBadCursor:
		status = http.StatusBadRequest
	case access.ErrKeyLimit:
		p := problem(http.StatusConflict, "%s", e.Detail)
		p.Type, p.Title = problemKeyLimit, "Too many keys"
		return p
	}
	return problem(status, "%s", e.Detail)
}
