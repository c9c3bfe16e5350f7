package admin

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// DefaultModel is the pid4cat metadata model of METADATA-MODEL.md, used when
// Config.Model is empty.
//
//go:embed models/pid4cat.json
var DefaultModel []byte

// Model is a metadata model: which payload fields exist, which are required,
// which handle value (index, type) each becomes and the rules its value obeys.
// It is data (LoadModel), not code, so that other consortia bring their own.
// A Model is immutable after LoadModel and safe for concurrent use.
type Model struct {
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Description string       `json:"description"`
	URL         URLSpec      `json:"url"`
	Changes     ChangesSpec  `json:"changes"`
	Admin       AdminSpec    `json:"admin"`
	Fields      []*FieldSpec `json:"fields"`
}

// URLSpec places the landing page URL (payload "url") in the record.
type URLSpec struct {
	Index        int32  `json:"index"`
	Type         string `json:"type"`
	ChangedField string `json:"changed_field"`
}

// ChangesSpec places the change log the node keeps (SPEC §3, index 16).
type ChangesSpec struct {
	Index int32  `json:"index"`
	Type  string `json:"type"`
	// MaxBytes bounds the change log's JSON text; the oldest entries are dropped
	// beyond it (the audit log keeps the full history). 0 means 65536.
	MaxBytes int `json:"max_bytes"`
}

// AdminSpec places the HS_ADMIN value: Index in the record, AdminIndex the index
// named inside it on the SNAA's admin handle.
type AdminSpec struct {
	Index      int32 `json:"index"`
	AdminIndex int32 `json:"admin_index"`
}

// FieldSpec is one field of the payload's "metadata" object.
type FieldSpec struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Index    int32  `json:"index"`
	Type     string `json:"type"`
	// Encoding is "string" (the value is a JSON string stored as is; default)
	// or "json" (any JSON value stored as compact JSON text).
	Encoding     string  `json:"encoding"`
	ChangedField string  `json:"changed_field"`
	Schema       *Schema `json:"schema"`
}

// Schema is the rule language of a model: a subset of JSON Schema (type, enum,
// const, pattern, format, min/maxLength, minimum/maximum, min/maxItems, items,
// properties, required, additionalProperties) plus Discriminator, which picks
// extra rules by the value of one property.
type Schema struct {
	Type                 string         `json:"type"`
	Description          string         `json:"description,omitempty"`
	Enum                 []string       `json:"enum,omitempty"`
	Const                *string        `json:"const,omitempty"`
	Pattern              string         `json:"pattern,omitempty"`
	Format               string         `json:"format,omitempty"`
	MinLength            *int           `json:"minLength,omitempty"`
	MaxLength            *int           `json:"maxLength,omitempty"`
	Minimum              *float64       `json:"minimum,omitempty"`
	Maximum              *float64       `json:"maximum,omitempty"`
	MinItems             *int           `json:"minItems,omitempty"`
	MaxItems             *int           `json:"maxItems,omitempty"`
	Items                *Schema        `json:"items,omitempty"`
	Properties           Props          `json:"properties,omitempty"`
	Required             []string       `json:"required,omitempty"`
	AdditionalProperties *bool          `json:"additionalProperties,omitempty"`
	Discriminator        *Discriminator `json:"discriminator,omitempty"`

	re *regexp.Regexp
}

// Discriminator applies Cases[value of Property] in addition to the schema.
type Discriminator struct {
	Property string             `json:"property"`
	Cases    map[string]*Schema `json:"cases"`
}

// Props is an ordered set of named property schemas; the order of the model
// file is kept and used when storing objects as JSON text.
type Props struct {
	Names []string
	Map   map[string]*Schema
}

