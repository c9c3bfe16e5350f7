package model

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Collector collects every faulty field of a request, at most MaxFieldErrors
// of them: the model's checks use it for payloads, and the admin API for the
// requests it checks itself (operator routes), so both answer alike.
type Collector struct {
	errs []FieldError
	// segs is the path of the value being checked (validate), rendered
	// (path) only for an error, not for every value checked.
	segs []pathSeg
}

// pathSeg is one step of a Collector's path: the first is the field
// (pre+name, "metadata.status"), the others an object member (name) or an
// array item (idx).
type pathSeg struct {
	pre, name string
	idx       int
	item      bool
}

func (v *Collector) push(s pathSeg) {
	if v.segs == nil {
		v.segs = make([]pathSeg, 0, 8)
	}
	v.segs = append(v.segs, s)
}
func (v *Collector) pop() { v.segs = v.segs[:len(v.segs)-1] }

// path renders segs as FieldError.Field writes it
// ("metadata.resource_info.representation_variants[0].size").
func (v *Collector) path() string {
	p := ""
	for i, s := range v.segs {
		switch {
		case i == 0:
			p = s.pre + s.name
		case s.item:
			p = fmt.Sprintf("%s[%d]", p, s.idx)
		default:
			p = join(p, s.name)
		}
	}
	return p
}

// validator is the model's own name for a Collector.
type validator = Collector

// MaxFieldErrors bounds the errors of one reply; a hostile payload with a
// million bad items gets the first ones and a note.
const MaxFieldErrors = 100

// Add records a faulty field: path names it, the rest is the message.
func (v *Collector) Add(path, format string, args ...any) { v.add(path, format, args...) }

// Errors returns the faulty fields collected, nil if none.
func (v *Collector) Errors() []FieldError { return v.errs }

