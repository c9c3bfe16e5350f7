// Package httperr is the one map from the errors of the services below
// the HTTP fronts (write, read, access, operator, model, a feature's
// internal/route rows, a Writer that cannot commit now) to an RFC 9457
// problem: its status, type, title, detail, faulty fields and the header
// lines that go with it (Retry-After, WWW-Authenticate). The JSON API
// (admin) writes the problem as problem+json, the console (console) shows
// it on its page; both therefore answer one refusal with one status and
// one text. It writes nothing itself and holds no state.
package httperr

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"pidnode/access"
	"pidnode/internal/refusal"
	"pidnode/internal/route"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/people"
	"pidnode/read"
	"pidnode/write"
)

// Problem is an RFC 9457 problem detail.
type Problem struct {
	Type   string             `json:"type"`
	Title  string             `json:"title"`
	Status int                `json:"status"`
	Detail string             `json:"detail,omitempty"`
	Errors []model.FieldError `json:"errors,omitempty"`
	// Header holds the header lines of the reply (Retry-After,
	// WWW-Authenticate, Allow).
	Header map[string]string `json:"-"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// With sets header line k to v and returns p.
func (p *Problem) With(k, v string) *Problem {
	if p.Header == nil {
		p.Header = map[string]string{}
	}
	p.Header[k] = v
	return p
}

// Titles are the titles of the problems by status; their "type" URIs are
// "/problems/" and the slug of Slugs, relative references (RFC 9457
// §3.1.1) resolved against the admin URL.
var Titles = map[int]string{
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

// Slugs are the last segments of the problems' type URIs by status.
var Slugs = map[int]string{
	400: "malformed", 401: "unauthorized", 403: "forbidden", 404: "not-found",
	405: "method-not-allowed", 409: "conflict", 412: "precondition-failed",
	413: "too-large", 415: "unsupported-media-type", 422: "validation",
	429: "rate-limited", 500: "internal", 503: "unavailable",
	507: "storage-full",
}

// KeyLimitType is the type of the refusal of a key beyond its SNAA's limit
// of unrevoked keys (409): a client tells it from other conflicts by this
// type, and frees a slot by revoking a key.
const KeyLimitType = "/problems/key-limit"

// New builds the Problem of status with a detail message.
func New(status int, format string, args ...any) *Problem {
	return &Problem{Type: "/problems/" + Slugs[status], Title: Titles[status], Status: status, Detail: fmt.Sprintf(format, args...)}
}

// InvalidToken is the 401 of a bearer token that is no valid key.
func InvalidToken(detail string) *Problem {
	return New(http.StatusUnauthorized, "%s", detail).With("WWW-Authenticate", `Bearer realm="pidnode", error="invalid_token"`)
}

// Of maps err to its problem. ok is false for an unexpected error
// (database, encoding), whose problem is a bare 500 that says nothing of
// it: only the operator's log may describe it.
func Of(err error) (p *Problem, ok bool) {
	var ve *model.ValidationError
	var se *model.SyntaxError
	var rf *refusal.Error
	var rte *route.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &rf):
		return ofRefusal(rf), true
	case errors.As(err, &rte):
		p = New(rte.Status, "%s", rte.Detail)
		for _, f := range rte.Fields {
			p.Errors = append(p.Errors, model.FieldError{Field: f.Field, Message: f.Message})
		}
		for k, v := range rte.Header {
			p.With(k, v)
		}
		return p, true
	case errors.Is(err, access.ErrUnknownKey):
		return InvalidToken("unknown API key"), true
	case errors.Is(err, access.ErrRevokedKey):
		return InvalidToken(err.Error()), true
	}
	if up, ok := unavailableProblem(err); ok {
		return up, true
	}
	if f, ok := storageFull(err); ok {
		return New(http.StatusInsufficientStorage, "writes are refused: the cluster's storage is full; the operator must free space (resolution is not affected): %v", f), true
	}
	switch {
	case errors.As(err, &se):
		return New(http.StatusBadRequest, "%s", se.Msg), true
	case errors.As(err, &ve):
		p = New(http.StatusUnprocessableEntity, "%d field(s) are invalid; see errors", len(ve.Errors))
		p.Errors = ve.Errors
		return p, true
	}
	return New(http.StatusInternalServerError, "internal error; the operator's log has details"), false
}

// ofRefusal is the problem of a request a service refused: the one map
// from their sentinels to statuses.
func ofRefusal(e *refusal.Error) *Problem {
	status := http.StatusInternalServerError
	switch e.Kind {
	case people.ErrDenied, people.ErrOIDC:
		status = http.StatusUnauthorized
	case people.ErrLocked:
		status = http.StatusTooManyRequests
	case write.ErrForbidden, access.ErrSuspended:
		status = http.StatusForbidden
	case write.ErrNotFound, read.ErrNotFound, access.ErrNoSNAA, access.ErrNoKey, operator.ErrNotFound, people.ErrNotFound:
		status = http.StatusNotFound
	case write.ErrExists, operator.ErrConflict, people.ErrConflict:
		status = http.StatusConflict
	case write.ErrPrecondition:
		status = http.StatusPreconditionFailed
	case write.ErrIdempotencyMismatch:
		status = http.StatusUnprocessableEntity
	case read.ErrBadCursor, read.ErrBadQuery, operator.ErrBadRequest:
		status = http.StatusBadRequest
	case access.ErrRateLimited:
		status = http.StatusTooManyRequests
	case access.ErrMaintenance:
		status = http.StatusServiceUnavailable
	case access.ErrKeyLimit:
		p := New(http.StatusConflict, "%s", e.Detail)
		p.Type, p.Title = KeyLimitType, "Too many keys"
		return p
	}
	p := New(status, "%s", e.Detail)
	if e.RetryAfter > 0 {
		p.With("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	return p
}

// unavailable is an error of a Writer that could not have its write
// decided (a cluster node that cannot reach a quorum of etcd): the client
// is told to retry after RetryAfter, with 503.
type unavailable interface {
	error
	RetryAfter() time.Duration
}

func unavailableProblem(err error) (*Problem, bool) {
	var u unavailable
	if !errors.As(err, &u) {
		return nil, false
	}
	secs := max(int(math.Ceil(u.RetryAfter().Seconds())), 1)
	return New(http.StatusServiceUnavailable, "writes are unavailable: %v; retry in %d s (resolution is not affected)", u, secs).
		With("Retry-After", strconv.Itoa(secs)), true
}

// StorageFull reports whether err is a Writer's refusal because its store
// is full (a cluster node's etcd at its quota, its NOSPACE alarm raised):
// an error with a StorageFull() bool method that returns true. Retrying
// does not help, so the problem is 507 without Retry-After.
func StorageFull(err error) bool {
	_, ok := storageFull(err)
	return ok
}

func storageFull(err error) (error, bool) {
	var f interface {
		error
		StorageFull() bool
	}
	if errors.As(err, &f) && f.StorageFull() {
		return f, true
	}
	return nil, false
}
