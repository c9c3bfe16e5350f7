// Package route is the one shape of an admin API route that a feature
// package builds and the API registers (docs/architecture.md practice 18):
// a row of the table of routes under an SNAA's namespace collection
// (…/handles/{prefix}/{ns}/), with its handler, the custom ids it reserves
// and its OpenAPI operations. It sits below admin and the features, so a
// feature serves its routes without importing the API, and the API
// registers them without knowing the feature. It holds no state; a handler
// reports a client error as an *Error, which the API writes as problem+json.
//
// What a handler needs of the API beyond the namespace (who calls, the
// API's body decoder, its maintenance refusal, a fresh look-up of the key
// for a stream) comes in the request's Call, built by the API; the rules
// every listing shares (PageParams, FirstAccepted, JSONLinesTypes,
// WriteJSON) are here so that a feature and the API apply the same ones.
// It must stay small: a helper only the API or only one feature uses
// belongs there.
package route

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Target is the namespace a request addresses, checked by the API against
// the caller's key before the handler runs, and what the API lends the
// handler for this request (Call).
type Target struct {
	Prefix    string // canonical upper case
	Namespace string // the SNAA's namespace
	Call      *Call
}

// Call is who sent a request, as the API found its key, and the API's own
// rules a feature's handler applies through it, so that a feature reads
// and refuses a request as every other route does.
type Call struct {
	SNAA  string // the calling SNAA's id
	KeyID string // the id of the key it called with
	Actor string // the audit log's actor of its writes
	// Writable returns the refusal of a write while this node takes none
	// (maintenance), nil otherwise.
	Writable func() error
	// DecodeJSON reads the request's JSON body (at most max bytes) into v
	// strictly, refusing what the API's other routes refuse (media type,
	// size, syntax, unknown fields, types) with the same problems.
	DecodeJSON func(max int64, v any) error
	// KeyValid looks the caller's key up again (a reply that outlives the
	// request's admission, a stream): nil while it is valid and its SNAA
	// not suspended, else the API's refusal. KeyChanges returns a channel
	// closed at the next change of keys or SNAAs on this node.
	KeyValid   func() error
	KeyChanges func() <-chan struct{}
	// Stream counts a stream open on the API's gauge until end is called.
	Stream func() (end func())
}

// Draining returns the channel that is closed when the API's listener
// serving ctx's request drains or shuts down (a stream ends then), nil
// (never closed) outside such a listener.
func Draining(ctx context.Context) <-chan struct{} {
	c, _ := ctx.Value(drainKey{}).(<-chan struct{})
	return c
}

// WithDraining is ctx with the channel Draining returns.
func WithDraining(ctx context.Context, drained <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainKey{}, drained)
}

type drainKey struct{}

// JSONLinesTypes are the media types of JSON Lines the API reads and
// writes besides JSON: application/jsonl (https://jsonlines.org) and the
// older, widely sent application/x-ndjson (https://github.com/ndjson/ndjson-spec).
var JSONLinesTypes = []string{"application/jsonl", "application/x-ndjson"}

// Handler serves a route: id is the identifier (a Suffix route) or the path
// after the collection (a Name route). A returned *Error is the reply; any
// other error is mapped by the API (unavailable writers, internal errors).
type Handler func(w http.ResponseWriter, r *http.Request, t Target, id string) error

// Route is one row of the namespace route table.
type Route struct {
	// Name is a collection route's path after the collection ("stats");
	// Suffix an identifier route's last segment after the id ("history").
	// One of them is set. Each reserves the custom ids that would collide.
	Name, Suffix string
	// Tree: the route also owns every path under Name/, for every method
	// (its handler answers 404 and 405 itself).
	Tree bool
	// Ops are its operations: the methods it serves and their OpenAPI
	// documentation.
	Ops []Op
	H   Handler
}

// Op is one operation of a route: Path is after the collection (Name
// routes) or after {id} (Suffix routes).
type Op struct {
	Method, Path string
	Doc          Doc
}

// Doc is an operation's OpenAPI documentation: what a namespace feature's
// operations need of the API's.
type Doc struct {
	Summary  string
	Auth     string // "", "operator", "snaa"
	OK       int    // success status
	OKSchema string // component schema of the success body ("" = none)
	Errs     []int  // further error statuses
	Request  string // component schema of the JSON request body ("" = none)
	OKHeads  []string
	Query    []Param
	Headers  []Param // documented request headers
	Tag      string
	// Alt are the other media types of the success body (Accept), each
	// documented as text.
	Alt []Param
}

// Param is a documented query parameter.
type Param struct{ Name, Desc string }

// Error is a client error a handler replies with: the API writes it as a
// problem+json body of Status, with Fields as its errors.
type Error struct {
	Status int
	Detail string
	Fields []Field
	// Header are header lines of the reply (Allow, Retry-After).
	Header map[string]string
	// Limit, if set, names the limit that refused: the API counts the
	// refusal by it (pidnode_admin_limit_refusals_total).
	Limit string
}

// Field is one faulty parameter or field of a request (a problem's
// errors[] item).
type Field struct{ Field, Message string }

// FieldErrorf is the 400 refusal of the query parameter field: its detail
// is the field's name and msg.
func FieldErrorf(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Detail: field + " " + msg, Fields: []Field{{field, msg}}}
}

func (e *Error) Error() string { return e.Detail }

// Errorf is an *Error of status with a formatted detail.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// WriteJSON writes v as the JSON reply of status: encoding/json's text
// without HTML escaping, with a trailing newline, as every JSON reply of
// the API is written.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Marshal is json.Marshal without HTML escaping, with a trailing newline.
func Marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// DefaultLimit and MaxLimit bound ?limit= of a paged listing.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// PageParams reads a paged listing's ?after= (or ?cursor=) and ?limit=
// (default DefaultLimit, at most MaxLimit).
func PageParams(r *http.Request) (after string, limit int, err *Error) {
	q := r.URL.Query()
	after = q.Get("after")
	if after == "" {
		after = q.Get("cursor")
	}
	limit = DefaultLimit
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxLimit {
			return "", 0, Errorf(http.StatusBadRequest, "limit must be an integer from 1 to %d", MaxLimit)
		}
		limit = n
	}
	return after, limit, nil
}

// FirstAccepted is the first media range of Accept, in the client's order
// and q=0 ranges skipped, that is one of offered (lower case); "" if none
// is.
func FirstAccepted(accept string, offered []string) string {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(part, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if !qZero(params) && slices.Contains(offered, mt) {
			return mt
		}
	}
	return ""
}

// qZero reports whether media type parameters hold q=0.
func qZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && f == 0
		}
	}
	return false
}
