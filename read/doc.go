// Package read holds the read functions of identifiers that every front
// shows an SNAA: one identifier (Reader.Get), a page of a namespace
// (Reader.List, by namespace range or by URL through the URL index, with a
// status filter and an opaque cursor), a numbered page of a search
// (Reader.Search: words, status, sort order, total, through the registry's
// search index) and its export (Reader.Export), an identifier's history
// (Reader.History: the audited writes and the record's change log), and
// the Identifier view they return, with its one encoder (AppendJSON, byte
// for byte what encoding/json writes without HTML escaping).
//
// The JSON API encodes what it returns; an HTML page renders the same
// values, so that what a page shows of an identifier is what the API
// answers for it.
//
// # What it must not do
//
// It imports no net/http and knows no status code: a refusal is an *Error
// around ErrNotFound, ErrBadCursor or ErrBadQuery, which each front maps in its own
// place (admin's problemOf). It does not authenticate: the caller passes
// the prefix and namespace it has checked the reader may see. It writes
// nothing.
//
// # Caveats
//
// Metadata values are as model.Extract gives them (numbers as json.Number),
// not as a JSON round trip of the API's reply gives them (float64): a page
// that shows what the API answers passes them through Plain, the one place
// that turns one into the other.
package read