func (v *Collector) add(path, format string, args ...any) {
	switch {
	case len(v.errs) < MaxFieldErrors:
		v.errs = append(v.errs, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	case len(v.errs) == MaxFieldErrors:
		v.errs = append(v.errs, FieldError{Field: "(body)", Message: fmt.Sprintf("more than %d errors; fix these first", MaxFieldErrors)})
	}
}

// validate checks value x (decoded with UseNumber) against s at path.
func (v *validator) validate(s *Schema, x any) {
	switch s.Type {
	case "string":
		str, ok := x.(string)
		if !ok {
			v.add(v.path(), "must be text, not %s", jsonType(x))
			return
		}
		v.checkString(s, str)
	case "integer":
		n, ok := x.(json.Number)
		if !ok {
			v.add(v.path(), "must be a whole number, not %s", jsonType(x))
			return
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			v.add(v.path(), "must be a whole number no larger than 9223372036854775807, not %s", truncate(string(n), 40))
			return
		}
		v.checkRange(s, float64(i))
	case "number":
		n, ok := x.(json.Number)
		if !ok {
			v.add(v.path(), "must be a number, not %s", jsonType(x))
			return
		}
		f, _, err := big.ParseFloat(string(n), 10, 64, big.ToNearestEven)
		if err != nil {
			v.add(v.path(), "must be a number")
			return
		}
		ff, _ := f.Float64()
		v.checkRange(s, ff)
	case "boolean":
		if _, ok := x.(bool); !ok {
			v.add(v.path(), "must be true or false, not %s", jsonType(x))
		}
	case "array":
		a, ok := x.([]any)
		if !ok {
			v.add(v.path(), "must be a list, not %s", jsonType(x))
			return
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			v.add(v.path(), "needs at least %d %s", *s.MinItems, plural(*s.MinItems, "entry", "entries"))
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			v.add(v.path(), "may have at most %d entries, has %d", *s.MaxItems, len(a))
		}
		for i, e := range a {
			v.push(pathSeg{idx: i, item: true})
			v.validate(s.Items, e)
			v.pop()
		}
	case "object":
		o, ok := x.(map[string]any)
		if !ok {
			v.add(v.path(), "must be a group of named fields, not %s", jsonType(x))
			return
		}
		v.checkObject(s, o, true)
	}
}

func (v *validator) checkObject(s *Schema, o map[string]any, top bool) {
	if top && (s.AdditionalProperties == nil || !*s.AdditionalProperties) {
		var unknown []string
		for k := range o {
			if _, ok := s.Properties.Map[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown)
		for _, k := range unknown {
			v.add(join(v.path(), k), "is not a field here; the fields are %s", strings.Join(s.Properties.Names, ", "))
		}
	}
	for _, k := range s.Required {
		if x, ok := o[k]; !ok || x == nil {
			v.add(join(v.path(), k), "%s", requiredMsg(s.Properties.Map[k]))
		}
	}
	for _, k := range s.Properties.Names {
		x, ok := o[k]
		if !ok || x == nil {
			if ok && !slices.Contains(s.Required, k) {
				v.add(join(v.path(), k), "must have a value; to leave it empty, leave the field out")
			}
			continue
		}
		v.push(pathSeg{name: k})
		v.validate(s.Properties.Map[k], x)
		v.pop()
	}
	if d := s.Discriminator; d != nil {
		if dv, ok := o[d.Property].(string); ok {
			if c := d.Cases[dv]; c != nil {
				for _, k := range c.Properties.Names {
					if x, ok := o[k]; ok && x != nil {
						v.push(pathSeg{name: k})
						v.validate(c.Properties.Map[k], x)
						v.pop()
					}
				}
				for _, k := range c.Required {
					if x, ok := o[k]; !ok || x == nil {
						v.add(join(v.path(), k), "is required when %s is %s", d.Property, dv)
					}
				}
			}
		}
	}
}

func (v *validator) checkString(s *Schema, str string) {
	if !utf8.ValidString(str) {
		v.add(v.path(), "must be valid UTF-8")
		return
	}
	n := utf8.RuneCountInString(str)
	if s.MaxLength != nil && n > *s.MaxLength {
		v.add(v.path(), "must be at most %d characters, has %d", *s.MaxLength, n)
		return
	}
	if s.MinLength != nil && n < *s.MinLength {
		v.add(v.path(), "needs at least %d %s", *s.MinLength, plural(*s.MinLength, "character", "characters"))
	}
	if HasControl(str) && s.Format != "" {
		v.add(v.path(), "must not contain control characters")
		return
	}
	if s.Const != nil && str != *s.Const {
		v.add(v.path(), "must be exactly %q", *s.Const)
		return
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
		v.add(v.path(), "must be one of %s, not %q", strings.Join(s.Enum, ", "), truncate(str, 64))
		return
	}
	switch s.Format {
	case "http-url":
		if msg := checkHTTPURL(str); msg != "" {
			v.add(v.path(), "%s", msg)
			return
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, str); err != nil {
			if _, err2 := time.Parse("2006-01-02", str); err2 != nil {
				v.add(v.path(), "must be a date such as 2025-03-11, or a date and time such as 2025-03-11T09:43:14Z")
				return
			}
		}
	}
	if s.re != nil && !s.matches(str) {
		v.add(v.path(), "%s", patternMsg(s))
	}
}

func (v *validator) checkRange(s *Schema, f float64) {
	if s.Minimum != nil && f < *s.Minimum {
		v.add(v.path(), "must be at least %v", *s.Minimum)
	}
	if s.Maximum != nil && f > *s.Maximum {
		v.add(v.path(), "must be at most %v", *s.Maximum)
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// jsonType names the kind of value x in words a person who never read JSON
// understands (a validation message names no JSON type).
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "empty"
	case string:
		return "text"
	case json.Number:
		return "a number"
	case bool:
		return "true or false"
	case []any:
		return "a list"
	case map[string]any:
		return "a group of fields"
	}
	return "unknown"
}

// patternMsg is the message of a value that does not match s's pattern:
// the pattern says it to a program, the model's description and example say
// it to a person, so the message never shows the pattern.
func patternMsg(s *Schema) string {
	switch {
	case s.Description != "" && s.Example != "":
		return fmt.Sprintf("is not in the expected form: %s For example: %s", sentence(s.Description), s.Example)
	case s.Example != "":
		return "is not in the expected form; for example: " + s.Example
	case s.Description != "":
		return "is not in the expected form: " + sentence(s.Description)
	}
	return "is not in the expected form"
}

// requiredMsg is the message of a missing required property of schema s
// (nil for a discriminator's property), with the example to copy if the
// model has one.
func requiredMsg(s *Schema) string {
	if s != nil && s.Example != "" {
		return "is required; for example: " + s.Example
	}
	return "is required"
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// HasControl reports whether s holds a control character (C0, DEL, C1, or a
// Unicode line or paragraph separator): text no operator field may hold.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
