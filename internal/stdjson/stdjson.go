// Package stdjson appends JSON text byte for byte as encoding/json writes it
// (json.Marshal, or a json.Encoder with SetEscapeHTML(false), without the
// Encoder's newline) for the values the admin API's hot paths encode: strings,
// times, and the generic values that json.Decoder with UseNumber produces
// (nil, bool, string, json.Number, []any, map[string]any). It exists because
// encoding/json's reflection was a large share of a create's CPU; the output
// must never differ from encoding/json's, which the tests check.
//
// The functions append to dst and retain nothing. AppendValue reports false
// for a value it does not handle the way encoding/json would (another Go
// type, an invalid json.Number): the caller then uses encoding/json.
//
// It imports the standard library and internal/jsontext, whose string
// encoder it shares with handlev.
package stdjson

import (
	"encoding/json"
	"slices"
	"time"

	"pidnode/internal/jsontext"
)

// AppendString appends s quoted as encoding/json writes a string: with
// escapeHTML, <, > and & as \u003c, \u003e, \u0026 (json.Marshal); invalid
// UTF-8 as \ufffd; U+2028 and U+2029 escaped. It is internal/jsontext's
// string encoder, the one handlev's Handle JSON uses too.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	esc := jsontext.EscapeInvalid
	if escapeHTML {
		esc |= jsontext.EscapeHTML
	}
	return jsontext.AppendString(dst, s, esc)
}

// AppendTime appends t as time.Time's MarshalJSON writes it (RFC 3339 with
// nanoseconds, quoted). ok is false where MarshalJSON fails (a year outside
// 0–9999, a zone offset of 24 hours or more).
func AppendTime(dst []byte, t time.Time) (_ []byte, ok bool) {
	dst = append(dst, '"')
	dst, err := t.AppendText(dst)
	if err != nil {
		return dst, false
	}
	return append(dst, '"'), true
}

// AppendValue appends x, a generic JSON value, as encoding/json encodes it:
// object members sorted by key, nil maps and slices as null. ok is false for
// a value of another type anywhere in x, or a json.Number that is not a
// number; dst is then unspecified.
func AppendValue(dst []byte, x any, escapeHTML bool) (_ []byte, ok bool) {
	switch t := x.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if t {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		return AppendString(dst, t, escapeHTML), true
	case json.Number:
		if t == "" {
			return append(dst, '0'), true
		}
		if !ValidNumber(string(t)) {
			return dst, false
		}
		return append(dst, t...), true
	case []any:
		if t == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = AppendValue(dst, e, escapeHTML); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		return AppendObject(dst, t, escapeHTML)
	}
	return dst, false
}

// AppendObject is AppendValue of a map.
func AppendObject(dst []byte, m map[string]any, escapeHTML bool) (_ []byte, ok bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k, escapeHTML)
		dst = append(dst, ':')
		if dst, ok = AppendValue(dst, m[k], escapeHTML); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// ValidNumber reports whether s is a JSON number (RFC 8259 §6), as
// encoding/json checks a json.Number before writing it.
func ValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	default:
		return false
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
