package model

// The checks of a write that belong to the model, in the order every caller
// runs them: the payload's shape (CheckPayload), then the complete record
// against the model (CheckCreate for a create; Merge for an update, on the
// stored record merged with the payload). Whoever accepts writes (the admin
// API's single and bulk routes, a console, a cluster applier) calls these, so
// the same input fails the same way whichever way it came.

// Write is a payload whose shape was checked.
type Write struct {
	Payload *Payload
	Meta    map[string]any  // the payload's non-null metadata fields
	Nulls   map[string]bool // the payload's null metadata fields ("remove")
}

// CheckPayload checks the shape of obj, the decoded JSON object of one write
// (DecodeObject, or one item of a batch without its own keys such as "id"):
// only "url" and "metadata", of the right JSON types. Errors are
// *ValidationError.
func CheckPayload(obj map[string]any) (*Write, error) {
	pl, fe := payloadFrom(obj, "")
	if len(fe) > 0 {
		return nil, &ValidationError{Errors: fe}
	}
	w := &Write{Payload: pl, Meta: pl.Metadata, Nulls: map[string]bool{}}
	if w.Meta != nil && !hasNull(w.Meta) {
		return w, nil // no null: Meta is the payload's metadata itself
	}
	w.Meta = map[string]any{}
	for k, v := range pl.Metadata {
		if v == nil {
			w.Nulls[k] = true
		} else {
			w.Meta[k] = v
		}
	}
	return w, nil
}

func hasNull(m map[string]any) bool {
	for _, v := range m {
		if v == nil {
			return true
		}
	}
	return false
}

// CheckCreate checks obj as the payload of a new record: its shape, then the
// record it describes against the model. On success the Write's Payload.URL is
// set and Meta is complete.
func (m *Model) CheckCreate(obj map[string]any) (*Write, error) {
	w, err := CheckPayload(obj)
	if err != nil {
		return nil, err
	}
	if fe := m.ValidateRecord(w.Payload.URL, w.Meta, w.Nulls); len(fe) > 0 {
		return nil, &ValidationError{Errors: fe}
	}
	return w, nil
}

// Merge applies w to the stored content before (an RFC 7396 merge patch of
// the metadata; the URL replaced if present) and checks the result against
// the model. It returns the record's new URL and metadata; before is not
// modified.
func (m *Model) Merge(before Content, w *Write) (url string, meta map[string]any, err error) {
	newURL := before.URL
	if w.Payload.URL != nil {
		newURL = w.Payload.URL
	}
	meta = before.Metadata
	if w.Payload.HasMeta {
		meta, _ = MergePatch(before.Metadata, w.Payload.Metadata).(map[string]any)
	}
	if fe := m.ValidateRecord(newURL, meta, w.Nulls); len(fe) > 0 {
		return "", nil, &ValidationError{Errors: fe}
	}
	return *newURL, meta, nil
}
