package model

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The bulk format (docs/product.md §4, "Bulk files") is one for every tool:
// the API's bulk route, the console's bulk page and `pidctl bulk` read a
// file through DecodeBulkJSON (a JSON array, or JSON Lines) or
// Model.DecodeBulkCSV (CSV, one column per model field), and hand the
// items to the write service. An item is an object with "op"? ("create"
// or "update"), "id"?, "url"? and "metadata"?: the payload of the single
// routes plus what the bulk needs to tell creates from updates.

// Bulk operations (the "op" member of an item, the op column of CSV).
const (
	OpCreate = "create"
	OpUpdate = "update"
)

// BulkItem is one item of a bulk file, in file order: Value is the item
// decoded as DecodeAny decodes JSON (a map for a well-formed item), or Err
// says in words why this item cannot be read (the others still can). Line
// is the line of the file the item starts on (0 for an item of a JSON
// array).
type BulkItem struct {
	Line  int
	Value any
	Err   error
}

// DecodeBulkJSON decodes a bulk body of JSON: a JSON array of items, or
// JSON Lines (one item per line; empty lines skipped). A body the client
// sent as JSON Lines (lines) is read as such; otherwise a body whose first
// character is not '[' is. A line that is not JSON fails the whole body
// (*SyntaxError naming the line); a line of well-formed JSON holding a
// string that is not (a lone surrogate escape) fails that item alone.
func DecodeBulkJSON(body []byte, lines bool) ([]BulkItem, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if lines || len(trimmed) > 0 && trimmed[0] != '[' {
		var items []BulkItem
		for n, line := range bytes.Split(body, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			v, err := DecodeAny(line)
			if err != nil {
				var se *SyntaxError
				var ve *ValidationError
				switch {
				case errors.As(err, &se):
					return nil, &SyntaxError{Msg: fmt.Sprintf("line %d: %s", n+1, se.Msg)}
				case errors.As(err, &ve):
					items = append(items, BulkItem{Line: n + 1, Err: ve})
					continue
				}
				return nil, err
			}
			items = append(items, BulkItem{Line: n + 1, Value: v})
		}
		return items, nil
	}
	v, err := DecodeAny(body)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, &ValidationError{Errors: []FieldError{{Field: "(body)", Message: `must be a JSON array (or JSON Lines) of {"op"?, "id"?, "url"?, "metadata"?}`}}}
	}
	items := make([]BulkItem, len(arr))
	for i, x := range arr {
		items[i] = BulkItem{Value: x}
	}
	return items, nil
}

// BulkColumns are the columns of the bulk CSV under m, in the template's
// order: op, id, url, then each metadata field by its name, and for a
// field whose schema is an object, each of its properties as
// "field.property".
func (m *Model) BulkColumns() []string {
	cols := []string{"op", "id", "url"}
	for _, f := range m.Fields {
		cols = append(cols, f.Name)
		if f.Schema != nil && f.Schema.Type == "object" {
			for _, p := range f.Schema.Properties.Names {
				cols = append(cols, f.Name+"."+p)
			}
		}
	}
	return cols
}

// BulkTemplate is an empty bulk CSV file under m: its header row.
func (m *Model) BulkTemplate() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(m.BulkColumns())
	w.Flush()
	return b.Bytes()
}

// bulkColumn is what one CSV column sets.
type bulkColumn struct {
	name  string     // as in the header
	field *FieldSpec // nil for op, id and url
	prop  string     // a property of field's object, or ""
	json  bool       // the cell is JSON text (else a string)
}

// column returns the column named h of m's bulk CSV.
func (m *Model) column(h string) (bulkColumn, bool) {
	c := bulkColumn{name: h}
	switch h {
	case "op", "id", "url":
		return c, true
	}
	name, prop, sub := strings.Cut(h, ".")
	f := m.Field(name)
	if f == nil {
		return c, false
	}
	c.field = f
	if !sub {
		c.json = f.Encoding == "json"
		return c, true
	}
	if f.Schema == nil || f.Schema.Type != "object" {
		return c, false
	}
	ps, ok := f.Schema.Properties.Map[prop]
	if !ok {
		return c, false
	}
	c.prop = prop
	c.json = ps.Type != "string" && !(ps.Type == "" && len(ps.Enum) > 0)
	return c, true
}

