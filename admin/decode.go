package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"pidnode/internal/route"
	"pidnode/model"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0.
// The limits on the JSON inside a body are the model's (model.MaxJSONDepth).
const DefaultMaxBodyBytes = 1 << 20

// readBody reads a JSON request body of at most max bytes. It answers 415 for
// a Content-Type that is not JSON, 413 for a body over the limit and 400 for an
// empty body.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, _, err := readBodyOf(w, r, max, false)
	return body, err
}

// jsonLinesTypes are the media types of JSON Lines that the bulk route
// accepts besides JSON (route.JSONLinesTypes, which the feed writes).
var jsonLinesTypes = route.JSONLinesTypes

// readBodyOf is readBody that, if bulk is true, also accepts the bulk format's JSON Lines
// (jsonLinesTypes) and text/csv (model/bulk.go); kind is the one sent ("" for JSON).
func readBodyOf(w http.ResponseWriter, r *http.Request, max int64, bulk bool) (body []byte, kind string, err error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// "application/json" as it is, the common case, is its own media
		// type without parameters.
		mt, err := ct, error(nil)
		if ct != "application/json" {
			mt, _, err = mime.ParseMediaType(ct)
		}
		if err == nil && bulk && (slices.Contains(jsonLinesTypes, mt) || mt == "text/csv") {
			kind = mt
		}
		if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json") || kind != "") {
			if bulk {
				return nil, "", problem(http.StatusUnsupportedMediaType,
					"Content-Type %q is not accepted; send application/json (an array), application/jsonl or application/x-ndjson (JSON Lines), or text/csv", ct)
			}
			return nil, "", problem(http.StatusUnsupportedMediaType,
				"Content-Type %q is not accepted; send application/json", ct)
		}
	} else if r.ContentLength != 0 {
		return nil, "", problem(http.StatusUnsupportedMediaType, "Content-Type is missing; send application/json")
	}
	if r.ContentLength > max {
		return nil, "", problem(http.StatusRequestEntityTooLarge,
			"request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, max)
	}
	body, err = readAll(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, "", problem(http.StatusRequestEntityTooLarge,
				"request body exceeds the limit of %d bytes", mbe.Limit)
		}
		return nil, "", problem(http.StatusBadRequest, "reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, "", problem(http.StatusBadRequest, "request body is empty; send a JSON object")
	}
	return body, kind, nil
}

// readAll is io.ReadAll with room for size bytes (a request's
// ContentLength, -1 if unknown) from the start.
func readAll(rd io.Reader, size int64) ([]byte, error) {
	if size < 0 || size >= 1<<30 {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// readJSON reads the request body (with readBody's media-type and size checks)
// and decodes it strictly (decodeStrict) into a T.
func readJSON[T any](w http.ResponseWriter, r *http.Request, max int64) (T, error) {
	var v T
	body, err := readBody(w, r, max)
	if err != nil {
		return v, err
	}
	err = decodeStrict(body, &v)
	return v, err
}

// decodeStrict checks b (model.CheckJSON) and decodes it into a struct, rejecting
// unknown fields and wrong types with 400.
func decodeStrict(b []byte, v any) error {
	if err := model.CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return problem(http.StatusBadRequest, "field %q must be of type %s, not %s", te.Field, goTypeName(te.Type.Kind().String()), te.Value)
		}
		return problem(http.StatusBadRequest, "request body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func goTypeName(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	default:
		return "number"
	}
}
