package console

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"pidnode/model"
)

// The create and edit forms are generated from the metadata model
// (docs/metadata-model.md): one input per property of the payload's schema,
// named by its JSON path ("metadata.resource_info.label",
// "metadata.resource_info.representation_variants[0].variant_url"), which is
// also the field of the API's errors, so each error is shown next to its
// input. A change of the model file changes the form.
//
// The form is only a way of typing JSON: decodeForm turns the values into
// the payload without checking anything (a number that does not parse is
// sent as the text it is, and the write service says what is wrong with
// it), and the payload goes to the write service as the API's body does.

// formNode is one input, or a group of inputs, of a generated form.
type formNode struct {
	// Name is the JSON path: the input's name and the API error's field.
	Name  string
	Label string
	// Help is the model's description, Example its example value.
	Help, Example string
	Required      bool
	// Kind: text, email, url, number, textarea, select, object, list, json.
	Kind    string
	Options []string
	Value   string
	MaxLen  int
	// Children: an object's properties, a list's items.
	Children []*formNode
	// Item is a list's label for one of its items.
	Item string
	// Index is an item's position in its list (-1 if not an item); Parent
	// the list's name.
	Index  int
	Parent string
}

// payloadSchema is the schema of a write's payload: url and the model's
// metadata fields.
func (s *Server) payloadSchema() *model.Schema {
	meta := &model.Schema{Type: "object", Properties: model.Props{Map: map[string]*model.Schema{}}}
	for _, f := range s.cfg.Model.Fields {
		meta.Properties.Names = append(meta.Properties.Names, f.Name)
		meta.Properties.Map[f.Name] = f.Schema
		if f.Required {
			meta.Required = append(meta.Required, f.Name)
		}
	}
	return &model.Schema{Type: "object", Required: []string{"url", "metadata"}, Properties: model.Props{
		Names: []string{"url", "metadata"},
		Map: map[string]*model.Schema{
			"url":      {Type: "string", Format: "http-url", Description: "The landing page: where the identifier redirects; an http or https address.", Example: "https://repository.example.org/sample/42"},
			"metadata": meta,
		}}}
}

