package admin

import (
	"errors"
	"net/http"
	"strings"

	"pidnode/handlev"
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
//  3. the payload's shape: only "url" and "metadata", of the right JSON types;
//  4. the complete record (the payload of a create; for an update, the stored
//     record merged with the payload, in the write transaction) against the
//     metadata model.

// writeReq is a write that passed steps 2 and 3.
type writeReq struct {
	pl    *payload
	meta  map[string]any  // the payload's non-null metadata fields
	nulls map[string]bool // the payload's null metadata fields ("remove")
}

// checkCustomID is step 2 for custom id (not empty) in the caller's namespace.
func checkCustomID(p *principal, t target, id string) error {
	if !p.snaa.CustomIDs {
		return problem(http.StatusForbidden, "SNAA %s may not choose custom ids; ask the operator to allow them, or create with a generated id", p.snaa.ID)
	}
	if err := handlev.ValidCustomID(id); err != nil {
		return &ValidationError{Errors: []FieldError{{Field: "id", Message: strings.TrimPrefix(err.Error(), "handlev: ")}}}
	}
	if reservedID(id) {
		// …/{id}/history, …/{id}/stats, …/{ns}/stats and …/{ns}/bulk are routes of the API.
		return &ValidationError{Errors: []FieldError{{Field: "id", Message: reservedMsg}}}
	}
	nd := strings.ReplaceAll(id, "-", "")
	if looks, valid := handlev.ValidGenerated([]byte(t.ns), []byte(nd)); looks && !valid {
		return &ValidationError{Errors: []FieldError{{Field: "id", Message: "has the shape of a generated id but a wrong check character; resolvers would report it as mistyped"}}}
	}
	return nil
}

// checkPayloadShape is step 3: obj is the decoded body or bulk item (without "id").
func checkPayloadShape(obj map[string]any) (*writeReq, error) {
	pl, fe := payloadFrom(obj, "")
	if len(fe) > 0 {
		return nil, &ValidationError{Errors: fe}
	}
	w := &writeReq{pl: pl, meta: map[string]any{}, nulls: map[string]bool{}}
	for k, v := range pl.Metadata {
		if v == nil {
			w.nulls[k] = true
		} else {
			w.meta[k] = v
		}
	}
	return w, nil
}

// checkCreate runs steps 2 to 4 of a create: customID "" is a generated id.
func (s *Server) checkCreate(p *principal, t target, customID string, obj map[string]any) (*writeReq, error) {
	if customID != "" {
		if err := checkCustomID(p, t, customID); err != nil {
			return nil, err
		}
	}
	w, err := checkPayloadShape(obj)
	if err != nil {
		return nil, err
	}
	if fe := s.model.validateRecord(w.pl.URL, w.meta, w.nulls); len(fe) > 0 {
		return nil, &ValidationError{Errors: fe}
	}
	return w, nil
}

// checkUpdate runs step 3 of an update; txUpdate runs step 4 on the merged record.
func checkUpdate(obj map[string]any) (*writeReq, error) {
	return checkPayloadShape(obj)
}

// problemOf maps an error of a handler to the problem the client sees. ok is
// false for an unexpected error (database, encoding), which only the
// operator's log may describe.
func problemOf(err error) (p *Problem, ok bool) {
	var ve *ValidationError
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &ve):
		p = problem(http.StatusUnprocessableEntity, "%d field(s) are invalid; see errors", len(ve.Errors))
		p.Errors = ve.Errors
		return p, true
	}
	return problem(http.StatusInternalServerError, "internal error; the operator's log has details"), false
}
