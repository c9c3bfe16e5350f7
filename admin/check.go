package admin

import (
	"errors"

	"pidnode/internal/httperr"
)

// problemOf maps an error of a handler to the problem the client sees: the
// one place where the write service's errors (write.Error, model's
// validation errors) and the Writer's become problem+json. ok is false for
// an unexpected error (database, encoding), which only the operator's log
// may describe.
func problemOf(err error) (p *Problem, ok bool) {
	if errors.As(err, &p) {
		return p, true
	}
	hp, ok := httperr.Of(err)
	p = &Problem{Type: hp.Type, Title: hp.Title, Status: hp.Status, Detail: hp.Detail, Errors: hp.Errors}
	for k, v := range hp.Header {
		p.with(k, v)
	}
	return p, ok
}
