// Package jsontext is pidnode's one tokenizer of JSON text and its one
// writer of JSON strings. The decoders built on it (handlev's Handle JSON
// and RESOURCE readers, model's payload decoder) walk the text with a
// Scanner, which checks the syntax of every byte it passes over; the
// encoders (handlev's Handle JSON, internal/stdjson's encoding/json-exact
// text) quote strings with AppendString.
//
// A Scanner never panics, on any input: every index is bounds-checked. It
// allocates only where a decoded string cannot alias the input (escapes)
// and the caller gave no memory to decode into. It does not build values:
// callers walk objects and arrays with callbacks and decode only the
// members they want.
//
// It imports the standard library only: it is a leaf below handlev, model
// and internal/stdjson.
package jsontext
