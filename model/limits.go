package model

import (
	"encoding/json"
	"fmt"
	"strconv"

	"pidnode/handlev"
)

// The store refuses a record it could not read back exactly (store.Tx.PutRecord):
// more than handlev.MaxValues values, a value's data or type over
// handlev.MaxLength bytes; and the record's Handle JSON text must fit
// handlev.MaxRecordJSON for an export to be imported again. A payload that
// passes the model's schema can still break these (700 related identifiers of
// 400 characters are one value of 340 KB), so the checks of a write know them
// too and refuse such a payload as invalid, naming the field and the limit,
// instead of failing in the store.

// appendData appends the data of the value that holds x, the field's
// validated payload value: a string as it is, any other JSON value as compact
// JSON in schema order.
func (f *FieldSpec) appendData(dst []byte, x any) []byte {
	if f.Encoding == "json" {
		return appendCanon(dst, x, f.Schema)
	}
	return append(dst, x.(string)...)
}

// checkValueSize adds an error at v's path if x, valid for f, is stored as
// more bytes than the store keeps per value. buf is scratch space, returned for reuse.
func (v *validator) checkValueSize(f *FieldSpec, x any, buf []byte) []byte {
	if s, ok := x.(string); ok && f.Encoding != "json" {
		if len(s) > handlev.MaxLength {
			v.add(v.path(), "is %d bytes; the limit per value is %d bytes", len(s), handlev.MaxLength)
		}
		return buf
	}
	if f.Encoding == "json" && canonBound(x, handlev.MaxLength) <= handlev.MaxLength {
		return buf // cannot be over the limit: not encoded
	}
	buf = f.appendData(buf[:0], x)
	if len(buf) > handlev.MaxLength {
		v.add(v.path(), "is %d bytes as stored (compact JSON); the limit per value is %d bytes", len(buf), handlev.MaxLength)
	}
	return buf
}

// canonBound returns an upper bound of the length of appendCanon's encoding
// of x, or a number above limit once it is sure to exceed it (or cannot
// tell: a value of a type DecodeAny does not make). A string's bound allows
// 6 bytes (\u00XX) for each of its bytes.
func canonBound(x any, limit int) int {
	switch t := x.(type) {
	case nil, bool:
		return len("false")
	case json.Number:
		return len(t)
	case string:
		return 2 + 6*len(t)
	case []any:
		n := 2 + len(t)
		for _, e := range t {
			if n += canonBound(e, limit); n > limit {
				return n
			}
		}
		return n
	case map[string]any:
		n := 2 + 2*len(t)
		for k, e := range t {
			if n += 2 + 6*len(k) + canonBound(e, limit); n > limit {
				return n
			}
		}
		return n
	}
	return limit + 1
}

// CheckRecord checks the values Build made for the record display against
// the limits the store enforces on every record (see above), so that a write
// the checks accepted is never refused by the store. Errors are
// *ValidationError naming the payload field of the faulty value ("url",
// "metadata.<name>"), "(change log)", "(value <index>)" for a value the model
// does not manage, or "(record)".
func (m *Model) CheckRecord(display string, vals []handlev.Value) error {
	var v validator
	if len(vals) > handlev.MaxValues {
		v.add("(record)", "would hold %d values; the limit per record is %d", len(vals), handlev.MaxValues)
	}
	for i := range vals {
		x := &vals[i]
		if len(x.Data) > handlev.MaxLength {
			v.add(m.valueField(x.Index), "is %d bytes as stored; the limit per value is %d bytes", len(x.Data), handlev.MaxLength)
		}
		if len(x.Type) > handlev.MaxLength {
			v.add(m.valueField(x.Index), "has a type of %d bytes; the limit is %d bytes", len(x.Type), handlev.MaxLength)
		}
	}
	if len(v.errs) == 0 && recordJSONBound(display, vals) > handlev.MaxRecordJSON {
		// {"handle":…,"values":[…]} as store.Export writes it, without the newline.
		n := len(`{"handle":,"values":}`) + len(handlev.AppendValuesJSON(handlev.AppendJSONString(nil, display), vals))
		if n > handlev.MaxRecordJSON {
			v.add("(record)", "would be %d bytes of Handle JSON; the limit per record is %d bytes", n, handlev.MaxRecordJSON)
		}
	}
	if len(v.errs) > 0 {
		return &ValidationError{Errors: v.errs}
	}
	return nil
}

// valueField names the value at index for an error.
func (m *Model) valueField(index int32) string {
	switch index {
	case m.URL.Index:
		return "url"
	case m.Changes.Index:
		return "(change log)"
	}
	for _, f := range m.Fields {
		if f.Index == index {
			return "metadata." + f.Name
		}
	}
	return "(value " + strconv.Itoa(int(index)) + ")"
}

// recordJSONBound is an upper bound of the length of a record's export line,
// cheap to compute: JSON text escapes a byte as at most 6 (\u00XX), base64 as
// 4/3 of it, and a value's fixed members (index, TTL, timestamp, …) take
// under 256 bytes; references and admin or vlist entries cost at most 6 times
// their binary size.
func recordJSONBound(display string, vals []handlev.Value) int {
	n := 64 + 6*len(display)
	for i := range vals {
		x := &vals[i]
		n += 256 + 6*(len(x.Type)+len(x.Data))
		for _, r := range x.Refs {
			n += 6 * (len(r.Handle) + 8)
		}
	}
	return n
}

// checkModelLimits checks the parts of a model that become values against
// the store's limits.
func (m *Model) checkModelLimits() error {
	if m.Changes.MaxBytes < 0 || m.Changes.MaxBytes > handlev.MaxLength {
		return &ModelError{Path: "changes.max_bytes", Msg: fmt.Sprintf("must be 1 to %d (the store's limit per value)", handlev.MaxLength)}
	}
	return nil
}
