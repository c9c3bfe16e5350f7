package admin

import (
	"errors"
	"fmt"

	"pidnode/model"
)

// Sentinel errors returned by New and the Server's methods.
var (
	// ErrConfig: Config is missing a required field or holds an invalid value.
	ErrConfig = errors.New("admin: invalid configuration")
	// ErrModel: Config.Model is malformed. New returns it wrapped in a
	// *model.ModelError that names the faulty part.
	ErrModel = model.ErrModel
	// ErrNotEmpty: SeedDemo was called on a database that already holds SNAAs.
	ErrNotEmpty = errors.New("admin: database is not empty")
)

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

// problemTypes are the stable "type" URIs of every problem the API returns.
// They are relative references (RFC 9457 §3.1.1) resolved against the admin URL;
// /openapi.json documents each.
var problemTitles = map[int]string{
	400: "Malformed request",
	401: "Missing or invalid API key",
	403: "Forbidden",
	404: "Not found",
	405: "Method not allowed",
	409: "Conflict",
	412: "Precondition failed",
	413: "Request body too large",
	415: "Unsupported media type",
	422: "Validation failed",
	429: "Too many requests",
	500: "Internal error",
	503: "Unavailable",
	507: "Storage full",
}

var problemSlugs = map[int]string{
	400: "malformed", 401: "unauthorized", 403: "forbidden", 404: "not-found",
	405: "method-not-allowed", 409: "conflict", 412: "precondition-failed",
	413: "too-large", 415: "unsupported-media-type", 422: "validation",
	429: "rate-limited", 500: "internal", 503: "unavailable",
	507: "storage-full",
}

// problemKeyLimit is the type of the refusal of a key beyond its SNAA's
// limit of unrevoked keys (409, keyLimitProblem): a client tells it from
// other conflicts by this type, and frees a slot by revoking a key.
const problemKeyLimit = "/problems/key-limit"

// problem builds a Problem for status with a detail message.
func problem(status int, format string, args ...any) *Problem {
	return &Problem{
		Type:   "/problems/" + problemSlugs[status],
		Title:  problemTitles[status],
		Status: status,
		Detail: fmt.Sprintf(format, args...),
	}
}

func (p *Problem) with(k, v string) *Problem {
	if p.header == nil {
		p.header = map[string]string{}
	}
	p.header[k] = v
	return p
}
