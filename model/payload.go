package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"pidnode/handlev"
	"pidnode/internal/stdjson"
)

// MaxURLBytes bounds a landing page URL (docs/product.md §4).
const MaxURLBytes = 2048

// checkHTTPURL returns "" when s is an absolute http(s) URL that is safe to
// put in a Location header, else a message saying why not.
func checkHTTPURL(s string) string {
	if len(s) > MaxURLBytes {
		return fmt.Sprintf("must be at most %d bytes, has %d", MaxURLBytes, len(s))
	}
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	for _, r := range s {
		if r < 0x21 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return "must not contain spaces or control characters (CR, LF, tab, …); percent-encode them"
		}
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "must be an absolute http or https URL"
	}
	scheme := strings.ToLower(s[:i])
	if scheme != "http" && scheme != "https" {
		return fmt.Sprintf("must be an absolute http or https URL, not a %s: URL", truncate(scheme, 20))
	}
	u, err := url.Parse(s)
	if err != nil {
		return "must be a valid URL: " + strings.TrimPrefix(err.Error(), "parse ")
	}
	if !strings.HasPrefix(s[i:], "://") || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute http or https URL with a host (https://host/path)"
	}
	if strings.ContainsRune(s, '\\') {
		return "must not contain backslashes"
	}
	// The resolver's own rule last: a URL accepted here is one it redirects
	// to, never one that would resolve to a values page instead.
	var ue *handlev.URLError
	if err := handlev.CheckTargetURL([]byte(s)); errors.As(err, &ue) {
		return "must be a URL the resolver can redirect to: its " + ue.Part + " " + ue.Reason
	} else if err != nil {
		return "must be a URL the resolver can redirect to: " + err.Error()
	}
	return ""
}

// Payload is the shape-checked JSON of a create or update: URL (nil = absent)
// and the metadata fields present (a nil value means "remove", only in updates).
type Payload struct {
	URL      *string
	Metadata map[string]any
	// HasMeta: the JSON had a "metadata" object (an update without it keeps
	// the stored metadata as it is).
	HasMeta bool
}

// ParsePayload decodes the JSON text of a write (DecodeObject) and checks its
// shape (CheckPayload). Field values are validated later, on the complete
// record (ValidateRecord).
func ParsePayload(body []byte) (*Payload, error) {
	top, err := DecodeObject(body)
	if err != nil {
		return nil, err
	}
	p, fe := payloadFrom(top, "")
	if len(fe) > 0 {
		return nil, &ValidationError{Errors: fe}
	}
	return p, nil
}

// payloadFrom checks the shape of one write object. Field paths start with at.
func payloadFrom(top map[string]any, at string) (*Payload, []FieldError) {
	var val validator
	p := &Payload{}
	for k := range top {
		if k != "url" && k != "metadata" {
			val.add(at+k, "is not a field here; the fields are url, metadata")
		}
	}
	if x, ok := top["url"]; ok && x != nil {
		if s, ok := x.(string); ok {
			p.URL = &s
		} else {
			val.add(at+"url", "must be a web address (text), not %s", jsonType(x))
		}
	} else if ok {
		val.add(at+"url", "must have a value: an identifier always has a landing page")
	}
	if x, ok := top["metadata"]; ok && x != nil {
		if m, ok := x.(map[string]any); ok {
			p.Metadata = m
			p.HasMeta = true
		} else {
			val.add(at+"metadata", "must be a group of fields, not %s", jsonType(x))
		}
	} else if ok {
		val.add(at+"metadata", "must have a value")
	}
	sortErrs(val.errs)
	return p, val.errs
}

// MergePatch applies an RFC 7396 JSON merge patch: present members replace,
// null members are removed, absent members stay; objects merge recursively.
func MergePatch(dst any, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := dst.(map[string]any)
	if !ok {
		dm = map[string]any{}
	} else {
		c := make(map[string]any, len(dm))
		for k, v := range dm {
			c[k] = v
		}
		dm = c
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
			continue
		}
		dm[k] = MergePatch(dm[k], v)
	}
	return dm
}

// ValidateRecord checks a complete (created or merged) url + metadata against
// the model and returns every error at once, sorted by field path.
// unknownNull holds the metadata fields a payload set to null: an unknown one
// is an error as well.
func (m *Model) ValidateRecord(u *string, meta map[string]any, unknownNull map[string]bool) []FieldError {
	var v validator
	if u == nil {
		v.add("url", "is required")
	} else if msg := checkHTTPURL(*u); msg != "" {
		v.add("url", "%s", msg)
	}
	var unknown []string
	for k := range meta {
		if m.Field(k) == nil {
			unknown = append(unknown, k)
		}
	}
	for k := range unknownNull {
		if m.Field(k) == nil {
			unknown = append(unknown, k)
		}
	}
	for _, k := range unknown {
		v.add("metadata."+k, "is not a field here; the fields are %s", m.fieldNames())
	}
	buf := make([]byte, 0, 1024) // checkValueSize's
	for _, f := range m.Fields {
		x, ok := meta[f.Name]
		if !ok || x == nil {
			if f.Required {
				v.add("metadata."+f.Name, "is required")
			}
			continue
		}
		n := len(v.errs)
		v.push(pathSeg{pre: "metadata.", name: f.Name})
		v.validate(f.Schema, x)
		if len(v.errs) == n {
			// Only a valid value is measured: its encoding is the stored one.
			buf = v.checkValueSize(f, x, buf)
		}
		v.pop()
	}
	sortErrs(v.errs)
	return v.errs
}

func (m *Model) fieldNames() string {
	var b strings.Builder
	for i, f := range m.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
	}
	return b.String()
}

// sortErrs orders errors by field path for stable replies; errors of one field keep their order.
func sortErrs(e []FieldError) {
	slices.SortStableFunc(e, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
}

// appendCanon appends x as compact JSON, object keys in schema order (then any
// others sorted), strings without HTML escaping.
func appendCanon(dst []byte, x any, s *Schema) []byte {
	switch t := x.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case json.Number:
		return append(dst, t...)
	case string:
		return appendJSONString(dst, t)
	case []any:
		dst = append(dst, '[')
		var is *Schema
		if s != nil {
			is = s.Items
		}
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanon(dst, e, is)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		first := true
		emit := func(k string, v any, ps *Schema) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendCanon(dst, v, ps)
		}
		// The schema's properties first, in its order; then the others
		// (those it does not name), sorted.
		var names []string
		if s != nil {
			names = s.Properties.Names
			for _, k := range names {
				if v, ok := t[k]; ok {
					emit(k, v, s.Properties.Map[k])
				}
			}
		}
		var rest []string
		for k := range t {
			if !slices.Contains(names, k) {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range rest {
			emit(k, t[k], nil)
		}
		return append(dst, '}')
	}
	b, _ := json.Marshal(x)
	return append(dst, b...)
}

// appendJSONString quotes s as JSON without HTML escaping (as a json.Encoder
// with SetEscapeHTML(false) does).
func appendJSONString(dst []byte, s string) []byte {
	return stdjson.AppendString(dst, s, false)
}
