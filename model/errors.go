package model

import (
	"errors"
	"fmt"
	"strings"
)

// ErrModel: a metadata model file is malformed. LoadModel returns it wrapped
// in *ModelError.
var ErrModel = errors.New("model: invalid metadata model")

// ModelError names the part of a metadata model file that is wrong.
type ModelError struct {
	Path string // e.g. "fields[4].schema.properties.label"
	Msg  string
}

func (e *ModelError) Error() string {
	if e.Path == "" {
		return "model: invalid metadata model: " + e.Msg
	}
	return fmt.Sprintf("model: invalid metadata model at %s: %s", e.Path, e.Msg)
}

func (e *ModelError) Unwrap() error { return ErrModel }

// SyntaxError: the JSON text of a write is not one well-formed JSON value in
// valid UTF-8 within MaxJSONDepth and without duplicate object keys. Msg is a
// sentence for whoever sent it (an API answers it as a malformed request).
type SyntaxError struct {
	Msg string
}

func (e *SyntaxError) Error() string { return "model: " + e.Msg }

// FieldError is one faulty field of a payload: Field is a path such as
// "metadata.resource_info.representation_variants[0].media_type".
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every faulty field of a payload.
type ValidationError struct {
	Errors []FieldError
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("model: invalid payload: ")
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(fe.Field)
		b.WriteString(": ")
		b.WriteString(fe.Message)
	}
	return b.String()
}
