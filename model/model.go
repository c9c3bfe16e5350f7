package model

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// DefaultModel is the pid4cat metadata model (docs/metadata-model.md), the
// model of a node whose configuration names none.
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

// ChangesSpec places the change log the node keeps (docs/product.md §3, index 16).
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

	created string // the change log's description of the field at a create, set by LoadModel
}

// createdSuffix ends the change log's description of a field in a new record.
const createdSuffix = " set at creation"

// createdDesc is the change log's description of f in a new record.
func (f *FieldSpec) createdDesc() string {
	if f.created != "" {
		return f.created
	}
	return f.Name + createdSuffix
}

// Schema is the rule language of a model: a subset of JSON Schema (type, enum,
// const, pattern, format, min/maxLength, minimum/maximum, min/maxItems, items,
// properties, required, additionalProperties) plus Discriminator, which picks
// extra rules by the value of one property.
//
// Description, Example and Default are for people: a validation message
// explains a pattern by its description and example (never by the pattern),
// and a form shows them as help and starts a new record's input with Default.
type Schema struct {
	Type                 string         `json:"type"`
	Description          string         `json:"description,omitempty"`
	Example              string         `json:"example,omitempty"`
	Default              *string        `json:"default,omitempty"`
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
	// matched remembers recent verdicts of re on short strings (matches).
	matched *matchMemo
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
	if err := m.checkModelLimits(); err != nil {
		return err
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
		f.created = f.Name + createdSuffix
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
		s.matched = new(matchMemo)
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
