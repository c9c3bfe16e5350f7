// Package model is pidnode's metadata model: the data-driven language that
// says which fields an identifier's payload has, which handle value (index,
// type) each becomes and the rules its value obeys (docs/metadata-model.md),
// and everything that follows from it for a write.
//
// It owns:
//   - the model language: LoadModel parses and checks a model file (JSON or
//     TOML); DefaultModel is the embedded pid4cat model;
//   - decoding the JSON text of a write (DecodeAny, DecodeObject): valid UTF-8,
//     one value, at most MaxJSONDepth deep, no duplicate keys;
//   - the checks of a write, in one order for every caller (write.go): the
//     payload's shape (CheckPayload), then the complete record against the
//     model (CheckCreate; Merge for an update), reporting every faulty field
//     at once as *ValidationError;
//   - building a handle record from a validated payload (Build: values in
//     index order, one change-log entry per changed field, values the model
//     does not manage kept) and reading one back (Extract).
//
// It must not know about transports or storage: no net/http, no store, no
// bbolt. It imports handlev, the standard library and its parser of TOML.
// The admin API, a browser console and a cluster applier use it alike, and
// map its errors to their own replies (a *SyntaxError is a malformed request,
// a *ValidationError a payload that fails the model).
//
// A *Model is immutable after LoadModel and safe for concurrent use.
package model