// UnmarshalJSON keeps the order of the keys.
func (p *Props) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("properties must be an object")
	}
	p.Map = map[string]*Schema{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k := t.(string)
		var s Schema
		if err := dec.Decode(&s); err != nil {
			return fmt.Errorf("property %s: %w", k, err)
		}
		if _, dup := p.Map[k]; dup {
			return fmt.Errorf("duplicate property %s", k)
		}
		p.Names = append(p.Names, k)
		p.Map[k] = &s
	}
	_, err := dec.Token()
	return err
}

// MarshalJSON writes the properties in model order.
func (p Props) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range p.Names {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		vb, err := json.Marshal(p.Map[k])
		if err != nil {
			return nil, err
		}
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}

// Formats the rule language knows.
var knownFormats = map[string]bool{"": true, "email": true, "http-url": true, "date-time": true}

// LoadModel parses a model file, JSON or TOML (detected by the first
// non-space byte: '{' means JSON), and checks it. Errors are *ModelError.
func LoadModel(b []byte) (*Model, error) {
	var m Model
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, &ModelError{Msg: err.Error()}
		}
	} else {
		// TOML: decode generically, then through JSON so both share one schema.
		var v map[string]any
		if _, err := toml.Decode(string(b), &v); err != nil {
			return nil, &ModelError{Msg: "TOML: " + err.Error()}
		}
		jb, err := json.Marshal(v)
		if err != nil {
			return nil, &ModelError{Msg: err.Error()}
		}
		dec := json.NewDecoder(bytes.NewReader(jb))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, &ModelError{Msg: err.Error()}
		}
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *Model) check() error {
	if m.Name == "" {
		return &ModelError{Path: "name", Msg: "missing"}
	}
	if m.URL.Index <= 0 || m.URL.Type == "" {
		return &ModelError{Path: "url", Msg: "index and type are required"}
	}
	if m.Changes.Index <= 0 || m.Changes.Type == "" {
		return &ModelError{Path: "changes", Msg: "index and type are required"}
	}
	if m.Changes.MaxBytes == 0 {
		m.Changes.MaxBytes = 65536
	}
	if m.Admin.Index <= 0 || m.Admin.AdminIndex <= 0 {
		return &ModelError{Path: "admin", Msg: "index and admin_index are required"}
	}
	seenIdx := map[int32]string{m.URL.Index: "url", m.Changes.Index: "changes", m.Admin.Index: "admin"}
	if len(seenIdx) != 3 {
		return &ModelError{Path: "url", Msg: "url, changes and admin need distinct indices"}
	}
	seenName := map[string]bool{}
	for i, f := range m.Fields {
		p := fmt.Sprintf("fields[%d]", i)
		if f.Name == "" || seenName[f.Name] {
			return &ModelError{Path: p + ".name", Msg: "missing or duplicate"}
		}
		seenName[f.Name] = true
		if f.Index <= 0 || f.Type == "" {
			return &ModelError{Path: p, Msg: "index and type are required"}
		}
		if other, dup := seenIdx[f.Index]; dup {
			return &ModelError{Path: p + ".index", Msg: fmt.Sprintf("index %d already used by %s", f.Index, other)}
		}
		seenIdx[f.Index] = f.Name
		switch f.Encoding {
		case "":
			f.Encoding = "string"
		case "string", "json":
		default:
			return &ModelError{Path: p + ".encoding", Msg: `must be "string" or "json"`}
		}
		if f.ChangedField == "" {
			f.ChangedField = strings.ToUpper(f.Name)
		}
		if f.Schema == nil {
			return &ModelError{Path: p + ".schema", Msg: "missing"}
		}
		if f.Encoding == "string" && f.Schema.Type != "string" {
			return &ModelError{Path: p + ".schema.type", Msg: `a field with encoding "string" needs type "string"`}
		}
		if err := f.Schema.compile(p + ".schema"); err != nil {
			return err
		}
	}
	slices.SortStableFunc(m.Fields, func(a, b *FieldSpec) int { return int(a.Index) - int(b.Index) })
	return nil
}

