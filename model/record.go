package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"pidnode/handlev"
	"pidnode/internal/stdjson"
)

// recordTTL is the relative TTL, in seconds, of every value Build writes
// (docs/product.md §3).
const recordTTL = 86400

// Agent is the has_agent object of a change-log entry.
type Agent struct {
	Name         string `json:"name"`
	EmailAddress string `json:"email_address"`
	Role         string `json:"role"`
}

// ChangeEntry is one entry of the change log value (docs/metadata-model.md).
type ChangeEntry struct {
	DatetimeLog  string `json:"datetime_log"`
	HasAgent     Agent  `json:"has_agent"`
	ChangedField string `json:"changed_field"`
	Description  string `json:"description"`
}

// Content is what a record holds in the model's terms: its URL, its metadata
// fields and its change log.
type Content struct {
	URL      *string
	Metadata map[string]any
	Changes  []json.RawMessage
}

// Extract reads the URL, the model's metadata fields and the change log from
// a record's values. Values the model does not know are ignored here (and
// kept by Build). The Content does not share memory with vals.
func (m *Model) Extract(vals []handlev.Value) Content {
	c := Content{Metadata: map[string]any{}}
	for i := range vals {
		v := &vals[i]
		switch {
		case v.Index == m.URL.Index:
			u := string(v.Data)
			c.URL = &u
		case v.Index == m.Changes.Index:
			_ = json.Unmarshal(v.Data, &c.Changes)
		default:
			for _, f := range m.Fields {
				if f.Index != v.Index {
					continue
				}
				if f.Encoding == "json" {
					dec := json.NewDecoder(bytes.NewReader(v.Data))
					dec.UseNumber()
					var x any
					if dec.Decode(&x) == nil {
						c.Metadata[f.Name] = x
					} else {
						c.Metadata[f.Name] = string(v.Data) // legacy text: shown, fails validation on update
					}
				} else {
					c.Metadata[f.Name] = string(v.Data)
				}
			}
		}
	}
	return c
}

// CreatedContent is Extract of the values Build made for a new record from
// url and meta (BuildInput.URL and Metadata of a create) without the change
// log, taken from url and meta instead of decoding the values again: a
// field's stored JSON decodes to its payload value. The Metadata is meta, or
// shares its values. A value that would not come back the same (one DecodeAny
// does not produce, a string that is not UTF-8) makes it fall back to
// Extract.
func (m *Model) CreatedContent(url string, meta map[string]any, vals []handlev.Value) Content {
	n := 0 // the fields meta sets
	for _, f := range m.Fields {
		x, ok := meta[f.Name]
		if !ok || x == nil {
			continue
		}
		if f.Encoding == "json" && !decodedForm(x) {
			return m.Extract(vals)
		}
		n++
	}
	c := Content{URL: &url, Metadata: meta}
	if meta == nil || n != len(meta) {
		// Members that are no field, or null: not in the record.
		c.Metadata = make(map[string]any, n)
		for _, f := range m.Fields {
			if x := meta[f.Name]; x != nil {
				c.Metadata[f.Name] = x
			}
		}
	}
	return c
}