// DecodeBulkCSV decodes a bulk body of CSV (RFC 4180; a UTF-8 byte order
// mark is skipped) under m. The first row names the columns (BulkColumns,
// in any order, each at most once; op is required); every other row is
// one item. In a row:
//   - op is create or update (any case); an update needs an id;
//   - an empty cell sets nothing (an update keeps the field as it is);
//   - a field stored as JSON text, and an object's property that is not a
//     string, is written as JSON (["a","b"], 12, {"k":"v"}); any other cell
//     is the string it holds;
//   - "field.property" columns build field's object, over the object a
//     "field" column gives; an update replaces the whole field, so it
//     names every property the field keeps.
//
// A header naming an unknown column, or CSV that cannot be read, fails the
// whole body (*SyntaxError, with the line); a row whose cells are wrong
// fails as that item (Err, a *ValidationError naming the column).
func (m *Model) DecodeBulkCSV(body []byte) ([]BulkItem, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	rd := csv.NewReader(bytes.NewReader(body))
	rd.FieldsPerRecord = -1
	head, err := rd.Read()
	if err != nil {
		return nil, &SyntaxError{Msg: "CSV: the first row must name the columns: " + csvMessage(err)}
	}
	cols := make([]bulkColumn, len(head))
	seen := map[string]bool{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		c, ok := m.column(h)
		if !ok {
			return nil, &SyntaxError{Msg: fmt.Sprintf("CSV column %q is not one of the bulk format's: %s", h, strings.Join(m.BulkColumns(), ", "))}
		}
		if seen[h] {
			return nil, &SyntaxError{Msg: fmt.Sprintf("CSV column %q is named twice", h)}
		}
		seen[h] = true
		cols[i] = c
	}
	if !seen["op"] {
		return nil, &SyntaxError{Msg: "CSV: an op column is required (create or update in each row)"}
	}
	var items []BulkItem
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return items, nil
		}
		if err != nil {
			return nil, &SyntaxError{Msg: "CSV: " + csvMessage(err)}
		}
		line, _ := rd.FieldPos(0)
		v, ferrs := decodeBulkRow(cols, rec)
		if len(ferrs) > 0 {
			items = append(items, BulkItem{Line: line, Err: &ValidationError{Errors: ferrs}})
			continue
		}
		items = append(items, BulkItem{Line: line, Value: v})
	}
}

// csvMessage is a CSV reading error without encoding/csv's "record on line
// N" prefix doubled.
func csvMessage(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err.Error()
}

// decodeBulkRow builds the item of one CSV row.
func decodeBulkRow(cols []bulkColumn, rec []string) (map[string]any, []FieldError) {
	var errs []FieldError
	if len(rec) > len(cols) {
		errs = append(errs, FieldError{Field: "(row)", Message: fmt.Sprintf("has %d cells, the header names %d columns", len(rec), len(cols))})
	}
	item := map[string]any{}
	meta := map[string]any{}
	props := map[string]map[string]any{}
	for i, c := range cols {
		if i >= len(rec) {
			break
		}
		cell := rec[i]
		if !utf8.ValidString(cell) {
			errs = append(errs, FieldError{Field: c.name, Message: "is not valid UTF-8"})
			continue
		}
		if c.field == nil {
			cell = strings.TrimSpace(cell)
		}
		if cell == "" {
			continue
		}
		var v any = cell
		if c.json {
			x, err := DecodeAny([]byte(cell))
			if err != nil {
				errs = append(errs, FieldError{Field: c.name, Message: "is not JSON: " + strings.TrimPrefix(err.Error(), "model: ")})
				continue
			}
			v = x
		}
		switch {
		case c.field == nil && c.name == "op":
			op := strings.ToLower(cell)
			if op != OpCreate && op != OpUpdate {
				errs = append(errs, FieldError{Field: "op", Message: "must be create or update"})
				continue
			}
			item["op"] = op
		case c.field == nil:
			item[c.name] = cell
		case c.prop == "":
			meta[c.field.Name] = v
		default:
			if props[c.field.Name] == nil {
				props[c.field.Name] = map[string]any{}
			}
			props[c.field.Name][c.prop] = v
		}
	}
	if _, ok := item["op"]; !ok && len(errs) == 0 {
		errs = append(errs, FieldError{Field: "op", Message: "is empty; write create or update"})
	}
	for name, ps := range props {
		obj, ok := meta[name].(map[string]any)
		if _, set := meta[name]; set && !ok {
			errs = append(errs, FieldError{Field: name, Message: "must be a JSON object when " + name + ".* columns are given"})
			continue
		}
		if obj == nil {
			obj = map[string]any{}
		}
		for k, v := range ps {
			obj[k] = v
		}
		meta[name] = obj
	}
	if len(meta) > 0 {
		item["metadata"] = meta
	}
	return item, errs
}
