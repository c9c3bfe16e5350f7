package write

import (
	"errors"
	"strings"

	"pidnode/handlev"
	"pidnode/model"
)

// The one validation path of identifier writes. A single create or update
// and every bulk item run the same checks in the same order and fail with
// the same errors, so that a client learns the same thing whichever route
// it takes:
//
//  1. the request itself (body size, media type, JSON syntax; for bulk, the
//     whole body, then "each item is an object with a string id"): the
//     caller's reading of the body, then Bulk;
//  2. for a create with a custom id: the SNAA may choose ids
//     (ErrForbidden), the id's syntax, ids reserved by the caller's routes
//     (Config.ReservedID), and the check character of an id shaped like a
//     generated one (*model.ValidationError);
//  3. the payload's shape: only "url" and "metadata", of the right JSON types
//     (model.CheckPayload);
//  4. the complete record against the metadata model: the payload of a
//     create (model.Model.CheckCreate), or for an update the stored record
//     merged with the payload, in the write transaction (model.Model.Merge);
//     each field's stored size included, so that no payload is refused by the
//     store after passing the model;
//  5. the record built from it (model.Model.Build) against the store's
//     limits per record (model.Model.CheckRecord): in prepareCreate, and in
//     txUpdate where the stored record's other values count too.

// CheckCustomID is step 2 for a custom id (not empty) in t. A caller may
// run it before reading a request's body; Create runs it again.
func (s *Service) CheckCustomID(a *Actor, t Target, id string) error {
	if !a.SNAA.CustomIDs {
		return refuse(ErrForbidden, "SNAA "+a.SNAA.ID+" may not choose custom ids; ask the operator to allow them, or create with a generated id")
	}
	if err := handlev.ValidCustomID(id); err != nil {
		return invalidField("id", strings.TrimPrefix(err.Error(), "handlev: bad custom id: "))
	}
	if s.reserved != nil {
		if msg, ok := s.reserved(id); ok {
			return invalidField("id", msg)
		}
	}
	nd := strings.ReplaceAll(id, "-", "")
	if looks, valid := handlev.ValidGenerated([]byte(t.Namespace), []byte(nd)); looks && !valid {
		return invalidField("id", "has the shape of a generated id but a wrong check character; resolvers would report it as mistyped")
	}
	return nil
}

// checkCreate runs steps 2 to 4 of a create: customID "" is a generated id.
// A custom id that is faulty (not forbidden) is reported with the payload's
// faulty fields, so that a form shows every error at once.
func (s *Service) checkCreate(a *Actor, t Target, customID string, obj map[string]any) (*model.Write, error) {
	if customID != "" {
		if err := s.CheckCustomID(a, t, customID); err != nil {
			var ve *model.ValidationError
			if !errors.As(err, &ve) {
				return nil, err
			}
			_, perr := s.model.CheckCreate(obj)
			var pve *model.ValidationError
			if errors.As(perr, &pve) {
				ve.Errors = append(ve.Errors, pve.Errors...)
			}
			return nil, ve
		}
	}
	return s.model.CheckCreate(obj)
}

// IsFieldError reports whether err is a faulty field (of a custom id, say)
// rather than a refusal: a front that checks a custom id before reading the
// body goes on reading it, so that Create reports the id's error together
// with the payload's.
func IsFieldError(err error) bool {
	var ve *model.ValidationError
	return errors.As(err, &ve)
}

func invalidField(field, msg string) *model.ValidationError {
	return &model.ValidationError{Errors: []model.FieldError{{Field: field, Message: msg}}}
}