// decodedForm reports whether x is a value as DecodeAny gives them, which
// its canonical JSON (appendCanon) decodes to again.
func decodedForm(x any) bool {
	switch t := x.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(t)
	case json.Number:
		return stdjson.ValidNumber(string(t))
	case []any:
		for _, e := range t {
			if !decodedForm(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range t {
			if !utf8.ValidString(k) || !decodedForm(e) {
				return false
			}
		}
		return true
	}
	return false
}

// BuildInput is what Build needs to write a record.
type BuildInput struct {
	Display     string         // canonical display handle
	AdminHandle string         // <PREFIX>/<svc>/<NS>/ADMIN
	URL         string         // validated
	Metadata    map[string]any // validated, complete
	Old         []handlev.Value
	Agent       Agent
	Now         time.Time
	Create      bool
}

// Build returns the new values of a record (in index order, docs/product.md §3) and the
// change-log entries added. Values whose data did not change keep their
// timestamp; values the model does not manage are kept as they are. A nil
// entries slice means nothing changed.
func (m *Model) Build(in BuildInput) ([]handlev.Value, []ChangeEntry) {
	old := map[int32]*handlev.Value{}
	for i := range in.Old {
		if _, dup := old[in.Old[i].Index]; !dup {
			old[in.Old[i].Index] = &in.Old[i]
		}
	}
	ts := in.Now.Unix()
	stamp := in.Now.UTC().Format(time.RFC3339)
	out := make([]handlev.Value, 0, len(m.Fields)+3+len(in.Old))
	entries := make([]ChangeEntry, 0, len(m.Fields)+1)
	var managed map[int32]bool // the indices Build writes, for keeping the others of in.Old
	if len(in.Old) > 0 {
		managed = map[int32]bool{m.URL.Index: true, m.Changes.Index: true, m.Admin.Index: true}
	}
	// The new values' data are appended to one buffer, each kept as a slice
	// of it whose capacity ends with it: one allocation for most records
	// instead of one or more per value.
	data := make([]byte, 0, 3072)
	keep := func(start int) []byte { return data[start:len(data):len(data)] }

	entry := func(field, desc string) {
		entries = append(entries, ChangeEntry{DatetimeLog: stamp, HasAgent: in.Agent, ChangedField: field, Description: desc})
	}
	put := func(idx int32, typ string, data []byte) {
		if o := old[idx]; o != nil && o.Type == typ && bytes.Equal(o.Data, data) {
			out = append(out, *o)
			return
		}
		out = append(out, handlev.Value{Index: idx, Type: typ, Data: data, TTLType: handlev.TTLRelative,
			TTL: recordTTL, Timestamp: ts, Perm: handlev.PermDefault})
	}
	changed := func(idx int32, data []byte) bool {
		o := old[idx]
		return o == nil || !bytes.Equal(o.Data, data)
	}

	// URL
	data = append(data, in.URL...)
	ud := keep(0)
	if in.Create {
		entry(m.URL.ChangedField, "identifier created with landing page "+truncate(in.URL, 200))
	} else if changed(m.URL.Index, ud) {
		entry(m.URL.ChangedField, "landing page changed to "+truncate(in.URL, 200))
	}
	put(m.URL.Index, m.URL.Type, ud)

	// Metadata fields
	for _, f := range m.Fields {
		if managed != nil {
			managed[f.Index] = true
		}
		x, present := in.Metadata[f.Name]
		if !present || x == nil {
			if o := old[f.Index]; o != nil && !in.Create {
				entry(f.ChangedField, f.Name+" removed")
			}
			continue
		}
		start := len(data)
		data = f.appendData(data, x)
		d := keep(start)
		if in.Create {
			entry(f.ChangedField, f.createdDesc())
		} else if o := old[f.Index]; o == nil {
			entry(f.ChangedField, f.Name+" added")
		} else if !bytes.Equal(o.Data, d) {
			if f.Encoding == "string" && f.Schema.Enum != nil {
				entry(f.ChangedField, fmt.Sprintf("%s changed from %s to %s", f.Name, o.Data, d))
			} else {
				entry(f.ChangedField, f.Name+" changed")
			}
		}
		put(f.Index, f.Type, d)
	}
	if len(entries) == 0 {
		return nil, nil
	}

	// Change log: previous entries + new ones, oldest dropped beyond MaxBytes.
	var log []json.RawMessage
	if o := old[m.Changes.Index]; o != nil {
		log = decodeLog(o.Data)
	}
	start := len(data)
	var cd []byte
	if len(log) == 0 {
		// Only new entries (a create): written as the log at once, none of
		// them is dropped.
		data = append(data, '[')
		for i := range entries {
			if i > 0 {
				data = append(data, ',')
			}
			data = appendChangeEntry(data, &entries[i])
		}
		data = append(data, ']')
		cd = keep(start)
	} else {
		for i := range entries {
			start := len(data)
			data = appendChangeEntry(data, &entries[i])
			log = append(log, json.RawMessage(keep(start)))
		}
		start = len(data)
		data = appendLog(data, log)
		cd = keep(start)
		for len(cd) > m.Changes.MaxBytes && len(log) > len(entries) {
			log = log[1:]
			cd = appendLog(nil, log)
		}
	}
	put(m.Changes.Index, m.Changes.Type, cd)

	// HS_ADMIN
	start = len(data)
	data = handlev.AppendAdmin(data, handlev.Admin{Mask: handlev.AdminAll, Handle: in.AdminHandle, Index: m.Admin.AdminIndex})
	put(m.Admin.Index, handlev.TypeAdmin, keep(start))

	// Values the model does not manage (e.g. of an imported record) stay.
	for i := range in.Old {
		if !managed[in.Old[i].Index] {
			out = append(out, in.Old[i])
		}
	}
	slices.SortStableFunc(out, func(a, b handlev.Value) int { return int(a.Index) - int(b.Index) })
	return out, entries
}

// decodeLog returns the entries of a change log value, none if it is not
// a JSON array.
func decodeLog(data []byte) []json.RawMessage {
	var log []json.RawMessage
	_ = json.Unmarshal(data, &log)
	return log
}

// appendLog appends the change log's JSON array of entries log.
func appendLog(dst []byte, log []json.RawMessage) []byte {
	dst = append(dst, '[')
	for i, e := range log {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e...)
	}
	return append(dst, ']')
}

// appendChangeEntry appends e as compact JSON without HTML escaping, as the
// change log has always been written (a json.Encoder with
// SetEscapeHTML(false), without its newline).
func appendChangeEntry(dst []byte, e *ChangeEntry) []byte {
	dst = append(dst, `{"datetime_log":`...)
	dst = appendJSONString(dst, e.DatetimeLog)
	dst = append(dst, `,"has_agent":{"name":`...)
	dst = appendJSONString(dst, e.HasAgent.Name)
	dst = append(dst, `,"email_address":`...)
	dst = appendJSONString(dst, e.HasAgent.EmailAddress)
	dst = append(dst, `,"role":`...)
	dst = appendJSONString(dst, e.HasAgent.Role)
	dst = append(dst, `},"changed_field":`...)
	dst = appendJSONString(dst, e.ChangedField)
	dst = append(dst, `,"description":`...)
	dst = appendJSONString(dst, e.Description)
	return append(dst, '}')
}