// humanize turns a property name into a label: "resource_info" → "Resource info".
func humanize(name string) string {
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	if s == "url" {
		return "Landing page URL"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// formatScalar is a value as an input shows it.
func formatScalar(x any) string {
	switch v := x.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// structured reports whether s is shown as inputs (not as JSON text).
func structured(s *model.Schema) bool {
	switch s.Type {
	case "object":
		return len(s.Properties.Names) > 0
	case "array":
		return s.Items != nil && (s.Items.Type != "array" && (s.Items.Type != "object" || len(s.Items.Properties.Names) > 0))
	}
	return true
}

// buildForm returns the form of schema s named name, filled with x (the
// decoded JSON value, or nil). fresh fills const values and one empty item
// of each required list.
func buildForm(name, label string, s *model.Schema, required bool, x any, fresh bool) *formNode {
	n := &formNode{Name: name, Label: label, Help: s.Description, Example: s.Example, Required: required, Index: -1}
	if s.MaxLength != nil {
		n.MaxLen = *s.MaxLength
	}
	if !structured(s) {
		n.Kind = "json"
		if x != nil {
			if str, ok := x.(string); ok {
				n.Value = str
			} else {
				b, _ := json.MarshalIndent(x, "", "  ")
				n.Value = string(b)
			}
		}
		if n.Help == "" {
			n.Help = "JSON"
		}
		return n
	}
	switch s.Type {
	case "object":
		n.Kind = "object"
		m, _ := x.(map[string]any)
		for _, k := range s.Properties.Names {
			req := false
			for _, r := range s.Required {
				req = req || r == k
			}
			var cx any
			if m != nil {
				cx = m[k]
			}
			n.Children = append(n.Children, buildForm(name+"."+k, humanize(k), s.Properties.Map[k], req, cx, fresh))
		}
		if name == "" {
			// The root's children are named "url" and "metadata.…".
			for _, c := range n.Children {
				c.Name = strings.TrimPrefix(c.Name, ".")
				renameTree(c)
			}
		}
		return n
	case "array":
		n.Kind = "list"
		n.Item = strings.TrimSuffix(strings.ToLower(humanize(label)), "s")
		items, _ := x.([]any)
		if items == nil && fresh && s.MinItems != nil && *s.MinItems > 0 {
			items = []any{nil}
		}
		for i, it := range items {
			c := buildForm(name+"["+strconv.Itoa(i)+"]", humanize(n.Item)+" "+strconv.Itoa(i+1), s.Items, false, it, fresh)
			c.Index, c.Parent = i, name
			n.Children = append(n.Children, c)
		}
		return n
	}
	switch {
	case len(s.Enum) > 0:
		n.Kind, n.Options = "select", s.Enum
	case s.Type == "boolean":
		n.Kind, n.Options = "select", []string{"true", "false"}
	case s.Format == "email":
		n.Kind = "email"
	case s.Format == "http-url":
		n.Kind = "url"
	case s.Type == "integer" || s.Type == "number":
		n.Kind = "number"
	case n.MaxLen > 1000:
		n.Kind = "textarea"
	default:
		n.Kind = "text"
	}
	n.Value = formatScalar(x)
	switch {
	case x != nil || !fresh:
	case s.Const != nil:
		n.Value = *s.Const
	case s.Default != nil:
		n.Value = *s.Default
	}
	return n
}

// renameTree strips the leading "." of the names below a root child.
func renameTree(n *formNode) {
	for _, c := range n.Children {
		c.Name = strings.TrimPrefix(c.Name, ".")
		c.Parent = strings.TrimPrefix(c.Parent, ".")
		renameTree(c)
	}
}

// decodeForm turns form values into the JSON value of schema s named name.
// update makes an absent property of an object (outside a list item) null,
// which removes it in the API's merge. present is false if nothing was
// entered.
func decodeForm(f url.Values, name string, s *model.Schema, update bool) (v any, present bool) {
	if !structured(s) {
		t := strings.TrimSpace(f.Get(name))
		if t == "" {
			return nil, false
		}
		var x any
		if err := json.Unmarshal([]byte(t), &x); err != nil {
			return t, true // the API says it is not the JSON it needs
		}
		d, err := model.DecodeAny([]byte(t))
		if err != nil {
			return t, true
		}
		return d, true
	}
	child := func(k string) string {
		if name == "" {
			return k
		}
		return name + "." + k
	}
	switch s.Type {
	case "object":
		obj := map[string]any{}
		for _, k := range s.Properties.Names {
			if cv, ok := decodeForm(f, child(k), s.Properties.Map[k], update); ok {
				obj[k] = cv
			} else if update {
				obj[k] = nil
			}
		}
		for _, cv := range obj {
			if cv != nil {
				return obj, true
			}
		}
		return nil, false
	case "array":
		n, _ := strconv.Atoi(f.Get(name + "#n"))
		n = min(max(n, 0), model.MaxFieldErrors*10)
		var items []any
		for i := 0; i < n; i++ {
			if iv, ok := decodeForm(f, name+"["+strconv.Itoa(i)+"]", s.Items, false); ok {
				items = append(items, iv)
			}
		}
		if len(items) == 0 {
			return nil, false
		}
		return items, true
	}
	t := f.Get(name)
	if s.Format == "email" || s.Format == "http-url" || s.Type != "string" {
		t = strings.TrimSpace(t)
	}
	if t == "" {
		return nil, false
	}
	switch s.Type {
	case "integer", "number":
		var num json.Number
		if err := json.Unmarshal([]byte(t), &num); err == nil {
			return num, true
		}
	case "boolean":
		if b, err := strconv.ParseBool(t); err == nil {
			return b, true
		}
	}
	return t, true
}

// formPayload decodes a generated form into a payload (url and metadata).
func (s *Server) formPayload(f url.Values, update bool) map[string]any {
	v, _ := decodeForm(f, "", s.payloadSchema(), update)
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	if update {
		if _, ok := m["url"]; !ok || m["url"] == nil {
			m["url"] = "" // the API says a landing page is required
		}
		if m["metadata"] == nil {
			m["metadata"] = map[string]any{}
		}
	} else {
		for k, v := range m {
			if v == nil {
				delete(m, k)
			}
		}
	}
	return m
}

// editList applies a list button of the form (add an item, remove one) to
// the decoded payload v: op is "add:<list name>" or "remove:<item name>".
// It reports whether it changed anything.
func editList(v map[string]any, op string) bool {
	kind, path, _ := strings.Cut(op, ":")
	var idx = -1
	if kind == "remove" {
		i := strings.LastIndexByte(path, '[')
		if i < 0 || !strings.HasSuffix(path, "]") {
			return false
		}
		n, err := strconv.Atoi(path[i+1 : len(path)-1])
		if err != nil {
			return false
		}
		path, idx = path[:i], n
	}
	// Walk to the list's parent along "a.b[2].c".
	var cur any = v
	segs := strings.Split(path, ".")
	for si, seg := range segs {
		name, sub := seg, -1
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			n, err := strconv.Atoi(seg[i+1 : len(seg)-1])
			if err != nil {
				return false
			}
			name, sub = seg[:i], n
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		last := si == len(segs)-1
		if last && sub < 0 {
			list, _ := m[name].([]any)
			switch kind {
			case "add":
				m[name] = append(list, map[string]any{})
				return true
			case "remove":
				if idx < 0 || idx >= len(list) {
					return false
				}
				m[name] = append(list[:idx:idx], list[idx+1:]...)
				return true
			}
			return false
		}
		next := m[name]
		if next == nil && !last {
			next = map[string]any{}
			m[name] = next
		}
		if sub >= 0 {
			list, _ := next.([]any)
			if sub >= len(list) {
				return false
			}
			next = list[sub]
		}
		cur = next
	}
	return false
}

// fieldLabel names the field of an error (a JSON path such as
// "metadata.resource_info.representation_variants[0].variant_url") as the
// form labels it: "Resource info › Representation variant 1 › Variant url".
func fieldLabel(path string) string {
	switch path {
	case "", "(body)", "(item)":
		return "The form"
	case "(record)":
		return "The record"
	case "id":
		return "Custom id"
	}
	return pathLabel(path)
}

// pathLabel names a value's path for a person: each member humanised, a
// list's item by its number.
func pathLabel(path string) string {
	var parts []string
	for _, seg := range strings.Split(strings.TrimPrefix(path, "metadata."), ".") {
		name, idx, ok := strings.Cut(seg, "[")
		if !ok {
			parts = append(parts, humanize(name))
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if err != nil {
			parts = append(parts, humanize(seg))
			continue
		}
		parts = append(parts, humanize(strings.TrimSuffix(name, "s"))+" "+strconv.Itoa(n+1))
	}
	return strings.Join(parts, " › ")
}
