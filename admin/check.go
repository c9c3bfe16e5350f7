package admin

import (
	"errors"
	"net/http"
	"strings"

	"pidnode/handlev"
	"pidnode/model"
)

// The one validation path of identifier writes. The single routes and every
// bulk item run the same checks in the same order and fail with the same
// errors, so that a client learns the same thing whichever route it takes:
//
//  1. the request itself (body size, media type, JSON syntax; for bulk, the
//     whole body, then "each item is an object with a string id");
//  2. for a create with a custom id: the SNAA may choose ids (403), the id's
//     syntax, reserved route names, and the check character of an id shaped
//     like a generated one (422);
//  3. the payload's shape: only "url" and "metadata", of the right JSON types
//     (model.CheckPayload);
//  4. the complete record against the metadata model: the payload of a
//     create (model.Model.CheckCreate), or for an update the stored record
//     merged with the payload, in the write transaction (model.Model.Merge);
//     each field's stored size included, so that no payload is refused by the
//     store (a 500) after passing the model;
//  5. the record built from it (model.Model.Build) against the store's
//     limits per record (model.Model.CheckRecord): in prepareCreate, and in
//     txUpdate where the stored record's other values count too.

// checkCustomID is step 2 for custom id (not empty) in the caller's namespace.
func checkCustomID(p *principal, t target, id string) error {
	if !p.snaa.CustomIDs {
		return problem(http.StatusForbidden, "SNAA %s may not choose custom ids; ask the operator to allow them, or create with a generated id", p.snaa.ID)
	}
	if err := handlev.ValidCustomID(id); err != nil {
		return &model.ValidationError{Errors: []FieldError{{Field: "id", Message: strings.TrimPrefix(err.Error(), "handlev: ")}}}
	}
	if reservedID(id) {
		// …/{id}/history, …/{id}/stats, …/{ns}/stats, …/{ns}/events and …/{ns}/bulk are routes of the API.
		return &model.ValidationError{Errors: []FieldError{{Field: "id", Message: reservedMsg}}}
	}
	nd := strings.ReplaceAll(id, "-", "")
	if looks, valid := handlev.ValidGenerated([]byte(t.ns), []byte(nd)); looks && !valid {
		return &model.ValidationError{Errors: []FieldError{{Field: "id", Message: "has the shape of a generated id but a wrong check character; resolvers would report it as mistyped"}}}
	}
	return nil
}

// checkCreate runs steps 2 to 4 of a create: customID "" is a generated id.
func (s *Server) checkCreate(p *principal, t target, customID string, obj map[string]any) (*model.Write, error) {
	if customID != "" {
		if err := checkCustomID(p, t, customID); err != nil {
			return nil, err
		}
	}
	return s.model.CheckCreate(obj)
}

// problemOf maps an error of a handler to the problem the client sees. ok is
// false for an unexpected error (database, encoding), which only the
// operator's log may describe.
func problemOf(err error) (p *Problem, ok bool) {
	var ve *model.ValidationError
	var se *model.SyntaxError
	switch {
	case errors.As(err, &p):
		return p, true
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