func (s *Schema) compile(p string) error {
	switch s.Type {
	case "string", "integer", "number", "boolean", "object", "array":
	default:
		return &ModelError{Path: p + ".type", Msg: fmt.Sprintf("unknown type %q", s.Type)}
	}
	if !knownFormats[s.Format] {
		return &ModelError{Path: p + ".format", Msg: fmt.Sprintf("unknown format %q (known: email, http-url, date-time)", s.Format)}
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return &ModelError{Path: p + ".pattern", Msg: err.Error()}
		}
		s.re = re
	}
	if s.Items != nil {
		if s.Type != "array" {
			return &ModelError{Path: p + ".items", Msg: "only for type array"}
		}
		if err := s.Items.compile(p + ".items"); err != nil {
			return err
		}
	}
	if s.Type == "array" && s.Items == nil {
		return &ModelError{Path: p + ".items", Msg: "an array needs items"}
	}
	for _, k := range s.Properties.Names {
		if err := s.Properties.Map[k].compile(p + ".properties." + k); err != nil {
			return err
		}
	}
	for _, k := range s.Required {
		if _, ok := s.Properties.Map[k]; !ok {
			return &ModelError{Path: p + ".required", Msg: fmt.Sprintf("%q is not a property", k)}
		}
	}
	if d := s.Discriminator; d != nil {
		ps, ok := s.Properties.Map[d.Property]
		if !ok {
			return &ModelError{Path: p + ".discriminator", Msg: fmt.Sprintf("%q is not a property", d.Property)}
		}
		for k, c := range d.Cases {
			if len(ps.Enum) > 0 && !slices.Contains(ps.Enum, k) {
				return &ModelError{Path: p + ".discriminator.cases." + k, Msg: "not a value of the property's enum"}
			}
			if c.Type == "" {
				c.Type = "object"
			}
			if err := c.compile(p + ".discriminator.cases." + k); err != nil {
				return err
			}
			for _, n := range c.Properties.Names {
				if _, ok := s.Properties.Map[n]; !ok {
					return &ModelError{Path: p + ".discriminator.cases." + k, Msg: fmt.Sprintf("%q is not a property of the object", n)}
				}
			}
		}
	}
	return nil
}

