package admin

import (
	"errors"
	"fmt"

	"pidnode/internal/cfgerr"
	"pidnode/internal/httperr"
	"pidnode/model"
)

// Sentinel errors returned by New and the Server's methods.
var (
	// ErrConfig is wrapped by every *ConfigError New, NewListener and
	// CheckPolicy return.
	ErrConfig = errors.New("admin: invalid configuration")
	// ErrModel: Config.Model is malformed. New returns it wrapped in a
	// *model.ModelError that names the faulty part.
	ErrModel = model.ErrModel
	// ErrNotEmpty: SeedDemo was called on a database that already holds SNAAs.
	ErrNotEmpty = errors.New("admin: database is not empty")
)

// ConfigError reports a field New (Config), NewListener (ListenerConfig)
// or CheckPolicy (the Policy) rejected; it wraps ErrConfig.
type ConfigError = cfgerr.Error

// FieldError is one faulty field of a request, in a Problem's errors.
type FieldError = model.FieldError

// Problem is an RFC 9457 problem detail. Handlers return *Problem (or an error
// that writeError maps to one); it is the only shape of an error reply.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`

	// header lines to add to the reply (WWW-Authenticate, Allow, Retry-After).
	header map[string]string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("admin: %d %s: %s", p.Status, p.Title, p.Detail)
}

// problemTitles are the titles of the problems by status (httperr.Titles);
// /openapi.json documents each.
var problemTitles = httperr.Titles

// problem builds a Problem for status with a detail message.
func problem(status int, format string, args ...any) *Problem {
	hp := httperr.New(status, format, args...)
	return &Problem{Type: hp.Type, Title: hp.Title, Status: hp.Status, Detail: hp.Detail}
}

func (p *Problem) with(k, v string) *Problem {
	if p.header == nil {
		p.header = map[string]string{}
	}
	p.header[k] = v
	return p
}

// problemKeyLimit is the type of the refusal of a key beyond its SNAA's
// limit of unrevoked keys (409): a client tells it from other conflicts by
// this type, and frees a slot by revoking a key.
const problemKeyLimit = httperr.KeyLimitType

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