// Field returns the field spec by payload name.
func (m *Model) Field(name string) *FieldSpec {
	for _, f := range m.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// validator collects every error of a payload.
type validator struct {
	errs []FieldError
}

// maxFieldErrors bounds the errors of one reply; a hostile payload with a
// million bad items gets the first ones and a note.
const maxFieldErrors = 100

func (v *validator) add(path, format string, args ...any) {
	switch {
	case len(v.errs) < maxFieldErrors:
		v.errs = append(v.errs, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	case len(v.errs) == maxFieldErrors:
		v.errs = append(v.errs, FieldError{Field: "(body)", Message: fmt.Sprintf("more than %d errors; fix these first", maxFieldErrors)})
	}
}

// validate checks value x (decoded with UseNumber) against s at path.
func (v *validator) validate(path string, s *Schema, x any) {
	switch s.Type {
	case "string":
		str, ok := x.(string)
		if !ok {
			v.add(path, "must be a string, not %s", jsonType(x))
			return
		}
		v.checkString(path, s, str)
	case "integer":
		n, ok := x.(json.Number)
		if !ok {
			v.add(path, "must be an integer, not %s", jsonType(x))
			return
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			v.add(path, "must be an integer between -2^63 and 2^63-1, not %s", truncate(string(n), 40))
			return
		}
		v.checkRange(path, s, float64(i))
	case "number":
		n, ok := x.(json.Number)
		if !ok {
			v.add(path, "must be a number, not %s", jsonType(x))
			return
		}
		f, _, err := big.ParseFloat(string(n), 10, 64, big.ToNearestEven)
		if err != nil {
			v.add(path, "must be a number")
			return
		}
		ff, _ := f.Float64()
		v.checkRange(path, s, ff)
	case "boolean":
		if _, ok := x.(bool); !ok {
			v.add(path, "must be true or false, not %s", jsonType(x))
		}
	case "array":
		a, ok := x.([]any)
		if !ok {
			v.add(path, "must be an array, not %s", jsonType(x))
			return
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			v.add(path, "must have at least %d item(s)", *s.MinItems)
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			v.add(path, "must have at most %d items, has %d", *s.MaxItems, len(a))
		}
		for i, e := range a {
			v.validate(fmt.Sprintf("%s[%d]", path, i), s.Items, e)
		}
	case "object":
		o, ok := x.(map[string]any)
		if !ok {
			v.add(path, "must be an object, not %s", jsonType(x))
			return
		}
		v.checkObject(path, s, o, true)
	}
}

func (v *validator) checkObject(path string, s *Schema, o map[string]any, top bool) {
	if top && (s.AdditionalProperties == nil || !*s.AdditionalProperties) {
		var unknown []string
		for k := range o {
			if _, ok := s.Properties.Map[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown)
		for _, k := range unknown {
			v.add(join(path, k), "unknown field; allowed: %s", strings.Join(s.Properties.Names, ", "))
		}
	}
	for _, k := range s.Required {
		if x, ok := o[k]; !ok || x == nil {
			v.add(join(path, k), "is required")
		}
	}
	for _, k := range s.Properties.Names {
		x, ok := o[k]
		if !ok || x == nil {
			if ok && !slices.Contains(s.Required, k) {
				v.add(join(path, k), "must not be null (omit the field instead)")
			}
			continue
		}
		v.validate(join(path, k), s.Properties.Map[k], x)
	}
	if d := s.Discriminator; d != nil {
		if dv, ok := o[d.Property].(string); ok {
			if c := d.Cases[dv]; c != nil {
				for _, k := range c.Properties.Names {
					if x, ok := o[k]; ok && x != nil {
						v.validate(join(path, k), c.Properties.Map[k], x)
					}
				}
				for _, k := range c.Required {
					if x, ok := o[k]; !ok || x == nil {
						v.add(join(path, k), "is required when %s is %s", d.Property, dv)
					}
				}
			}
		}
	}
}

func (v *validator) checkString(path string, s *Schema, str string) {
	if !utf8.ValidString(str) {
		v.add(path, "must be valid UTF-8")
		return
	}
	n := utf8.RuneCountInString(str)
	if s.MaxLength != nil && n > *s.MaxLength {
		v.add(path, "must be at most %d characters, has %d", *s.MaxLength, n)
		return
	}
	if s.MinLength != nil && n < *s.MinLength {
		v.add(path, "must be at least %d character(s)", *s.MinLength)
	}
	if hasControl(str) && s.Format != "" {
		v.add(path, "must not contain control characters")
		return
	}
	if s.Const != nil && str != *s.Const {
		v.add(path, "must be exactly %q", *s.Const)
		return
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
		v.add(path, "must be one of %s; got %q", strings.Join(s.Enum, ", "), truncate(str, 64))
		return
	}
	switch s.Format {
	case "http-url":
		if msg := checkHTTPURL(str); msg != "" {
			v.add(path, "%s", msg)
			return
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, str); err != nil {
			if _, err2 := time.Parse("2006-01-02", str); err2 != nil {
				v.add(path, "must be an ISO 8601 date-time such as 2025-03-11T09:43:14Z")
				return
			}
		}
	}
	if s.re != nil && !s.re.MatchString(str) {
		v.add(path, "must match %s", s.Pattern)
	}
}

func (v *validator) checkRange(path string, s *Schema, f float64) {
	if s.Minimum != nil && f < *s.Minimum {
		v.add(path, "must be at least %v", *s.Minimum)
	}
	if s.Maximum != nil && f > *s.Maximum {
		v.add(path, "must be at most %v", *s.Maximum)
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "unknown"
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

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
